//! The command line's output for people and as JSON: the text tables of `bench` and `db
//! diff`, over the one table helper the library's summaries use too ([`table`]).

use std::fmt::Write;

use serde::Serialize;

use faultline::table;
use faultline::{compare_pass_times, SetBench};
use faultline::{FindingChange, FirstFinding, SetDiff};
use faultline::{Role, Severity, SignatureInfo};

/// One line of `db list --format json`: a view of a signature's [`SignatureInfo`] (the one
/// metadata type), without its remediation and survivability. The fields stand in
/// alphabetical order, the key order of this output since it was first written.
#[derive(Serialize)]
struct ListedSignature<'a> {
    category: &'a str,
    id: &'a str,
    priority: i32,
    revision: u32,
    role: Role,
    severity: Severity,
    source: &'a str,
    tags: &'a [String],
    title: &'a str,
}

/// `s` as one line of `db list --format json` (without the newline).
pub fn signature_json(s: &SignatureInfo) -> String {
    let listed = ListedSignature {
        category: &s.category,
        id: &s.id,
        priority: s.priority,
        revision: s.revision,
        role: s.role,
        severity: s.severity,
        source: &s.source,
        tags: &s.tags,
        title: &s.title,
    };
    serde_json::to_string(&listed).expect("a struct of strings and numbers serialises")
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
pub fn bench_labeled(sets: &[SetBench], labels: &[String], all_rows: bool) -> String {
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
pub fn bench_json(sets: &[SetBench]) -> String {
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

fn show(f: &Option<FirstFinding>) -> String {
    match f {
        Some(f) => format!("{} ({}, line {})", f.signature, f.role, f.line),
        None => "no finding".into(),
    }
}

fn verdict(p: Option<bool>) -> &'static str {
    match p {
        Some(true) => "pass",
        Some(false) => "fail",
        None => "?",
    }
}

/// The diff of two signature sets for people.
pub fn set_diff_human(d: &SetDiff) -> String {
    {
        let mut out = format!("{} -> {}\n", d.old, d.new);
        let _ = writeln!(out, "\nadded ({}):", d.added.len());
        for id in &d.added {
            let _ = writeln!(out, "  + {id}");
        }
        let _ = writeln!(out, "\nremoved ({}):", d.removed.len());
        for r in &d.removed {
            let _ = writeln!(
                out,
                "  - {}{}",
                r.id,
                if r.retired {
                    " (retired)"
                } else {
                    "  NOT listed under retired in the new db.toml"
                }
            );
        }
        let _ = writeln!(out, "\nchanged ({}):", d.changed.len());
        for c in &d.changed {
            let _ = writeln!(
                out,
                "  ~ {}  r{} -> r{}  {}{}",
                c.id,
                c.old_revision,
                c.new_revision,
                if c.fields.is_empty() {
                    "(revision only)".to_string()
                } else {
                    c.fields.join(", ")
                },
                if c.needs_revision_bump {
                    "  WITHOUT a revision bump"
                } else {
                    ""
                }
            );
        }
        out
    }
}

/// The corpus part of the diff for people.
pub fn corpus_changes_human(changes: &[FindingChange], inputs: usize, errors: &[String]) -> String {
    let mut out = format!(
        "\nfirst finding changed ({} of {} inputs):\n",
        changes.len(),
        inputs
    );
    for c in changes {
        let _ = write!(out, "  {}: {} -> {}", c.input, show(&c.old), show(&c.new));
        if c.old_pass.is_some() {
            let _ = write!(
                out,
                "  [expected: {} -> {}]",
                verdict(c.old_pass),
                verdict(c.new_pass)
            );
        }
        out.push('\n');
    }
    for e in errors {
        let _ = writeln!(out, "  unreadable: {e}");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use faultline::diff_sets;
    use faultline::{load_sources, SourceFile};
    use faultline::{profile_corpus, BenchOptions, Corpus};
    use faultline::{Database, EmbeddedDatabase};
    use std::path::{Path, PathBuf};
    use std::time::Duration;

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

    #[test]
    fn a_listed_signature_keeps_its_keys_in_alphabetical_order() {
        let info = SignatureInfo {
            id: "v.a.b".into(),
            revision: 3,
            title: "A \"quoted\" title".into(),
            role: Role::Symptom,
            severity: Severity::Warning,
            category: "c".into(),
            tags: vec!["x".into(), "y".into()],
            priority: -2,
            survivable: true,
            remediation: "not listed".into(),
            source: "vendor: f.py".into(),
        };
        assert_eq!(
            signature_json(&info),
            r#"{"category":"c","id":"v.a.b","priority":-2,"revision":3,"role":"symptom","severity":"warning","source":"vendor: f.py","tags":["x","y"],"title":"A \"quoted\" title"}"#
        );
    }

    fn set(retired: &str, sigs: &[(&str, u32, &str)]) -> faultline::SignatureSet {
        let mut text = String::new();
        for (id, rev, pattern) in sigs {
            text.push_str(&format!(
                "[[signature]]\nid = \"{id}\"\nrevision = {rev}\ntitle = \"t\"\nrole = \"cause\"\nseverity = \"error\"\ncategory = \"c\"\npatterns = ['{pattern}']\nremediation = \"r\"\nsource = \"s\"\nexamples = ['{pattern}']\ncounterexamples = ['nothing']\n"
            ));
        }
        load_sources(vec![
            SourceFile {
                path: PathBuf::from("db.toml"),
                text: format!("name = \"d\"\nversion = \"1\"\nformat = 1\nretired = [{retired}]\n"),
            },
            SourceFile {
                path: PathBuf::from("a.toml"),
                text,
            },
        ])
        .unwrap()
    }

    #[test]
    fn set_diff_names_unbumped_changes_and_unlisted_removals() {
        let old = set(
            "",
            &[
                ("a.a.quiet", 1, "quiet one"),
                ("a.a.dropped", 1, "dropped one"),
            ],
        );
        let new = set("", &[("a.a.quiet", 1, "quiet two")]);
        let text = set_diff_human(&diff_sets(&old, &new));
        assert!(
            text.contains("~ a.a.quiet  r1 -> r1  patterns, examples  WITHOUT a revision bump"),
            "{text}"
        );
        assert!(text.contains("- a.a.dropped  NOT listed"), "{text}");
    }
}
