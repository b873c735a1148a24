//! Times loading a compiled database archive (`faultline db compile`), the work `scan --db`
//! does before it reads a byte of log: read, hash, validation, DFAs, prefilter rebuilt.
//!
//! `cargo run --release --example load_db -- ARCHIVE [RUNS]` prints
//! `load_ms median M min N runs R anchors A PREFILTER` (wall milliseconds of
//! `Database::open`; the prefilter's anchor count and kind, `packed` or `general`).
//! `load_db ARCHIVE RUNS LOG` also prints how many of LOG's first 64 MiB of lines are
//! candidates, and the ten anchors that open the most.

use std::process::ExitCode;
use std::time::Instant;

use faultline_db::{Database, PrefilterLayout};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(path) = args.first() else {
        eprintln!("usage: load_db ARCHIVE [RUNS]");
        return ExitCode::from(2);
    };
    let runs: usize = args
        .get(1)
        .and_then(|r| r.parse().ok())
        .unwrap_or(11)
        .max(1);
    let mut ms = Vec::with_capacity(runs);
    let mut prefilter = String::new();
    for _ in 0..runs {
        let t = Instant::now();
        match Database::open(path.as_ref()) {
            Ok(db) => {
                ms.push(t.elapsed().as_secs_f64() * 1e3);
                let (anchors, _) = db.anchors();
                let kind = match db.prefilter_layout() {
                    PrefilterLayout::Split { hashed: None, .. } => "packed",
                    PrefilterLayout::Split {
                        packed_searchers: 0,
                        hashed: Some(_),
                    } => "hashed",
                    PrefilterLayout::Split { .. } => "packed+hashed",
                    PrefilterLayout::General => "general",
                };
                prefilter = format!("anchors {} {kind}", anchors.len());
                drop(db);
            }
            Err(e) => {
                eprintln!("load_db: {e}");
                return ExitCode::from(2);
            }
        }
    }
    ms.sort_by(f64::total_cmp);
    if let Some(log) = args.get(2) {
        if let Err(e) = profile(path.as_ref(), log.as_ref()) {
            eprintln!("load_db: {e}");
            return ExitCode::from(2);
        }
    }
    println!(
        "load_ms median {:.2} min {:.2} runs {runs} {prefilter}",
        ms[runs / 2],
        ms[0]
    );
    ExitCode::SUCCESS
}

/// Candidate lines of the first 64 MiB of `log` under the archive at `path`.
fn profile(
    path: &std::path::Path,
    log: &std::path::Path,
) -> Result<(), Box<dyn std::error::Error>> {
    use std::io::Read;
    let db = Database::open(path)?;
    let mut buf = Vec::new();
    std::fs::File::open(log)?
        .take(64 << 20)
        .read_to_end(&mut buf)?;
    let p = db.candidate_profile(&buf);
    println!("{} of {} lines are candidates", p.candidate_lines, p.lines);
    let mut by_len = std::collections::BTreeMap::new();
    for a in db.anchors().0 {
        *by_len.entry(a.len()).or_insert(0) += 1;
    }
    println!("anchors by length: {by_len:?}");
    let mut rows: Vec<_> = db.anchors().0.iter().zip(&p.per_anchor).collect();
    rows.sort_by(|a, b| b.1.cmp(a.1));
    for (a, n) in rows.into_iter().take(10) {
        println!("{n:>10}  {:?}", String::from_utf8_lossy(a));
    }
    Ok(())
}
