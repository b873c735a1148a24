use super::*;
use crate::analyze::{analyze_input, AnalyzeOptions};
use crate::scan::{Input, ScanOptions};
use crate::Database;
use crate::EmbeddedDatabase;

const SIDECAR: &str = "root_cause = \"No module named 'flash_attn'\"\nsignature = \"python.import.module-not-found\"\ncategory = \"missing-dependency\"\nsource = \"test\"\nfragment = true\nnotes = \"n\"\n";

fn report(log: &str) -> Report {
    let input = Input::from_bytes(Path::new("x.log"), log.as_bytes().to_vec());
    analyze_input(
        Database::embedded(),
        input,
        &ScanOptions::default(),
        AnalyzeOptions::default(),
    )
}

fn write(dir: &Path, name: &str, text: &str) {
    std::fs::write(dir.join(name), text).unwrap();
}

fn case(sidecar: &str) -> Result<Case> {
    Case::from_sidecar_text(Path::new("x.log"), Path::new("x.expect.toml"), sidecar)
}

#[test]
fn healthy_logs_decoys_runs_and_survivable_are_checked() {
    let clean = case("expect = \"clean\"\ncategory = \"healthy\"\nsource = \"s\"\n").unwrap();
    assert!(clean
        .check(&report("INFO all fine\nWARNING deprecated flag\n"))
        .is_pass());
    let alarm = clean.check(&report(
        "ModuleNotFoundError: No module named 'flash_attn'\n",
    ));
    assert!(
        matches!(&alarm, Outcome::Fail(r) if r.contains("false alarm")),
        "{alarm}"
    );
    assert!(
        case("expect = \"clean\"\nroot_cause = \"x\"\ncategory = \"c\"\nsource = \"s\"\n").is_err()
    );
    assert!(case("expect = \"broken\"\ncategory = \"c\"\nsource = \"s\"\n").is_err());
    assert!(case("category = \"c\"\nsource = \"s\"\n").is_err());
    let log = "ModuleNotFoundError: No module named 'flash_attn'\n";
    let decoy = case(&format!("{SIDECAR}decoys = [\"flash_attn\"]\n")).unwrap();
    assert!(matches!(decoy.check(&report(log)), Outcome::Fail(r) if r.contains("decoy")));
    let run2 = case(&format!("{SIDECAR}run = 2\n")).unwrap();
    assert!(matches!(run2.check(&report(log)), Outcome::Fail(r) if r.contains("run 2")));
    let surv = case(&format!("{SIDECAR}survivable = true\n")).unwrap();
    assert!(matches!(surv.check(&report(log)), Outcome::Fail(r) if r.contains("survivable")));
    assert!(case(SIDECAR).unwrap().check(&report(log)).is_pass());
}

#[test]
fn loads_pairs_and_ignores_unpaired_logs() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("sub")).unwrap();
    write(dir.path(), "b.log", "x\n");
    write(dir.path(), "b.expect.toml", SIDECAR);
    write(dir.path(), "sub/a.log.gz", "x\n");
    write(dir.path(), "sub/a.expect.toml", SIDECAR);
    write(dir.path(), "lonely.zst", "x\n");
    write(dir.path(), "README.md", "x\n");
    let cases = load_corpus(dir.path()).unwrap();
    let names: Vec<&str> = cases.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["b", "sub/a"]);
    assert_eq!(cases[1].log, dir.path().join("sub/a.log.gz"));
    assert_eq!(cases[0].expect.category, "missing-dependency");
    assert!(cases[0].expect.fragment);
    let logs = corpus_logs(dir.path()).unwrap();
    assert_eq!(logs.len(), 3);
}

#[test]
fn sidecar_problems_name_file_line_and_column() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "a.log", "x\n");
    write(
        dir.path(),
        "a.expect.toml",
        "root_cause = \"x\"\ncategory = \"c\"\nsource = \"s\"\nsignatur = \"typo\"\n",
    );
    write(dir.path(), "b.expect.toml", SIDECAR);
    write(dir.path(), "c.log", "x\n");
    write(
        dir.path(),
        "c.expect.toml",
        "category = \"c\"\nsource = \"s\"\nroot_cause = \"  \"\n",
    );
    let Err(Error::Corpus { problems }) = load_corpus(dir.path()) else {
        panic!("expected corpus problems");
    };
    let lines: Vec<String> = problems.iter().map(|p| p.to_string()).collect();
    assert_eq!(lines.len(), 3, "{lines:?}");
    assert!(lines[0].contains("a.expect.toml:4:1:"), "{lines:?}");
    assert!(lines[0].contains("signatur"), "{lines:?}");
    assert!(lines[1].contains("b.expect.toml:1:1: no log"), "{lines:?}");
    assert!(
        lines[2].contains("c.expect.toml:3:14: root_cause"),
        "{lines:?}"
    );
}

#[test]
fn check_passes_and_fails_with_reasons() {
    let case =
        Case::from_sidecar_text(Path::new("a.log"), Path::new("a.expect.toml"), SIDECAR).unwrap();
    let good = report("INFO starting\nModuleNotFoundError: No module named 'flash_attn'\n");
    assert_eq!(case.check(&good), Outcome::Pass);

    let other = report("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 3 has a total capacity of 79.19 GiB of which 1.01 GiB is free.\n");
    let Outcome::Fail(reason) = case.check(&other) else {
        panic!("an OOM log must not pass a missing-module case");
    };
    assert!(reason.contains("line 1"), "{reason}");
    assert!(reason.contains("flash_attn"), "{reason}");

    let clean = report("all good\n");
    assert!(matches!(case.check(&clean), Outcome::Fail(r) if r.starts_with("no finding")));

    let wrong_id = SIDECAR.replace("python.import.module-not-found", "x.y.z");
    let case =
        Case::from_sidecar_text(Path::new("a.log"), Path::new("a.expect.toml"), &wrong_id).unwrap();
    assert!(
        matches!(case.check(&good), Outcome::Fail(r) if r.starts_with("expected signature x.y.z"))
    );
}

#[test]
fn the_shipped_corpus_loads() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus");
    let cases = load_corpus(&dir).unwrap();
    assert_eq!(cases.len(), corpus_logs(&dir).unwrap().len());
    assert!(cases.iter().all(|c| !c.expect.category.is_empty()));
}

#[test]
fn whole_log_sidecars_state_lines_and_outcomes() {
    let whole = "expect = \"clean\"\ncategory = \"healthy\"\nsource = \"https://github.com/O/R/blob/abc/train.log\"\nwhole = true\nlines = 600\noutcomes = [\"completed\"]\n";
    let c = case(whole).unwrap();
    assert!(c.expect.whole);
    assert_eq!(c.expect.lines, Some(600));
    assert_eq!(c.expect.outcomes, ["completed"]);
    assert_eq!(c.expect.repository().as_deref(), Some("o/r"));
    let problem = |text: &str| match case(text) {
        Err(e) => e.to_string(),
        Ok(_) => panic!("accepted: {text}"),
    };
    assert!(problem(&whole.replace("lines = 600\n", "")).contains("whole = true"));
    assert!(problem(&whole.replace("\"completed\"", "\"finished\"")).contains("not one of"));
    assert!(problem(&whole.replace("\"completed\"", "\"failed\"")).contains("healthy"));
    let failing = whole
        .replace("expect = \"clean\"", "root_cause = \"Killed\"")
        .replace("healthy", "killed");
    assert!(problem(&failing).contains("has at least one"));
    let both = failing.replace("[\"completed\"]", "[\"completed\", \"failed\"]");
    assert_eq!(case(&both).unwrap().expect.outcomes.len(), 2);
}

#[test]
fn composition_counts_whole_logs_by_size_expectation_and_repository() {
    let mk = |name: &str, text: &str| {
        Case::from_sidecar_text(
            Path::new(&format!("{name}.log")),
            Path::new(&format!("{name}.expect.toml")),
            text,
        )
        .unwrap()
    };
    let healthy = |lines: u32, repo: &str| {
        format!("expect = \"clean\"\ncategory = \"healthy\"\nsource = \"https://github.com/{repo}/blob/c/x.log\"\nwhole = true\nlines = {lines}\noutcomes = [\"completed\"]\n")
    };
    let cases = vec![
        mk("a", &healthy(500, "o/one")),
        mk("b", &healthy(3000, "O/One")),
        mk("c", "root_cause = \"Killed\"\ncategory = \"killed\"\nsource = \"https://github.com/o/two/blob/c/y.log\"\nwhole = true\nlines = 499\noutcomes = [\"failed\"]\nbaseline = \"a\"\n"),
        mk("d", SIDECAR),
    ];
    let c = Composition::of(&cases);
    assert_eq!(
        (c.fragments, c.whole, c.whole_500_lines, c.whole_3000_lines),
        (1, 3, 2, 1)
    );
    assert_eq!(
        (
            c.whole_healthy,
            c.whole_failing,
            c.whole_repositories,
            c.whole_pairs
        ),
        (2, 1, 2, 1)
    );
    assert!(c.to_string().contains("3 whole logs"), "{c}");
}
