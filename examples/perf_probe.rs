//! Runs one piece of the scan over a file, for profilers and the instruction-count guard.
//!
//! `perf_probe MODE FILE` with MODE one of `scan` (the full scan, one thread, hits analysed
//! away), `prefilter` (the prefilter alone, line by line as the scan drives it), `read`
//! (only reading the file, the baseline the other two are measured against) or `profile`
//! (per-anchor candidate counts).

use faultline::EmbeddedDatabase;
use std::process::ExitCode;

use faultline::Database;
use faultline::{scan_slice, ScanOptions};

#[inline(never)]
fn probe_scan(db: &Database, buf: &[u8]) -> u64 {
    let opts = ScanOptions {
        threads: 1,
        ..ScanOptions::default()
    };
    let mut hits = 0u64;
    let stats = scan_slice(db, buf, &opts, &mut |h| hits += h.line & 1);
    hits + stats.lines
}

#[inline(never)]
fn probe_prefilter(db: &Database, buf: &[u8]) -> u64 {
    db.candidate_profile(buf).candidate_lines
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [mode, path] = args.as_slice() else {
        eprintln!("usage: perf_probe scan|prefilter|read|profile FILE");
        return ExitCode::from(2);
    };
    if mode == "compile" {
        // Database compile time of the embedded set (the file argument is ignored).
        let t = std::time::Instant::now();
        let anchors = faultline::embedded_signature_set()
            .and_then(|s| Database::compile(&s))
            .map(|d| d.anchors().0.len());
        eprintln!("compile: {:?}, anchors: {anchors:?}", t.elapsed());
        return ExitCode::SUCCESS;
    }
    let buf = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("perf_probe: {path}: {e}");
            return ExitCode::from(2);
        }
    };
    let db = Database::embedded();
    let out = match mode.as_str() {
        "scan" => probe_scan(db, &buf),
        "prefilter" => probe_prefilter(db, &buf),
        "read" => buf.len() as u64,
        "profile" => {
            let p = db.candidate_profile(&buf);
            let (anchors, _) = db.anchors();
            let mib = p.bytes as f64 / (1 << 20) as f64;
            // A database loaded from an archive has no expected rates: NaN.
            let rates = db.anchor_rates();
            let mut rows: Vec<_> = anchors
                .iter()
                .zip(&p.per_anchor)
                .zip((0..anchors.len()).map(|i| rates.get(i).copied().unwrap_or(f64::NAN)))
                .collect();
            rows.sort_by(|a, b| b.0 .1.cmp(a.0 .1));
            println!("candidate lines, per MiB measured / expected, anchor");
            for ((a, n), r) in rows {
                let per = *n as f64 / mib;
                println!(
                    "{n:>10} {per:>10.2} {r:>10.2}  {:?}",
                    String::from_utf8_lossy(a)
                );
            }
            println!("{} of {} lines are candidates", p.candidate_lines, p.lines);
            p.candidate_lines
        }
        _ => {
            eprintln!("perf_probe: unknown mode {mode:?}");
            return ExitCode::from(2);
        }
    };
    eprintln!("{out}");
    ExitCode::SUCCESS
}
