//! `--baseline GOOD`: findings a good run of the same job printed too rank after the new ones
//! and say so; the baseline never lifts a non-fatal finding above a fatal one nor changes the
//! exit status; bad baselines are errors named before any input is scanned.

use crate::common::{faultline, stderr, stdout};
use faultline::{analyze_input, AnalyzeOptions, Baseline, Database};
use faultline::{EmbeddedDatabase, Input, Report, ScanOptions};
use proptest::prelude::*;
use std::path::Path;
use std::sync::Arc;

fn baseline_of(goods: &[&[u8]]) -> Arc<Baseline> {
    let mut b = Baseline::new(faultline::DEFAULT_BASELINE_MAX_TEMPLATES);
    for (i, good) in goods.iter().enumerate() {
        let input = Input::from_bytes(Path::new(&format!("good{i}.log")), good.to_vec());
        b.add_input(Database::embedded(), input, &ScanOptions::default());
    }
    Arc::new(b)
}

fn report(log: &[u8], baseline: Option<Arc<Baseline>>) -> Report {
    let input = Input::from_bytes(Path::new("t.log"), log.to_vec());
    let opts = AnalyzeOptions {
        baseline,
        ..AnalyzeOptions::default()
    };
    analyze_input(Database::embedded(), input, &ScanOptions::default(), opts)
}

const KNOWN_FATAL: &str = "RuntimeError: CUDA error: an illegal memory access was encountered\n";
const NEW_FATAL: &str = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.19 GiB of which 1.01 GiB is free.\n";

#[test]
fn a_fatal_finding_the_good_run_printed_ranks_after_a_new_one() {
    // The good run printed the illegal-access line (with other numbers) and went on.
    let good = b"INFO 10-10 10:00:00 train.py:1] step 1\nRuntimeError: CUDA error: an illegal memory access was encountered\nINFO 10-10 10:00:09 train.py:1] step 2\n";
    let bad = format!("{KNOWN_FATAL}{NEW_FATAL}");
    let without = report(bad.as_bytes(), None);
    assert!(without.findings[0].text.starts_with("RuntimeError"));
    assert!(without.baseline.is_none());
    assert!(without.findings.iter().all(|f| f.in_baseline.is_none()));
    let with = report(bad.as_bytes(), Some(baseline_of(&[good])));
    assert!(with.failed, "the exit status never changes");
    assert_eq!(
        with.findings[0].signature.as_deref(),
        Some("pytorch.cuda.oom")
    );
    assert_eq!(with.findings[0].in_baseline, Some(false));
    let known = with
        .findings
        .iter()
        .find(|f| f.text.starts_with("RuntimeError"))
        .expect("still listed");
    assert_eq!(known.in_baseline, Some(true));
    assert!(known.why.contains("also in the good run"), "{}", known.why);
    let info = with.baseline.expect("a baseline is reported");
    assert_eq!(info.inputs, ["good0.log"]);
    assert!(info.templates > 0 && info.templates_dropped == 0);
}

#[test]
fn the_baseline_never_lifts_a_non_fatal_finding_nor_leaves_a_failure_without_one() {
    // Every line of the failed run is in the baseline: its cause stays first, still fatal.
    let bad = format!("WARNING 10-10 10:00:00 a.py:1] NCCL_P2P_DISABLE set\n{NEW_FATAL}");
    let r = report(bad.as_bytes(), Some(baseline_of(&[bad.as_bytes()])));
    assert!(r.failed);
    assert_eq!(r.findings[0].signature.as_deref(), Some("pytorch.cuda.oom"));
    assert_eq!(r.findings[0].in_baseline, Some(true));
}

#[test]
fn a_stand_in_the_good_run_printed_gives_way_to_a_new_one() {
    let good = b"ERROR 10-10 10:00:00 a.py:1] quota service answered 503 for job 17\n";
    let bad = b"INFO start\nERROR 10-10 11:00:00 a.py:1] quota service answered 503 for job 99\nERROR 10-10 11:00:01 a.py:1] shard manifest unreadable\nvllm-1 exited with code 1\n";
    let without = report(bad, None);
    assert!(
        without.findings[0].text.contains("quota service"),
        "{:#?}",
        without.findings
    );
    let with = report(bad, Some(baseline_of(&[good])));
    assert!(
        with.findings[0].text.contains("shard manifest"),
        "{:#?}",
        with.findings
    );
    assert_eq!(with.counts.baseline_lines, 1, "{:?}", with.counts);
    assert_eq!(with.counts.unmatched_error_lines, 0, "{:?}", with.counts);
}

/// A token the template masks, drawn two ways.
fn masked_token() -> impl Strategy<Value = (String, String)> {
    prop_oneof![
        (0u64..1_000_000, 0u64..1_000_000).prop_map(|(a, b)| (a.to_string(), b.to_string())),
        (any::<u32>(), any::<u32>()).prop_map(|(a, b)| (format!("0x{a:x}"), format!("0x{b:x}"))),
        (any::<u64>(), any::<u64>())
            .prop_map(|(a, b)| (format!("{:016x}1", a), format!("{:016x}2", b))),
        ("[a-z]{1,8}", "[a-z]{1,8}")
            .prop_map(|(a, b)| (format!("/data/{a}/x.pt"), format!("/tmp/{b}"))),
        (0u32..100, 0u32..100).prop_map(|(a, b)| (format!("{a}.5 GiB"), format!("{b}.25 GiB"))),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// A line that differs from a baseline line only in masked parts is known.
    #[test]
    fn a_line_that_differs_only_in_masked_parts_is_known(
        words in proptest::collection::vec("[A-Za-z]{1,10}", 1..6),
        tokens in proptest::collection::vec(masked_token(), 1..5),
    ) {
        let mut a = String::from("INFO 10-10 10:00:00 x.py:1]");
        let mut b = String::from("INFO 11-11 11:11:11 x.py:1]");
        for (i, (ta, tb)) in tokens.iter().enumerate() {
            let w = &words[i % words.len()];
            a.push_str(&format!(" {w} {ta}"));
            b.push_str(&format!(" {w} {tb}"));
        }
        let mut base = Baseline::new(16);
        base.add_line(a.as_bytes());
        let info = faultline::parse_line(b.as_bytes());
        prop_assert!(base.knows(&info.message), "{a} / {b}");
    }
}

const BANNER: &str = "INFO 10-10 10:23:00 api_server.py:526] vLLM API server version 0.6.1\n";

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// With `--baseline GOOD`, GOOD's lines inserted before the failed log (as an earlier run
    /// after a start-up banner) never change its first finding.
    #[test]
    fn the_good_run_inserted_as_an_earlier_run_never_changes_the_first_finding(
        f in any::<prop::sample::Index>(),
        g in any::<prop::sample::Index>(),
    ) {
        let (healthy, failing) = crate::outcomes::corpus();
        let (case, bad) = &failing[f.index(failing.len())];
        let (_, good) = &healthy[g.index(healthy.len())];
        let baseline = baseline_of(&[good]);
        let alone = report(bad, Some(baseline.clone()));
        let mut joined = BANNER.as_bytes().to_vec();
        joined.extend_from_slice(good);
        if !joined.ends_with(b"\n") {
            joined.push(b'\n');
        }
        joined.extend_from_slice(BANNER.as_bytes());
        joined.extend_from_slice(bad);
        let after = report(&joined, Some(baseline));
        let first = |r: &Report| r.findings.first().map(|f| (f.signature.clone(), f.text.clone()));
        prop_assert_eq!(first(&alone), first(&after), "{}", case.log.display());
    }
}

#[test]
fn cli_reports_the_baseline_and_keeps_the_exit_status() {
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("good.log");
    let bad = dir.path().join("bad.log");
    std::fs::write(&good, "RuntimeError: CUDA error: an illegal memory access was encountered\nINFO 10-10 10:00:09 t.py:1] step 2\n").unwrap();
    std::fs::write(&bad, format!("{KNOWN_FATAL}{NEW_FATAL}")).unwrap();
    let (g, b) = (good.to_str().unwrap(), bad.to_str().unwrap());
    let o = faultline(&["scan", "--baseline", g, b]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("also in the good run"), "{out}");
    assert!(out.find("ROOT CAUSE").unwrap() < out.find("also in the good run").unwrap());
    let o = faultline(&["scan", "--format", "json", "--baseline", g, b]);
    let r: Report = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(r.baseline.unwrap().inputs, [g]);
    let o = faultline(&["scan", "--format", "json", b]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(v["baseline"].is_null(), "{v}");
}

#[test]
fn cli_refuses_a_bad_baseline_before_scanning_and_warns_on_odd_ones() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.log");
    std::fs::write(&bad, NEW_FATAL).unwrap();
    let b = bad.to_str().unwrap();
    let missing = dir.path().join("missing.log");
    let o = faultline(&["scan", "--baseline", missing.to_str().unwrap(), b]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("missing.log"), "{}", stderr(&o));
    assert!(stdout(&o).is_empty(), "nothing scanned: {}", stdout(&o));
    let corrupt = dir.path().join("good.log.gz");
    std::fs::write(
        &corrupt,
        b"\x1f\x8b\x08\x00garbage that is no deflate stream",
    )
    .unwrap();
    let o = faultline(&["scan", "--baseline", corrupt.to_str().unwrap(), b]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("good.log.gz"), "{}", stderr(&o));
    assert!(stderr(&o).contains("byte offset"), "{}", stderr(&o));
    let o = faultline(&["scan", "--baseline", "-", "-"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("standard input"), "{}", stderr(&o));
    let empty = dir.path().join("empty.log");
    std::fs::write(&empty, "").unwrap();
    let o = faultline(&["scan", "--baseline", empty.to_str().unwrap(), b]);
    assert_eq!(o.status.code(), Some(0));
    assert!(stderr(&o).contains("holds 0 templates"), "{}", stderr(&o));
    let o = faultline(&["scan", "--baseline", b, b]);
    assert_eq!(o.status.code(), Some(0));
    assert!(
        stderr(&o).contains("the good run failed (")
            && stderr(&o).contains("used as a baseline all the same"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn the_library_loads_a_baseline_as_the_cli_does() {
    use faultline::{BaselineWarning, Error, Usage};
    use std::path::PathBuf;
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("good.log");
    std::fs::write(
        &good,
        format!("{KNOWN_FATAL}INFO 10-10 10:00:09 t.py:1] step 2\n"),
    )
    .unwrap();
    let ok = dir.path().join("ok.log");
    std::fs::write(
        &ok,
        "INFO 10-10 10:00:00 w.py:1] WARNING: slow disk at /data/a (12 ms)\n",
    )
    .unwrap();
    let db = Database::embedded();
    let scan = ScanOptions::default();
    let max = faultline::DEFAULT_BASELINE_MAX_TEMPLATES;
    // A directory is walked; a good run that failed warns with the CLI's line.
    let loaded = Baseline::load(db, &[dir.path().to_path_buf()], &[], max, &scan).unwrap();
    assert_eq!(loaded.baseline.info().inputs.len(), 2);
    let [BaselineWarning::GoodRunFailed { input, line, .. }] = &loaded.warnings[..] else {
        panic!("{:?}", loaded.warnings);
    };
    assert_eq!((input.as_str(), *line), (good.to_str().unwrap(), 1));
    let o = faultline(&[
        "scan",
        "--baseline",
        good.to_str().unwrap(),
        ok.to_str().unwrap(),
    ]);
    assert_eq!(
        stderr(&o).trim_end(),
        format!("faultline: warning: {}", loaded.warnings[0])
    );
    // Unreadable: an error around the one naming the path, before anything is scanned.
    let missing = dir.path().join("missing.log");
    let err = Baseline::load(db, std::slice::from_ref(&missing), &[], max, &scan).unwrap_err();
    let Error::Baseline(inner) = &err else {
        panic!("{err:?}")
    };
    assert!(
        matches!(&**inner, Error::Io { path, .. } if *path == missing),
        "{inner:?}"
    );
    let o = faultline(&[
        "scan",
        "--baseline",
        missing.to_str().unwrap(),
        ok.to_str().unwrap(),
    ]);
    assert_eq!(stderr(&o).trim_end(), format!("faultline: {err}"));
    // Standard input as a baseline and an input.
    let stdin = [PathBuf::from("-")];
    let err = Baseline::load(db, &stdin, &stdin, max, &scan).unwrap_err();
    assert!(matches!(err, Error::Usage(Usage::StdinTwice)), "{err:?}");
}
