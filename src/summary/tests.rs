use super::*;

fn line(input: &str, err: Option<&str>, findings: &[(&str, &str, u64)]) -> String {
    let findings: Vec<serde_json::Value> = findings
        .iter()
        .map(|(sig, role, count)| {
            serde_json::json!({
                "signature": if *role == "unclassified" { None } else { Some(sig) },
                "role": role, "title": format!("t {sig}"), "category": "c", "count": count,
            })
        })
        .collect();
    serde_json::json!({
        "input": input, "error": err, "binary": false, "bytes": 3, "lines": 1,
        "findings": findings,
        "database": {"name": "d", "version": "1", "hash": "h"},
    })
    .to_string()
}

fn sample() -> Vec<String> {
    vec![
        line("c.log", None, &[("a.x", "cause", 2), ("s.y", "symptom", 1)]),
        line("a.log", None, &[("a.x", "cause", 1)]),
        line("b.log", None, &[("s.y", "symptom", 4)]),
        line("d.log", Some("d.log: gzip stream: corrupt"), &[]),
        line(
            "e.log",
            Some("e.log: at byte offset 9: truncated"),
            &[("", "unclassified", 1)],
        ),
        line("f.log", None, &[]),
    ]
}

#[test]
fn inputs_are_counted_by_their_exit_status_whether_they_ended_early_or_not() {
    let cut = r#"{"input":"a.log","error":"a.log: unexpected end of gzip stream at byte 100","bytes":100,"lines":2,"ended_early":true,"findings":[{"signature":null,"role":"unclassified","title":"x","category":"unclassified","count":1,"tentative":true}]}"#;
    let inside = r#"{"input":"b.log","error":null,"bytes":100,"lines":2,"ended_early":true,"findings":[{"signature":null,"role":"unclassified","title":"x","category":"unclassified","count":1,"survivable":true}]}"#;
    let survived = r#"{"input":"c.log","error":null,"bytes":100,"lines":2,"findings":[{"signature":"x.y","role":"cause","title":"x","category":"c","count":1,"survivable":true}]}"#;
    let failed = r#"{"input":"d.log","error":null,"bytes":100,"lines":2,"ended_early":true,"failed":true,"findings":[{"signature":null,"role":"unclassified","title":"x","category":"unclassified","count":1,"tentative":true}]}"#;
    let mut b = Summary::builder();
    b.add_json_lines(
        "s.jsonl",
        &format!("{cut}\n{inside}\n{survived}\n{failed}\n"),
    )
    .unwrap();
    let s = b.finish();
    // The cut input errored (exit 2) after naming a root cause; the one that ended inside a
    // traceback with a failure is diagnosed (exit 0); the others are clean (exit 1).
    assert_eq!(
        (s.inputs, s.diagnosed, s.clean, s.errored, s.failed),
        (4, 1, 2, 1, 1)
    );
    assert_eq!(s.errored_diagnosed, 1);
    assert_eq!(s.undiagnosed, ["b.log", "c.log"]);
    assert!(s.errors[0].diagnosed);
    assert_eq!(s.bucket(), Bucket::Errored);
    assert_eq!(s.schema_version, SUMMARY_SCHEMA_VERSION);
}

#[test]
fn a_line_without_failed_falls_back_to_the_first_finding() {
    // Written before `failed` existed: the first finding decides.
    let first_fatal = line("a.log", None, &[("a.x", "cause", 1), ("s.y", "symptom", 1)]);
    let first_symptom = line("b.log", None, &[("s.y", "symptom", 1), ("a.x", "cause", 1)]);
    // With `failed`, the report decides.
    let mut v: serde_json::Value = serde_json::from_str(&first_symptom).unwrap();
    v["input"] = "c.log".into();
    v["failed"] = true.into();
    let mut b = Summary::builder();
    let text = [first_fatal, first_symptom, v.to_string()].join("\n");
    b.add_json_lines("old.jsonl", &text).unwrap();
    let s = b.finish();
    assert_eq!((s.diagnosed, s.clean, s.errored), (2, 1, 0));
    assert_eq!(s.undiagnosed, ["b.log"]);
}

#[test]
fn counts_add_up() {
    let mut b = Summary::builder();
    b.add_json_lines("x", &sample().join("\n")).unwrap();
    let s = b.finish();
    assert_eq!(s.inputs, 6);
    assert_eq!(
        (s.diagnosed, s.clean, s.errored, s.errored_diagnosed),
        (2, 2, 2, 1)
    );
    assert_eq!(s.undiagnosed, ["b.log", "f.log"]);
    assert_eq!(s.failed, s.errored);
    assert_eq!(s.diagnosed + s.clean + s.errored, s.inputs, "partition");
    assert_eq!(s.undiagnosed_count(), s.clean);
    let first: u64 = s.signatures.iter().map(|r| r.first_findings).sum();
    assert_eq!(first, s.diagnosed + s.errored_diagnosed);
    let a = &s.signatures[0];
    assert_eq!(
        (
            a.signature.as_str(),
            a.first_findings,
            a.inputs,
            a.hits,
            a.first_input.as_str(),
            a.last_input.as_str()
        ),
        ("a.x", 2, 2, 3, "a.log", "c.log")
    );
    let sy = s.signatures.iter().find(|r| r.signature == "s.y").unwrap();
    assert_eq!((sy.first_findings, sy.hits, sy.inputs), (0, 5, 2));
    assert!(s.signatures.iter().any(|r| r.signature == UNCLASSIFIED));
    assert_eq!(s.errors.len(), 2);
    assert!(s.errors[1].diagnosed);
    assert_eq!(s.databases.len(), 1);
}

#[test]
fn any_split_and_order_gives_the_same_summary() {
    let lines = sample();
    let mut whole = Summary::builder();
    whole.add_json_lines("all", &lines.join("\n")).unwrap();
    let mut split = Summary::builder();
    split
        .add_json_lines("2", &[&lines[3], &lines[0]].map(|s| s.as_str()).join("\n"))
        .unwrap();
    let rest: Vec<&str> = [5, 2, 1, 4].iter().map(|&i| lines[i].as_str()).collect();
    split.add_json_lines("1", &rest.join("\n\n")).unwrap();
    assert_eq!(whole.finish(), split.finish());
}

#[test]
fn bad_json_names_file_and_line() {
    let mut b = Summary::builder();
    let text = format!("{}\n{{\"input\": 3}}\n", sample()[0]);
    let e = b
        .add_json_lines("shard2.jsonl", &text)
        .unwrap_err()
        .to_string();
    assert!(e.starts_with("shard2.jsonl:2:"), "{e}");
}

#[test]
fn csv_and_human_render_every_row() {
    let mut b = Summary::builder();
    b.add_json_lines("x", &sample().join("\n")).unwrap();
    let s = b.finish();
    let csv = s.render_csv();
    let rows: Vec<&str> = csv.lines().collect();
    assert_eq!(rows.len(), 1 + s.signatures.len() + 2 + 2);
    assert!(rows[1].starts_with("signature,a.x,c,2,2,3,a.log,c.log,,"));
    assert!(csv.contains("error,,,,,,,,d.log,d.log: gzip stream: corrupt\n"));
    assert_eq!(csv_field("a,\"b\""), "\"a,\"\"b\"\"\"");
    let human = s.render_human();
    assert!(human
        .starts_with("6 inputs: 2 diagnosed, 2 clean, 2 errored (1 of them with a root cause)"));
    assert!(human.contains("Clean inputs (2):\n  b.log\n  f.log\n"));
    assert!(
        human.contains("\n  d.log: gzip stream: corrupt\n"),
        "{human}"
    );
}

#[test]
fn csv_cells_from_logs_cannot_start_a_formula() {
    let lines = [
        line("=HYPERLINK(\"http://x\").log", None, &[("a.x", "cause", 1)]),
        line("+1.log", Some("@SUM(A1) failed"), &[]),
        line("-2.log", None, &[]),
        line("\tt.log", None, &[]),
        line("\rr.log", None, &[]),
        line("ok-=.log", None, &[]),
    ];
    let mut b = Summary::builder();
    b.add_json_lines("x", &lines.join("\n")).unwrap();
    let csv = b.finish().render_csv();
    for cell in csv.lines().skip(1).flat_map(|l| l.split(',')) {
        let cell = cell.trim_start_matches('"');
        assert!(
            !cell.starts_with(['=', '+', '-', '@', '\t', '\r']),
            "{cell:?} in\n{csv}"
        );
    }
    assert!(csv.contains(",'+1.log,'@SUM(A1) failed\n"), "{csv}");
    assert!(csv.contains(",ok-=.log,"), "{csv}");
    assert!(
        csv.contains("\"'=HYPERLINK(\"\"http://x\"\").log\""),
        "{csv}"
    );
}

/// Issue 30 item 8: totals over reports that claim huge sizes saturate at `u64::MAX` (never
/// wrap in a release build, never panic in an overflow-checked one); so do the hits.
#[test]
fn totals_saturate_instead_of_wrapping() {
    let big = |input: &str| {
        format!(
            r#"{{"input":"{input}","error":null,"bytes":{m},"lines":{m},"findings":[{{"signature":"a.x","role":"cause","title":"t","category":"c","count":{m}}}]}}"#,
            m = u64::MAX
        )
    };
    let mut b = Summary::builder();
    b.add_json_lines(
        "s.jsonl",
        &format!("{}\n{}\n{}\n", big("a.log"), big("b.log"), big("c.log")),
    )
    .unwrap();
    let s = b.finish();
    assert_eq!(s.inputs, 3);
    assert_eq!((s.bytes, s.lines), (u64::MAX, u64::MAX));
    assert_eq!(s.signatures[0].hits, u64::MAX);
}

/// Issue 30 item 4: a UTF-8 file literally named `job\xff.log` and a file whose name holds
/// the byte 0xff (`input_raw` `job\xff.log`) are two inputs, never merged; the shared name is
/// reported as ambiguous.
#[test]
fn a_literal_backslash_name_never_merges_with_a_raw_name() {
    let literal = r#"{"input":"job\\xff.log","error":null,"bytes":3,"lines":1,"findings":[]}"#;
    let raw = r#"{"input":"job\ufffd.log","input_raw":"job\\xff.log","error":null,"bytes":3,"lines":1,"findings":[{"signature":"a.x","role":"cause","title":"t","category":"c","count":1}]}"#;
    for order in [[literal, raw], [raw, literal]] {
        let mut b = Summary::builder();
        b.add_json_lines("s.jsonl", &order.join("\n")).unwrap();
        let s = b.finish();
        assert_eq!((s.inputs, s.diagnosed), (2, 1), "{order:?}");
        assert_eq!(s.undiagnosed, ["job\\xff.log"]);
        assert!(s.repeated.is_empty(), "{:?}", s.repeated);
        assert_eq!(s.ambiguous, ["job\\xff.log"]);
    }
    // The same report twice is still one input, repeated, not ambiguous.
    let mut b = Summary::builder();
    b.add_json_lines("s.jsonl", &[raw, raw, literal, literal].join("\n"))
        .unwrap();
    let s = b.finish();
    assert_eq!(s.inputs, 2);
    assert_eq!(s.repeated.len(), 2);
    assert_eq!(s.ambiguous, ["job\\xff.log"]);
    // No ambiguity, no key in the JSON.
    let mut b = Summary::builder();
    b.add_json_lines("s.jsonl", literal).unwrap();
    assert!(!b.finish().to_json().contains("ambiguous"));
}

/// `finish` is linear in the number of distinct databases (searching the list of databases
/// seen so far for each report, 80k reports take 29.5 s). 100k reports, each made
/// with its own database, under a generous deadline (a quadratic pass is 5e9 comparisons).
#[test]
fn finish_is_linear_in_distinct_databases() {
    let n = 100_000;
    let mut text = String::new();
    for i in 0..n {
        text.push_str(&format!(
            r#"{{"input":"{i}.log","error":null,"bytes":1,"lines":1,"findings":[],"database":{{"name":"d","version":"1","hash":"{i:016x}"}}}}"#
        ));
        text.push('\n');
    }
    let mut b = Summary::builder();
    b.add_json_lines("s.jsonl", &text).unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(b.finish());
    });
    let s = rx
        .recv_timeout(std::time::Duration::from_secs(60))
        .expect("finish over 100k distinct databases took over 60 s: quadratic");
    assert_eq!(s.inputs, n);
    assert_eq!(s.databases.len() as u64, n);
    // In input order ("0.log", "1.log", "10.log", ...), first seen first.
    assert_eq!(s.databases[0].hash, format!("{:016x}", 0));
    assert_eq!(s.databases[2].hash, format!("{:016x}", 10));
}
