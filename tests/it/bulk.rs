//! Sweeps of many logs, shards and their merged summary, special files in a walk, and the
//! bench and db diff commands, all through the binary as a user runs them.

use faultline::EmbeddedDatabase;
use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Output};

use faultline::Database;
use faultline::{analyze_input, AnalyzeOptions};
use faultline::{Input, ScanOptions};
use serde_json::Value;

use crate::common::{faultline, stderr, stdout};

fn json_lines(o: &Output) -> Vec<Value> {
    stdout(o)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

/// The failure each generated log ends in: real message formats of the software.
const CAUSES: &[&str] = &[
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 3 has a total capacity of 79.19 GiB of which 1.01 GiB is free.",
    "ModuleNotFoundError: No module named 'flash_attn'",
    "RuntimeError: CUDA error: device-side assert triggered",
    "RuntimeError: The NVIDIA driver on your system is too old (found version 11040). Please update your GPU driver.",
    "Fatal Python error: Segmentation fault",
    "ValueError: the frobnicator refused batch 17",
];

fn log_text(i: usize) -> String {
    let mut s = String::new();
    for k in 0..(5 + i % 17) {
        s.push_str(&format!(
            "(EngineCore_DP0 pid={}) INFO 02-20 21:35:{:02} [core.py:{}] step {k} done\n",
            1000 + i,
            k % 60,
            100 + k
        ));
    }
    s.push_str("Traceback (most recent call last):\n  File \"/srv/run.py\", line 7, in <module>\n    main()\n");
    s.push_str(CAUSES[i % CAUSES.len()]);
    s.push('\n');
    s
}

/// Writes `n` logs under `dir` in ten subdirectories, plain, .gz and .zst in turn; returns
/// the relative path and text of each.
fn generate(dir: &Path, n: usize) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for i in 0..n {
        let text = log_text(i);
        let sub = dir.join(format!("d{}", i % 10));
        std::fs::create_dir_all(&sub).unwrap();
        let (name, bytes) = match i % 3 {
            0 => (format!("log-{i:04}.log"), text.clone().into_bytes()),
            1 => {
                let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
                e.write_all(text.as_bytes()).unwrap();
                (format!("log-{i:04}.log.gz"), e.finish().unwrap())
            }
            _ => (
                format!("log-{i:04}.log.zst"),
                zstd::encode_all(text.as_bytes(), 1).unwrap(),
            ),
        };
        std::fs::write(sub.join(&name), bytes).unwrap();
        out.push((format!("d{}/{name}", i % 10), text));
    }
    out
}

/// A gzip header followed by bytes that are not a deflate stream.
fn corrupt_gzip() -> Vec<u8> {
    let mut bytes = vec![0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3];
    bytes.extend(std::iter::repeat_n(0xff, 64));
    bytes
}

fn expected_first(text: &str) -> (Option<String>, u64) {
    let input = Input::from_bytes(Path::new("x"), text.as_bytes().to_vec());
    let r = analyze_input(
        Database::embedded(),
        input,
        &ScanOptions::default(),
        AnalyzeOptions::default(),
    );
    let first = r.root_cause().expect("every generated log is diagnosed");
    (first.signature.clone(), first.line)
}

#[test]
fn sweep_of_1000_logs_shards_and_summaries() {
    let dir = tempfile::tempdir().unwrap();
    let logs = generate(dir.path(), 999);
    std::fs::write(dir.path().join("d3/corrupt.log.gz"), corrupt_gzip()).unwrap();
    let root = dir.path().to_str().unwrap();
    let expected: BTreeMap<String, (Option<String>, u64)> = logs
        .iter()
        .map(|(rel, text)| (format!("{root}/{rel}"), expected_first(text)))
        .collect();
    let corrupt = format!("{root}/d3/corrupt.log.gz");

    // One JSON line per input, in path order; the corrupt file is reported and the sweep
    // goes on; every other input gets the same diagnosis as a lone scan of its text.
    let o = faultline(&["scan", "--format", "json", root]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(&format!("faultline: {corrupt}: ")),
        "{}",
        stderr(&o)
    );
    assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
    let json_out = o.stdout.clone();
    let reports = json_lines(&o);
    assert_eq!(reports.len(), 1000);
    let inputs: Vec<&str> = reports
        .iter()
        .map(|r| r["input"].as_str().unwrap())
        .collect();
    let mut sorted = inputs.clone();
    sorted.sort_unstable();
    assert_eq!(inputs, sorted, "inputs come out sorted by path");
    for r in &reports {
        let input = r["input"].as_str().unwrap();
        if input == corrupt {
            assert!(r["error"].as_str().unwrap().contains("gzip"), "{r}");
            continue;
        }
        assert!(r["error"].is_null(), "{r}");
        let (sig, line) = &expected[input];
        let first = &r["findings"][0];
        assert_eq!(first["signature"].as_str(), sig.as_deref(), "{input}");
        assert_eq!(first["line"].as_u64(), Some(*line), "{input}");
    }

    // The summary: counts add up to the inputs and match the per-input expectations.
    let o = faultline(&["scan", "--summary", "--format", "json", root]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let unsharded = stdout(&o);
    let s: Value = serde_json::from_str(&unsharded).unwrap();
    assert_eq!(s["inputs"], 1000);
    assert_eq!(s["diagnosed"], 999);
    assert_eq!(
        (&s["clean"], &s["errored"], &s["failed"]),
        (&0.into(), &1.into(), &1.into())
    );
    assert_eq!(s["undiagnosed"].as_array().unwrap().len(), 0);
    assert_eq!(s["errors"][0]["input"].as_str(), Some(corrupt.as_str()));
    let mut want: BTreeMap<String, u64> = BTreeMap::new();
    for (sig, _) in expected.values() {
        *want
            .entry(sig.clone().unwrap_or_else(|| "(unclassified)".into()))
            .or_default() += 1;
    }
    let got: BTreeMap<String, u64> = s["signatures"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["first_findings"].as_u64() > Some(0))
        .map(|r| {
            (
                r["signature"].as_str().unwrap().to_string(),
                r["first_findings"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(got, want);
    assert!(want.len() >= CAUSES.len() - 1, "{want:?}");

    // The same summary from the JSON lines, in every format.
    let jsonl = tempfile::tempdir().unwrap();
    let all = jsonl.path().join("all.jsonl");
    let all = all.to_str().unwrap();
    std::fs::write(all, &json_out).unwrap();
    let o = faultline(&["summary", "--format", "json", all]);
    assert_eq!(stdout(&o), unsharded);
    let o = faultline(&["summary", all]);
    let whole_human = stdout(&o);
    assert!(
        whole_human.starts_with("1000 inputs: 999 diagnosed, 0 clean, 1 errored"),
        "{whole_human}"
    );
    let o = faultline(&["summary", "--format", "csv", all]);
    let csv = stdout(&o);
    assert_eq!(
        csv.lines().filter(|l| l.starts_with("signature,")).count(),
        s["signatures"].as_array().unwrap().len()
    );
    assert!(csv.contains(&format!("error,,,,,,,,{corrupt},")), "{csv}");

    // Two shards: disjoint, together every input, and merged they give the same summary.
    let shard_dir = tempfile::tempdir().unwrap();
    let mut files = Vec::new();
    let mut seen = Vec::new();
    for i in 1..=2 {
        let o = faultline(&[
            "scan",
            "--format",
            "json",
            "--shard",
            &format!("{i}/2"),
            root,
        ]);
        assert!(matches!(o.status.code(), Some(0 | 2)), "{}", stderr(&o));
        let part = json_lines(&o);
        assert!(
            part.len() > 300 && part.len() < 700,
            "shard {i}: {}",
            part.len()
        );
        seen.extend(
            part.iter()
                .map(|r| r["input"].as_str().unwrap().to_string()),
        );
        let file = shard_dir.path().join(format!("shard{i}.jsonl"));
        std::fs::write(&file, &o.stdout).unwrap();
        files.push(file.to_str().unwrap().to_string());
    }
    seen.sort();
    assert_eq!(seen, sorted);
    let o = faultline(&["summary", "--format", "json", &files[1], &files[0]]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert_eq!(stdout(&o), unsharded);
    let merged_human = faultline(&["summary", &files[0], &files[1]]);
    assert_eq!(stdout(&merged_human), whole_human);
}

#[cfg(unix)]
#[test]
fn walk_skips_special_files_marks_binary_and_reports_unreadable() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::create_dir(root.join("sub")).unwrap();
    std::fs::write(root.join("a.log"), log_text(0)).unwrap();
    let mut binary = b"\0\0\0core dump\0\n".to_vec();
    binary.extend_from_slice(log_text(1).as_bytes());
    std::fs::write(root.join("sub/b.log"), binary).unwrap();
    std::fs::write(root.join("sub/notes.txt"), log_text(2)).unwrap();
    std::os::unix::fs::symlink(root, root.join("sub/loop")).unwrap();
    std::os::unix::fs::symlink(root.join("missing"), root.join("sub/dangling.log")).unwrap();
    let fifo = root.join("sub/pipe.log");
    let have_fifo = Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .is_ok_and(|s| s.success());
    let r = root.to_str().unwrap();

    let o = faultline(&["scan", "--format", "json", "-L", "--glob", "*.log", r]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("sub/loop: skipped: symlink loop"), "{err}");
    assert!(err.contains("sub/dangling.log: "), "{err}");
    if have_fifo {
        assert!(err.contains("sub/pipe.log: skipped: a FIFO"), "{err}");
    }
    let reports = json_lines(&o);
    let by_input: BTreeMap<String, &Value> = reports
        .iter()
        .map(|r| (r["input"].as_str().unwrap().to_string(), r))
        .collect();
    let names: Vec<String> = by_input
        .keys()
        .map(|k| k.strip_prefix(r).unwrap().to_string())
        .collect();
    assert_eq!(names, ["/a.log", "/sub/b.log", "/sub/dangling.log"]);
    let b = by_input[&format!("{r}/sub/b.log")];
    assert_eq!(b["binary"], true);
    assert!(!b["findings"].as_array().unwrap().is_empty());
    assert_eq!(by_input[&format!("{r}/a.log")]["binary"], false);
    assert!(by_input[&format!("{r}/sub/dangling.log")]["error"].is_string());

    // Without -L the symlinked directory is reported, not followed; --exclude prunes.
    let o = faultline(&["scan", "--summary", "--exclude", "sub", r]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stdout(&o).starts_with("1 inputs: 1 diagnosed"),
        "{}",
        stdout(&o)
    );
    let o = faultline(&["scan", "--format", "json", "--glob", "*.txt", r]);
    let err = stderr(&o);
    assert!(
        err.contains("sub/loop: skipped: symlink to a directory"),
        "{err}"
    );
    assert_eq!(json_lines(&o).len(), 1);

    let o = faultline(&["scan", "--shard", "3/2", r]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).starts_with("faultline: --shard 3/2"),
        "{}",
        stderr(&o)
    );
    let o = faultline(&["scan", "--format", "csv", r]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--summary"), "{}", stderr(&o));
}

#[test]
fn summary_rejects_lines_that_are_not_reports() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("bad.jsonl");
    std::fs::write(&file, "{\"input\":\"a\",\"findings\":[]}\nnot json\n").unwrap();
    let o = faultline(&["summary", file.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(
        err.starts_with(&format!("faultline: {}:2:", file.display())),
        "{err}"
    );
}

fn version_of(dir: &str) -> String {
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join(dir)
            .join("db.toml"),
    )
    .unwrap();
    let v: toml::Value = toml::from_str(&text).unwrap();
    v["version"].as_str().unwrap().to_string()
}

const OLD: &str = "tests/data/signatures-2026.11.0";

#[test]
fn bench_against_an_older_set_prints_both() {
    let o = faultline(&[
        "bench",
        "--corpus",
        "tests/corpus",
        "--signatures",
        "signatures",
        "--against",
        OLD,
        "--min-time",
        "0",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = stdout(&o);
    let head = text.lines().next().unwrap();
    assert!(head.contains(&version_of("signatures")), "{head}");
    assert!(head.contains(&version_of(OLD)), "{head}");
    assert!(head.trim_end().ends_with("ratio"), "{head}");
    for row in ["throughput", "lines/s", "top-1 accuracy"] {
        let line = text
            .lines()
            .find(|l| l.starts_with(row))
            .unwrap_or_else(|| panic!("no {row} row:\n{text}"));
        assert!(line.trim_end().ends_with('x'), "{line}");
    }

    let o = faultline(&[
        "bench",
        "--corpus",
        "tests/corpus",
        "--against",
        OLD,
        "--min-time",
        "0",
        "--format",
        "json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    // Every sidecar, the whole logs' under tests/corpus/whole/ included.
    let sidecars =
        faultline::tools::load_corpus(&Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus"))
            .unwrap()
            .len() as u64;
    let sets = v["sets"].as_array().unwrap();
    assert_eq!(sets.len(), 2);
    for set in sets {
        let acc = &set["accuracy"];
        // Failing logs are scored top-1, healthy ones for false alarms: together every sidecar.
        assert_eq!(
            acc["cases"]
                .as_u64()
                .zip(acc["healthy"].as_u64())
                .map(|(c, h)| c + h),
            Some(sidecars)
        );
        let per_cat: u64 = acc["categories"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["passed"].as_u64().unwrap())
            .sum();
        assert_eq!(acc["passed"].as_u64(), Some(per_cat));
        assert!(set["bytes_per_second"].as_f64().unwrap() > 0.0);
        let costs = set["costs"].as_array().unwrap();
        assert!(costs
            .iter()
            .all(|c| c["matches"].as_u64() <= c["candidates"].as_u64()));
        assert!(costs.iter().any(|c| c["matches"].as_u64() > Some(0)));
    }
    assert_eq!(
        sets[1]["database"]["version"].as_str(),
        Some(version_of(OLD).as_str())
    );
    assert!(v["ratio"]["bytes_per_second"].as_f64().unwrap() > 0.0);
}

fn ids(dir: &str) -> Vec<String> {
    let o = faultline(&["db", "list", "--format", "json", "--signatures", dir]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    json_lines(&o)
        .iter()
        .map(|v| v["id"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn db_diff_lists_changes_and_changed_diagnoses() {
    let o = faultline(&[
        "db",
        "diff",
        OLD,
        "signatures",
        "--corpus",
        "tests/corpus",
        "--format",
        "json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    let (old, new) = (ids(OLD), ids("signatures"));
    let mut added: Vec<String> = new.iter().filter(|i| !old.contains(i)).cloned().collect();
    added.sort();
    let mut removed: Vec<String> = old.iter().filter(|i| !new.contains(i)).cloned().collect();
    removed.sort();
    let list = |key: &str| -> Vec<String> {
        v["diff"][key]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| {
                x.as_str()
                    .map_or_else(|| x["id"].as_str().unwrap().to_string(), String::from)
            })
            .collect()
    };
    assert_eq!(list("added"), added);
    assert_eq!(list("removed"), removed);
    for c in v["diff"]["changed"].as_array().unwrap() {
        let bumped = c["new_revision"].as_u64() > c["old_revision"].as_u64();
        assert!(bumped || !c["fields"].as_array().unwrap().is_empty(), "{c}");
    }
    let corpus = &v["corpus"];
    let changes = corpus["changes"].as_array().unwrap();
    assert!(!changes.is_empty());
    assert!(changes.len() as u64 <= corpus["inputs"].as_u64().unwrap());
    for c in changes {
        let input = c["input"].as_str().unwrap();
        assert!(
            Path::new(env!("CARGO_MANIFEST_DIR")).join(input).is_file(),
            "{input}"
        );
        assert_ne!(c["old"], c["new"], "{c}");
    }

    let o = faultline(&["db", "diff", OLD, "signatures", "--corpus", "tests/corpus"]);
    let text = stdout(&o);
    assert!(
        text.contains(&format!("added ({}):", added.len())),
        "{text}"
    );
    assert!(
        text.contains(&format!("first finding changed ({} of ", changes.len())),
        "{text}"
    );
}

/// The previous release, frozen when 2027.01 work began.
const PREVIOUS: &str = "tests/data/signatures-2026.12.0";

/// From the previous release to the shipped set, over the corpus: no log whose first finding
/// met its sidecar under the old set fails it under the new one, every change of meaning
/// bumped the revision, and every id that disappeared is listed as retired.
#[test]
fn db_diff_from_the_previous_release_makes_no_diagnosis_worse() {
    let o = faultline(&[
        "db",
        "diff",
        PREVIOUS,
        "signatures",
        "--corpus",
        "tests/corpus",
        "--format",
        "json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_ne!(v["diff"]["old"], v["diff"]["new"], "{}", v["diff"]);
    assert!(
        v["diff"]["old"]
            .as_str()
            .unwrap()
            .ends_with(&version_of(PREVIOUS)),
        "{}",
        v["diff"]["old"]
    );

    let corpus = &v["corpus"];
    let logs =
        faultline::tools::corpus_logs(&Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus"))
            .unwrap()
            .len() as u64;
    assert!(logs > 0);
    assert_eq!(corpus["inputs"].as_u64(), Some(logs), "{corpus}");
    assert_eq!(
        corpus["errors"].as_array().map(Vec::len),
        Some(0),
        "{corpus}"
    );
    let worse: Vec<&Value> = corpus["changes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["old_pass"] == Value::Bool(true) && c["new_pass"] != Value::Bool(true))
        .collect();
    assert!(worse.is_empty(), "diagnoses that got worse: {worse:#?}");

    for c in v["diff"]["changed"].as_array().unwrap() {
        assert_eq!(c["needs_revision_bump"], Value::Bool(false), "{c}");
    }
    for r in v["diff"]["removed"].as_array().unwrap() {
        assert_eq!(r["retired"], Value::Bool(true), "{r}");
    }
}

#[test]
fn bench_against_a_compiled_archive() {
    let dir = tempfile::tempdir().unwrap();
    let archive = dir.path().join("old.fl");
    let archive = archive.to_str().unwrap();
    let o = faultline(&["db", "compile", OLD, "-o", archive]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = faultline(&[
        "bench",
        "--corpus",
        "tests/corpus",
        "--against",
        archive,
        "--min-time",
        "0",
        "--format",
        "json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    let text = v.to_string();
    assert!(text.contains(&version_of(OLD)), "{text}");
}

/// Issue 32: one count, by exit status. Over the corpus (plus an input that errors after its
/// root cause), `scan --summary`, `faultline summary` of the JSON lines and the library's
/// reports put every input in the same bucket, which is its own exit status.
#[test]
fn every_path_counts_each_input_by_its_exit_status() {
    use faultline::{analyze_path, Bucket, Summary, SUMMARY_SCHEMA_VERSION};
    let dir = tempfile::tempdir().unwrap();
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus");
    let mut logs: Vec<_> = std::fs::read_dir(&corpus)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "log"))
        .collect();
    logs.sort();
    for log in &logs {
        std::fs::copy(log, dir.path().join(log.file_name().unwrap())).unwrap();
    }
    std::fs::write(dir.path().join("zz-corrupt.log.gz"), corrupt_gzip()).unwrap();
    let root = dir.path().to_str().unwrap();

    // The library: each input's report, its bucket, and their summary.
    let mut want: BTreeMap<&str, u64> = BTreeMap::new();
    let mut b = Summary::builder();
    let mut buckets = Vec::new();
    let mut paths: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    paths.sort();
    for p in &paths {
        let r = analyze_path(
            Database::embedded(),
            p,
            &ScanOptions::default(),
            AnalyzeOptions::default(),
        );
        *want.entry(r.bucket().as_str()).or_default() += 1;
        buckets.push((p.clone(), r.bucket()));
        b.add(&r);
    }
    let library = b.finish();
    assert_eq!(library.schema_version, SUMMARY_SCHEMA_VERSION);
    let got = |s: &Summary| {
        BTreeMap::from([
            ("clean", s.clean),
            ("diagnosed", s.diagnosed),
            ("errored", s.errored),
        ])
    };
    want.entry("errored").or_default();
    assert_eq!(got(&library), want);
    assert_eq!(library.errored, 1, "{:?}", library.errors);
    let first: u64 = library.signatures.iter().map(|r| r.first_findings).sum();
    assert_eq!(first, library.diagnosed + library.errored_diagnosed);

    // The CLI's summary, and `faultline summary` of its JSON lines: the same summary.
    let o = faultline(&["scan", "--summary", "--format", "json", root]);
    assert_eq!(o.status.code(), Some(2));
    let cli: Summary = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(cli, library);
    let o = faultline(&["scan", "--format", "json", root]);
    let jsonl = dir.path().with_extension("jsonl");
    std::fs::write(&jsonl, &o.stdout).unwrap();
    let o = faultline(&["summary", "--format", "json", jsonl.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    let merged: Summary = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(merged, library);

    // Each input's own exit status is its bucket's (every 7th input, and every errored one).
    for (i, (p, bucket)) in buckets.iter().enumerate() {
        if i % 7 != 0 && *bucket != Bucket::Errored {
            continue;
        }
        let o = faultline(&["scan", p.to_str().unwrap()]);
        assert_eq!(
            o.status.code(),
            Some(i32::from(bucket.exit_status())),
            "{p:?}"
        );
    }
}
