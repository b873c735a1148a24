//! The corpus of real failure logs: the first finding must be the labelled root cause for
//! every log. Prints the top-1 accuracy.

use std::path::{Path, PathBuf};

use faultline::analyze::{analyze_input, AnalyzeOptions};
use faultline::scan::{open, ScanOptions};
use faultline::Database;

#[derive(serde::Deserialize)]
struct Expect {
    root_cause: String,
    category: String,
    signature: Option<String>,
    source: String,
    notes: String,
}

fn cases() -> Vec<(PathBuf, Expect)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus");
    let mut out = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let Some(stem) = name.strip_suffix(".expect.toml") else {
            continue;
        };
        let text = std::fs::read_to_string(&path).unwrap();
        let expect: Expect = toml::from_str(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
        let log = ["log", "log.gz", "log.zst"]
            .iter()
            .map(|ext| dir.join(format!("{stem}.{ext}")))
            .find(|p| p.exists())
            .unwrap_or_else(|| panic!("{name}: no log beside it"));
        out.push((log, expect));
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

#[test]
fn corpus_top1_accuracy_is_100_percent() {
    let db = Database::embedded();
    let cases = cases();
    assert!(cases.len() >= 30, "the corpus holds {} logs", cases.len());
    let mut failures = Vec::new();
    for (log, expect) in &cases {
        assert!(
            !expect.source.is_empty() && !expect.notes.is_empty(),
            "{}: sidecar lacks source or notes",
            log.display()
        );
        let report = analyze_input(
            db,
            open(log).unwrap(),
            &ScanOptions::default(),
            AnalyzeOptions::default(),
        );
        let first = report.findings.first();
        let ok = first.is_some_and(|f| {
            f.text.contains(&expect.root_cause)
                && expect
                    .signature
                    .as_ref()
                    .is_none_or(|s| f.signature.as_ref() == Some(s))
                && matches!(
                    f.role,
                    faultline::report::FindingRole::Cause
                        | faultline::report::FindingRole::Unclassified
                )
        });
        if !ok {
            failures.push(format!(
                "{}: expected {:?} ({}, {:?}), got {:?}",
                log.display(),
                expect.root_cause,
                expect.category,
                expect.signature,
                first.map(|f| (f.role, &f.signature, f.line, &f.text))
            ));
        }
    }
    let passed = cases.len() - failures.len();
    println!(
        "corpus top-1 accuracy: {passed}/{} = {:.1}%",
        cases.len(),
        100.0 * passed as f64 / cases.len() as f64
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn corpus_findings_do_not_depend_on_chunking_or_threads() {
    let db = Database::embedded();
    for (log, _) in cases() {
        let whole = analyze_input(
            db,
            open(&log).unwrap(),
            &ScanOptions {
                threads: 1,
                ..ScanOptions::default()
            },
            AnalyzeOptions::default(),
        );
        let bytes = std::fs::read(&log).unwrap();
        for (threads, chunk, block) in [(2, 64, 7), (3, 1000, 4096)] {
            let opts = ScanOptions {
                threads,
                min_chunk: chunk,
                block_size: block,
                ..ScanOptions::default()
            };
            let sliced = analyze_input(
                db,
                faultline::scan::Input::from_bytes(&log, bytes.clone()),
                &opts,
                AnalyzeOptions::default(),
            );
            assert_eq!(
                whole.findings,
                sliced.findings,
                "{} (chunked)",
                log.display()
            );
            let streamed = analyze_input(
                db,
                faultline::scan::Input::from_reader(
                    &log,
                    Box::new(std::io::Cursor::new(bytes.clone())),
                )
                .unwrap(),
                &opts,
                AnalyzeOptions::default(),
            );
            assert_eq!(
                whole.findings,
                streamed.findings,
                "{} (streamed)",
                log.display()
            );
        }
    }
}
