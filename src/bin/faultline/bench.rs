//! `faultline bench`: a signature set (or two) measured over a corpus, as tables or JSON.

use std::fmt::Write;
use std::time::Duration;

use faultline::table;
use faultline::tools::{compare_pass_times, profile_corpus_sets, BenchOptions, Corpus, SetBench};
use faultline::{load_dir, Database, Error, ScanOptions, Usage};

use crate::args::{database, set_label, BenchArgs, TextOrJson};
use crate::output::{note, out, out_human, sweep_status};

pub fn run_bench(args: BenchArgs) -> Result<u8, Error> {
    let min_time = Duration::try_from_secs_f64(args.min_time)
        .map_err(|e| Error::Usage(Usage::Caller(format!("--min-time {}: {e}", args.min_time))))?;
    let corpus = Corpus::load(&args.corpus)?;
    let mut dbs = vec![database(&args.set)?];
    if let Some(dir) = &args.against {
        let db = if dir.is_file() {
            Database::open(dir)?
        } else {
            Database::compile(&load_dir(dir)?)?
        };
        dbs.push(Box::leak(Box::new(db)));
    }
    let opts = BenchOptions {
        min_time,
        scan: ScanOptions::default(),
    };
    // The sets' timed passes alternate, so that both see the same load.
    let sets: Vec<SetBench> = profile_corpus_sets(&dbs, &corpus, &opts);
    let mut labels = vec![set_label(
        args.set.db.as_deref(),
        args.set.signatures.as_deref(),
        &args.set.add_signatures,
        &args.set.disable,
    )];
    if let Some(against) = &args.against {
        labels.push(against.display().to_string());
    }
    if labels.len() == 2 && labels[0] == labels[1] {
        labels = vec![format!("A: {}", labels[0]), format!("B: {}", labels[1])];
    }
    // The path says which set is which, the database name and version what it holds.
    let labels: Vec<String> = labels
        .iter()
        .zip(&sets)
        .map(|(l, s)| format!("{l} ({} {})", s.database.name, s.database.version))
        .collect();
    let mut reported: Vec<&String> = Vec::new();
    for e in sets.iter().flat_map(|s| &s.errors) {
        if !reported.contains(&e) {
            note(&format!("faultline: {e}"));
            reported.push(e);
        }
    }
    match args.format {
        TextOrJson::Json => out(&(bench_json(&sets) + "\n")),
        TextOrJson::Human => out_human(&bench_labeled(&sets, &labels, args.all_rows)),
    }
    Ok(sweep_status(
        sets.iter().any(|s| !s.errors.is_empty()),
        true,
    ))
}

fn ratio(a: f64, b: f64) -> String {
    if b > 0.0 {
        format!("{:.2}x", a / b)
    } else {
        "-".into()
    }
}

fn pct(passed: u64, cases: u64) -> String {
    if cases == 0 {
        "-".into()
    } else {
        format!(
            "{passed}/{cases} ({:.0}%)",
            100.0 * passed as f64 / cases as f64
        )
    }
}

fn mb(bytes_per_second: f64) -> String {
    format!("{:.1} MB/s", bytes_per_second / 1e6)
}

fn label(b: &SetBench) -> String {
    format!("{} {}", b.database.name, b.database.version)
}

/// Renders one set, or two side by side with the ratio of the first to the second, each
/// headed by its label (e.g. the path it came from). Per-signature rows where no set had a
/// candidate line are left out (and counted) unless `all_rows`. Unreadable logs are not
/// listed (the caller reports `errors`).
fn bench_labeled(sets: &[SetBench], labels: &[String], all_rows: bool) -> String {
    let mut out = String::new();
    let Some(first) = sets.first() else {
        return out;
    };
    let labels: Vec<String> = sets
        .iter()
        .enumerate()
        .map(|(i, s)| labels.get(i).cloned().unwrap_or_else(|| label(s)))
        .collect();
    let two = sets.len() > 1;
    let mut head = vec![String::new()];
    head.extend(labels.iter().cloned());
    if two {
        head.push("ratio".into());
    }
    let mut rows = vec![head];
    let mut row = |name: &str, f: &dyn Fn(&SetBench) -> String, r: Option<(f64, f64)>| {
        let mut v = vec![name.to_string()];
        v.extend(sets.iter().map(f));
        if let (true, Some((a, b))) = (two, r) {
            v.push(ratio(a, b));
        }
        rows.push(v);
    };
    let pair = |f: fn(&SetBench) -> f64| sets.get(1).map(|s| (f(first), f(s)));
    row("signatures", &|s| s.signatures.to_string(), None);
    row(
        "inputs",
        &|s| format!("{} ({} bytes, {} lines)", s.inputs, s.bytes, s.lines),
        None,
    );
    row(
        "throughput",
        &|s| mb(s.bytes_per_second),
        pair(|s| s.bytes_per_second),
    );
    row(
        "lines/s",
        &|s| format!("{:.0}", s.lines_per_second),
        pair(|s| s.lines_per_second),
    );
    row(
        "timed passes",
        &|s| format!("{} in {:.2} s", s.passes, s.seconds),
        None,
    );
    row(
        "pass time",
        &|s| {
            format!(
                "median {:.3} ms, spread {:.1}% (IQR/median)",
                s.median_pass_seconds * 1e3,
                s.spread * 100.0
            )
        },
        pair(|s| s.median_pass_seconds),
    );
    row(
        "candidate lines",
        &|s| s.candidate_lines.to_string(),
        pair(|s| s.candidate_lines as f64),
    );
    row(
        "confirm time",
        &|s| {
            format!(
                "{:.3} ms",
                1e3 * s.costs.iter().map(|c| c.confirm_seconds).sum::<f64>()
            )
        },
        pair(|s| s.costs.iter().map(|c| c.confirm_seconds).sum()),
    );
    row(
        "top-1 accuracy",
        &|s| pct(s.accuracy.passed, s.accuracy.cases),
        pair(|s| s.accuracy.passed as f64),
    );
    if sets.iter().any(|s| s.accuracy.healthy > 0) {
        row(
            "false alarms (healthy logs)",
            &|s| format!("{} of {}", s.accuracy.false_alarms, s.accuracy.healthy),
            pair(|s| s.accuracy.false_alarms as f64),
        );
    }
    let mut categories: Vec<&str> = sets
        .iter()
        .flat_map(|s| s.accuracy.categories.iter().map(|c| c.category.as_str()))
        .collect();
    categories.sort_unstable();
    categories.dedup();
    for cat in categories {
        row(
            &format!("  {cat}"),
            &|s| {
                s.accuracy
                    .categories
                    .iter()
                    .find(|c| c.category == cat)
                    .map_or("-".into(), |c| pct(c.passed, c.cases))
            },
            None,
        );
    }
    out.push_str(&table(&rows, false));
    let _ = writeln!(out, "corpus: {}", first.corpus);
    if two {
        let _ = writeln!(out, "(ratio: {} / {})", labels[0], labels[1]);
        if let [a, b, ..] = sets {
            let v = compare_pass_times(&a.pass_seconds, &b.pass_seconds);
            let _ = writeln!(out, "difference: {}", v.describe("A", "B"));
        }
    }

    out.push_str("\nPer signature (candidates = lines whose literals sent them to confirmation; matches = lines confirmed; charged = candidate lines charged to it, each line once, so they add up to the candidate lines):\n");
    let mut ids: Vec<&str> = sets
        .iter()
        .flat_map(|s| s.costs.iter().map(|c| c.id.as_str()))
        .collect();
    let cost_of = |s: &SetBench, id: &str| s.costs.iter().find(|c| c.id == id).cloned();
    ids.sort_unstable();
    ids.dedup();
    ids.sort_by(|a, b| {
        let t = |id: &str| {
            sets.iter()
                .filter_map(|s| cost_of(s, id))
                .map(|c| c.confirm_seconds)
                .fold(0.0, f64::max)
        };
        t(b).total_cmp(&t(a)).then_with(|| a.cmp(b))
    });
    let mut head = vec!["signature".to_string()];
    for l in &labels {
        head.extend([
            format!("candidates [{l}]"),
            "matches".into(),
            "charged".into(),
            "confirm µs".into(),
        ]);
    }
    let mut rows = vec![head];
    let mut hidden = 0;
    for id in ids {
        let idle = sets.iter().all(|s| {
            cost_of(s, id).is_none_or(|c| c.candidates == 0 && c.matches == 0 && c.charged == 0)
        });
        if idle && !all_rows {
            hidden += 1;
            continue;
        }
        let mut v = vec![id.to_string()];
        for s in sets {
            match cost_of(s, id) {
                Some(c) => v.extend([
                    c.candidates.to_string(),
                    c.matches.to_string(),
                    c.charged.to_string(),
                    format!("{:.1}", c.confirm_seconds * 1e6),
                ]),
                None => v.extend(["-".into(), "-".into(), "-".into(), "-".into()]),
            }
        }
        rows.push(v);
    }
    out.push_str(&table(&rows, true));
    if hidden > 0 {
        let _ = writeln!(
            out,
            "({hidden} signatures without a candidate line on this corpus not shown; --all-rows shows them)"
        );
    }
    for (s, l) in sets.iter().zip(&labels) {
        if !s.accuracy.misses.is_empty() {
            let _ = writeln!(out, "\nMisses of {l} ({}):", s.accuracy.misses.len());
            for m in &s.accuracy.misses {
                let _ = writeln!(out, "  {}: {}", m.case, m.reason);
            }
        }
    }
    out
}

/// The benchmark as one JSON object: `sets` (one or two [`SetBench`]) and, with two sets,
/// `ratio` (first / second) of throughput, lines/s and accuracy, and `verdict` (the
/// [`faultline::Verdict`] on the paired pass times; null for one set).
fn bench_json(sets: &[SetBench]) -> String {
    let v = match sets {
        [a, b] => serde_json::to_value(compare_pass_times(&a.pass_seconds, &b.pass_seconds))
            .unwrap_or(serde_json::Value::Null),
        _ => serde_json::Value::Null,
    };
    let ratio = match sets {
        [a, b] => {
            let r = |x: f64, y: f64| if y > 0.0 { Some(x / y) } else { None };
            serde_json::json!({
                "bytes_per_second": r(a.bytes_per_second, b.bytes_per_second),
                "lines_per_second": r(a.lines_per_second, b.lines_per_second),
                "accuracy": r(a.accuracy.passed as f64, b.accuracy.passed as f64),
            })
        }
        _ => serde_json::Value::Null,
    };
    serde_json::json!({ "sets": sets, "ratio": ratio, "verdict": v }).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use faultline::tools::profile_corpus;
    use faultline::EmbeddedDatabase;
    use std::path::Path;

    #[test]
    fn bench_tables_and_json() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus");
        let c = Corpus::load(&dir).unwrap();
        let opts = BenchOptions {
            min_time: Duration::ZERO,
            ..BenchOptions::default()
        };
        let b = profile_corpus(Database::embedded(), &c, &opts);
        let text = bench_labeled(&[b.clone(), b.clone()], &[], true);
        assert!(text.contains("top-1 accuracy"), "{text}");
        assert!(text.contains("1.00x"), "{text}");
        let v: serde_json::Value = serde_json::from_str(&bench_json(&[b])).unwrap();
        assert_eq!(v["sets"].as_array().unwrap().len(), 1);
    }
}
