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
    let cases = load_dir(dir.path()).unwrap();
    let names: Vec<&str> = cases.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["b", "sub/a"]);
    assert_eq!(cases[1].log, dir.path().join("sub/a.log.gz"));
    assert_eq!(cases[0].expect.category, "missing-dependency");
    assert!(cases[0].expect.fragment);
    let logs = log_files(dir.path()).unwrap();
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
    let Err(Error::Corpus { problems }) = load_dir(dir.path()) else {
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
    let cases = load_dir(&dir).unwrap();
    assert_eq!(cases.len(), log_files(&dir).unwrap().len());
    assert!(cases.iter().all(|c| !c.expect.category.is_empty()));
}
