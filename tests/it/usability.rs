//! What a new user trips on (issue 18): inputs that select nothing, summaries of repeated or
//! mixed shards, sizes as people type them, help that matches the code, signature
//! directories that report every missing piece at once.

use std::path::Path;

use crate::common::{faultline, stderr, stdout};

const OOM: &str = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 3 has a total capacity of 79.19 GiB of which 1.01 GiB is free.\n";

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn an_empty_directory_or_a_glob_that_matches_nothing_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let o = faultline(&["scan", s(&empty)]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    // The issue's text, which the Python package, Ray and Spark raise too.
    assert_eq!(
        stderr(&o).trim_end(),
        format!("faultline: no input was selected from {}", s(&empty))
    );
    let missing = dir.path().join("missing");
    let o = faultline(&["scan", s(&missing)]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert_eq!(
        stderr(&o).trim_end(),
        format!(
            "faultline: {}: No such file or directory (os error 2)",
            s(&missing)
        )
    );
    let e = faultline::roots_exist(std::slice::from_ref(&missing)).unwrap_err();
    assert_eq!(stderr(&o).trim_end(), format!("faultline: {e}"));

    let logs = dir.path().join("logs");
    std::fs::create_dir(&logs).unwrap();
    std::fs::write(logs.join("a.txt"), OOM).unwrap();
    let o = faultline(&["scan", "--glob", "*.log", "--exclude", "old", s(&logs)]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(e.contains("no input was selected"), "{e}");
    assert!(
        e.contains(s(&logs)) && e.contains("--glob *.log") && e.contains("--exclude old"),
        "{e}"
    );
    // The same directory with a glob that matches is diagnosed.
    let o = faultline(&["scan", "--glob", "*.txt", s(&logs)]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

#[test]
fn a_shard_that_selects_none_of_the_inputs_found_is_a_note_and_clean() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("only.log"), OOM).unwrap();
    // One input: exactly one of the two shards holds it.
    let mut codes = Vec::new();
    for i in 1..=2 {
        let shard = format!("{i}/2");
        let o = faultline(&["scan", "--shard", &shard, s(dir.path())]);
        codes.push(o.status.code());
        if o.status.code() == Some(1) {
            let e = stderr(&o);
            assert!(
                e.contains(&format!("shard {shard} selected none of the 1 input")),
                "{e}"
            );
        }
    }
    codes.sort();
    assert_eq!(codes, [Some(0), Some(1)]);
}

fn report_line(input: &str, db_hash: &str) -> String {
    serde_json::json!({
        "input": input, "error": null, "binary": false, "bytes": 3, "lines": 1,
        "findings": [{"signature": "pytorch.cuda.oom", "role": "cause", "title": "t",
                      "category": "cuda-oom", "count": 1}],
        "database": {"name": "faultline", "version": "2026.12.0", "hash": db_hash},
    })
    .to_string()
        + "\n"
}

#[test]
fn summary_counts_a_repeated_input_once_and_refuses_mixed_databases() {
    let dir = tempfile::tempdir().unwrap();
    let shard = dir.path().join("shard1.jsonl");
    std::fs::write(
        &shard,
        report_line("a.log", "h1") + &report_line("b.log", "h1"),
    )
    .unwrap();
    let o = faultline(&["summary", "--format", "json", s(&shard), s(&shard)]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["inputs"], 2, "{v}");
    assert_eq!(v["diagnosed"], 2, "{v}");
    let e = stderr(&o);
    assert!(
        e.contains("warning: a.log") && e.contains("counted once"),
        "{e}"
    );

    let other = dir.path().join("shard2.jsonl");
    std::fs::write(&other, report_line("c.log", "h2")).unwrap();
    let o = faultline(&["summary", s(&shard), s(&other)]);
    assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
    let e = stderr(&o);
    assert!(
        e.contains("h1") && e.contains("h2") && e.contains("--allow-mixed-databases"),
        "{e}"
    );
    let o = faultline(&[
        "summary",
        "--allow-mixed-databases",
        "--format",
        "json",
        s(&shard),
        s(&other),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["inputs"], 3);
    assert_eq!(v["databases"].as_array().unwrap().len(), 2);
}

#[test]
fn max_line_bytes_takes_units_and_has_a_minimum() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("a.log");
    std::fs::write(&log, OOM).unwrap();
    for size in ["64M", "64MiB", "8K", "4096"] {
        let o = faultline(&["scan", "--max-line-bytes", size, s(&log)]);
        assert_eq!(o.status.code(), Some(0), "{size}: {}", stderr(&o));
    }
    for size in ["0", "4095", "1K"] {
        let o = faultline(&["scan", "--max-line-bytes", size, s(&log)]);
        assert_eq!(o.status.code(), Some(2), "{size}");
        assert!(stderr(&o).contains("minimum of 4 KiB"), "{}", stderr(&o));
    }
}

#[test]
fn help_states_the_exit_status_and_db_diff_arguments() {
    let o = faultline(&["--help"]);
    let h = stdout(&o);
    assert!(
        h.contains("Exit status") && h.contains("0 ") && h.contains("2 "),
        "{h}"
    );
    let o = faultline(&["scan", "--help"]);
    assert!(stdout(&o).contains("Exit status"), "{}", stdout(&o));
    let o = faultline(&["db", "diff", "--help"]);
    let h = stdout(&o);
    assert!(h.contains("Exit status"), "{h}");
    assert!(h.contains("<OLD>") && h.contains("<NEW>"), "{h}");
    // Each positional argument is described (the walk of every flag is a unit test).
    let args = h.split("Arguments:").nth(1).unwrap_or("");
    let old = args.split("<NEW>").next().unwrap_or("");
    assert!(old.contains("old signature directory"), "{h}");
}

#[test]
fn bench_runs_a_compiled_archive_and_labels_sets_by_path() {
    let dir = tempfile::tempdir().unwrap();
    let corpus = dir.path().join("corpus");
    std::fs::create_dir(&corpus).unwrap();
    std::fs::write(corpus.join("a.log"), OOM).unwrap();
    std::fs::write(corpus.join("bad.log.gz"), b"\x1f\x8b\x08\x00broken").unwrap();
    let archive = dir.path().join("set.fl");
    let o = faultline(&["db", "compile", "-o", s(&archive)]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = faultline(&[
        "bench",
        "--corpus",
        s(&corpus),
        "--min-time",
        "0",
        "--db",
        s(&archive),
        "--against",
        s(&archive),
    ]);
    // The unreadable log: named on stderr, exit 2.
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("bad.log.gz"), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.contains(&format!("A: {}", s(&archive)))
            && out.contains(&format!("B: {}", s(&archive))),
        "{out}"
    );
    // Rows of signatures that cost nothing on this corpus are hidden unless --all-rows.
    let rows = |out: &str| {
        out.lines()
            .skip_while(|l| !l.starts_with("signature "))
            .skip(1)
            .take_while(|l| !l.is_empty())
            .count()
    };
    let few = rows(&out);
    let o = faultline(&[
        "bench",
        "--corpus",
        s(&corpus),
        "--min-time",
        "0",
        "--all-rows",
    ]);
    let all = rows(&stdout(&o));
    assert!(
        few > 0 && all > few * 5,
        "{few} rows, {all} with --all-rows"
    );
}

#[test]
fn a_signature_directory_reports_every_missing_piece_at_once() {
    let dir = tempfile::tempdir().unwrap();
    // No db.toml; one file with a TOML syntax error; one with two signatures missing fields.
    std::fs::write(dir.path().join("broken.toml"), "[[signature]\nid = 1\n").unwrap();
    std::fs::write(
        dir.path().join("vendor.toml"),
        r#"[[signature]]
id = "v.a.one"
revision = 1
title = "t"
role = "cause"
severity = "fatal"
category = "c"
patterns = ['boom happened']
remediation = "r"
examples = ["boom happened"]
counterexamples = ["nothing"]

[[signature]]
id = "v.a.two"
revision = 1
title = "t"
role = "cause"
severity = "fatal"
category = "c"
patterns = ['bang happened']
examples = ["bang happened"]
counterexamples = ["nothing"]
"#,
    )
    .unwrap();
    let e = faultline::load_dir(dir.path()).unwrap_err();
    let faultline::DbError::Signatures { problems } = &e else {
        panic!("{e}")
    };
    let all: Vec<String> = problems.iter().map(|p| p.to_string()).collect();
    let has = |f: &str, m: &str| all.iter().any(|p| p.contains(f) && p.contains(m));
    assert!(has("db.toml", "missing db.toml"), "{all:#?}");
    assert!(has("broken.toml:1:", ""), "{all:#?}");
    assert!(has("vendor.toml:1:", "missing field `source`"), "{all:#?}");
    assert!(has("vendor.toml:13:", "missing field `source`"), "{all:#?}");
    assert!(
        has("vendor.toml:13:", "missing field `remediation`"),
        "{all:#?}"
    );
    // And the binary prints every one of them.
    let o = faultline(&["db", "check", s(dir.path())]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).lines().count() >= all.len(), "{}", stderr(&o));
}

/// Item 7 end to end: a .gz cut after a complete traceback. The decoder fails after some
/// data, so the report says `ended_early`, the unclassified guess from before the cut is
/// `tentative`, and the summary counts the input as failed; the whole file is none of these.
#[test]
fn a_cut_input_is_marked_ended_early_and_its_guess_tentative() {
    use std::io::Write;
    let before: String = (0..100)
        .map(|i| format!("INFO 12-02 13:00:00 step {i} ok\n"))
        .collect::<String>()
        + "ERROR 12-02 13:00:01 [worker.py:88] loader hiccup\n\
           Traceback (most recent call last):\n  File \"/app/load.py\", line 12, in load\n    read()\n\
           ValueError: odd shard header 0x7f\n";
    let after: String = (0..1000)
        .map(|i| format!("INFO 12-02 13:00:02 after {i} filler\n"))
        .collect();
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    enc.write_all(before.as_bytes()).unwrap();
    // A sync flush: every byte of `before` is decodable from the bytes written so far.
    enc.flush().unwrap();
    let cut_at = enc.get_ref().len() + 10;
    enc.write_all(after.as_bytes()).unwrap();
    let whole = enc.finish().unwrap();

    let dir = tempfile::tempdir().unwrap();
    let scan = |name: &str, bytes: &[u8]| {
        let p = dir.path().join(name);
        std::fs::write(&p, bytes).unwrap();
        let o = faultline(&["scan", "--format", "json", s(&p)]);
        let r: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
        (o.status.code(), r, p)
    };
    let (code, r, _) = scan("whole.log.gz", &whole);
    assert_eq!(code, Some(1), "{r}");
    assert!(r["error"].is_null() && r["ended_early"] != true, "{r}");
    assert_eq!(r["findings"][0]["role"], "unclassified", "{r}");
    assert!(r["findings"][0]["tentative"] != true, "{r}");

    let (code, r, cut) = scan("cut.log.gz", &whole[..cut_at]);
    assert_eq!(code, Some(2), "{r}");
    assert_eq!(r["ended_early"], true, "{r}");
    let f = &r["findings"][0];
    assert_eq!(f["role"], "unclassified", "{r}");
    assert!(
        f["text"].as_str().unwrap().contains("odd shard header"),
        "{r}"
    );
    assert_eq!(f["tentative"], true, "{r}");

    let o = faultline(&["scan", "--summary", "--format", "json", s(&cut)]);
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(
        (&v["diagnosed"], &v["failed"]),
        (&0.into(), &1.into()),
        "{v}"
    );
}
