//! The compiled database as a file: same answers as compiling from TOML, and any damage to an
//! archive is a clean one-line error (never a panic), whatever the mutation.
//!
//! The mutation properties run `PROPTEST_CASES` cases (default 64, for debug `cargo test`);
//! CI runs 10,000 in release mode:
//! `PROPTEST_CASES=10000 cargo test --release --test it archive::`.

use faultline::EmbeddedDatabase;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use faultline::embedded_signature_set;
use faultline::SignatureSet;
use faultline::{Database, DbError as Error};
use faultline::{ARCHIVE_FORMAT as FORMAT, ARCHIVE_MAGIC as MAGIC, MAX_DFA_BYTES};
use proptest::prelude::*;

const HEADER: usize = 32;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Every `*.log` under tests/corpus and examples, sorted.
fn logs() -> Vec<PathBuf> {
    let mut out = Vec::new();
    for dir in ["tests/corpus", "examples"] {
        for e in std::fs::read_dir(repo().join(dir)).unwrap() {
            let p = e.unwrap().path();
            if p.extension().is_some_and(|x| x == "log") {
                out.push(p);
            }
        }
    }
    out.sort();
    assert!(out.len() >= 10, "corpus logs: {out:?}");
    out
}

/// The lines of every corpus log plus every signature example and counterexample.
fn lines(set: &SignatureSet) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    for p in logs() {
        let text = std::fs::read(&p).unwrap();
        out.extend(
            text.split(|&b| b == b'\n')
                .map(|l| l.strip_suffix(b"\r").unwrap_or(l).to_vec()),
        );
    }
    for s in &set.signatures {
        for e in s.examples.iter().chain(&s.counterexamples) {
            out.push(e.value.as_bytes().to_vec());
        }
    }
    out
}

/// Asserts that two databases are the same in everything a scan uses and report shows.
fn assert_same(a: &Database, b: &Database, lines: &[Vec<u8>]) {
    assert_eq!(
        (a.name(), a.version(), a.hash()),
        (b.name(), b.version(), b.hash())
    );
    assert_eq!(
        format!("{:?}", a.signatures()),
        format!("{:?}", b.signatures())
    );
    assert_eq!(a.pattern_sources(), b.pattern_sources());
    assert_eq!(a.anchors(), b.anchors());
    assert_eq!(
        a.required_literals().collect::<Vec<_>>(),
        b.required_literals().collect::<Vec<_>>()
    );
    for line in lines {
        let (ma, mb) = (a.match_line(line), b.match_line(line));
        assert_eq!(ma, mb, "{}", String::from_utf8_lossy(line));
        for &s in &ma.signatures {
            assert_eq!(a.captures(s, line), b.captures(s, line));
        }
    }
}

fn full_set() -> &'static SignatureSet {
    static SET: OnceLock<SignatureSet> = OnceLock::new();
    SET.get_or_init(|| embedded_signature_set().unwrap())
}

#[test]
fn archive_confirms_every_line_as_the_compiled_regexes_do() {
    let set = full_set();
    let compiled = Database::compile(set).unwrap();
    let archive = compiled.to_archive(MAX_DFA_BYTES).unwrap();
    assert!(archive.lazy.is_empty(), "{:?}", archive.lazy);
    // Plain patterns (text, `|`, `(?:…)`) are confirmed by their literals, with no DFA.
    assert!(archive.literal > 0 && archive.dfas > 0);
    assert_eq!(
        archive.dfas + archive.literal,
        compiled.pattern_sources().len()
    );
    let loaded = Database::from_archive_bytes(&archive.bytes).unwrap();
    let lines = lines(set);
    assert_same(&compiled, &loaded, &lines);
    assert_same(&compiled, Database::embedded(), &lines);
    loaded.check_examples(set).unwrap();
}

#[test]
fn patterns_over_the_dfa_limit_are_compiled_at_first_use() {
    let set = full_set();
    let compiled = Database::compile(set).unwrap();
    // A limit small enough that many patterns lose their DFA, large enough for the markers.
    let archive = compiled.to_archive(64 << 10).unwrap();
    assert!(!archive.lazy.is_empty());
    assert!(archive.dfas > archive.lazy.len());
    assert_eq!(
        archive.dfas + archive.literal + archive.lazy.len(),
        compiled.pattern_sources().len()
    );
    for (p, reason) in &archive.lazy {
        assert!((*p as usize) < compiled.pattern_sources().len());
        assert!(!reason.to_string().is_empty());
    }
    let loaded = Database::from_archive_bytes(&archive.bytes).unwrap();
    assert_same(&compiled, &loaded, &lines(set));
    loaded.check_examples(set).unwrap();
}

/// Runs the CLI on every corpus log, returning its stdout (JSON lines) and status.
fn scan_json(extra: &[&str]) -> (String, Option<i32>) {
    let out = Command::new(env!("CARGO_BIN_EXE_faultline"))
        .arg("scan")
        .args(["--format", "json", "-j", "1"])
        .args(extra)
        .args(logs())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.is_empty() || out.status.code() != Some(2),
        "{stderr}"
    );
    (String::from_utf8(out.stdout).unwrap(), out.status.code())
}

#[test]
fn embedded_signatures_dir_and_archive_file_give_identical_json() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db.fl");
    let signatures = repo().join("signatures");
    let compile = Command::new(env!("CARGO_BIN_EXE_faultline"))
        .args(["db", "compile"])
        .arg(&signatures)
        .arg("-o")
        .arg(&db)
        .output()
        .unwrap();
    assert_eq!(
        compile.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&compile.stderr)
    );
    let embedded = scan_json(&[]);
    let from_dir = scan_json(&["--signatures", signatures.to_str().unwrap()]);
    let from_file = scan_json(&["--db", db.to_str().unwrap()]);
    assert_eq!(embedded.1, Some(0));
    let n = embedded.0.lines().count();
    assert_eq!(n, logs().len());
    let mut diagnosed = 0;
    for ((e, d), f) in embedded
        .0
        .lines()
        .zip(from_dir.0.lines())
        .zip(from_file.0.lines())
    {
        let v: serde_json::Value = serde_json::from_str(e).unwrap();
        diagnosed += usize::from(!v["findings"].as_array().unwrap().is_empty());
        assert_eq!(e, d);
        assert_eq!(e, f);
    }
    // The comparison means something only if the corpus is mostly diagnosed.
    assert!(
        diagnosed * 4 >= n * 3,
        "{diagnosed} of {n} logs have findings"
    );
    // Listing and exporting read the same metadata and sources from the file.
    for args in [
        &["db", "list", "--format", "json"][..],
        &["db", "export"][..],
    ] {
        let run = |extra: &[&str]| {
            let o = Command::new(env!("CARGO_BIN_EXE_faultline"))
                .args(args)
                .args(extra)
                .output()
                .unwrap();
            assert_eq!(o.status.code(), Some(0), "{args:?} {extra:?}");
            String::from_utf8(o.stdout).unwrap()
        };
        let embedded = run(&[]);
        assert!(embedded.lines().count() > 100, "{args:?}");
        assert_eq!(embedded, run(&["--db", db.to_str().unwrap()]), "{args:?}");
    }
    assert_eq!(
        (embedded.1, embedded.0.len()),
        (from_dir.1, from_dir.0.len())
    );
    assert_eq!(
        (embedded.1, embedded.0.len()),
        (from_file.1, from_file.0.len())
    );
}

fn run_db(db: &Path) -> (Option<i32>, String) {
    let log = repo().join("tests/corpus/vllm-api-port-in-use.log");
    let out = Command::new(env!("CARGO_BIN_EXE_faultline"))
        .arg("scan")
        .arg("--db")
        .arg(db)
        .arg(log)
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn cli_reports_damaged_archives_on_one_line_with_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let bytes = small().bytes.clone();
    let mut older = bytes.clone();
    older[8..12].copy_from_slice(&(FORMAT - 1).to_le_bytes());
    let mut flipped = bytes.clone();
    let mid = HEADER + (bytes.len() - HEADER) / 2;
    flipped[mid] ^= 0x10;
    let cases: Vec<(&str, Vec<u8>, String)> = vec![
        (
            "truncated",
            bytes[..bytes.len() / 3].to_vec(),
            "truncated: the header says".into(),
        ),
        ("flipped", flipped, "content hash mismatch".into()),
        (
            "foreign",
            b"[[signature]]\nid = 1\n".to_vec(),
            "not a faultline database archive".into(),
        ),
        ("empty", Vec::new(), "not a faultline database archive".into()),
        (
            "older",
            older,
            format!(
                "archive format {}, this faultline reads format {FORMAT}; recompile with `faultline db compile`",
                FORMAT - 1
            ),
        ),
    ];
    for (name, content, want) in cases {
        let path = dir.path().join(format!("{name}.fl"));
        std::fs::write(&path, content).unwrap();
        let (code, stderr) = run_db(&path);
        assert_eq!(code, Some(2), "{name}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{name}: {stderr}");
        assert!(
            stderr.starts_with(&format!("faultline: {}: ", path.display())),
            "{name}: {stderr}"
        );
        assert!(stderr.contains(&want), "{name}: {stderr}");
    }
    let (code, stderr) = run_db(&dir.path().join("missing.fl"));
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("missing.fl"), "{stderr}");
}

#[test]
fn open_reads_what_write_archive_wrote() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("small.fl");
    let db = small_db();
    let archive = db.write_archive(&path, MAX_DFA_BYTES).unwrap();
    assert_eq!(std::fs::read(&path).unwrap(), archive.bytes);
    assert!(!dir.path().join("small.fl.tmp").exists());
    let loaded = Database::open(&path).unwrap();
    assert_same(db, &loaded, &lines(small_set()));
}

/// A few signatures of the embedded set: archives small enough to mutate by the thousand.
fn small_set() -> &'static SignatureSet {
    static SET: OnceLock<SignatureSet> = OnceLock::new();
    SET.get_or_init(|| {
        let mut set = full_set().clone();
        let keep = [
            "pytorch.cuda.oom",
            "system.net.address-in-use",
            "python.import.module-not-found",
        ];
        set.signatures
            .retain(|s| keep.contains(&s.info.id.as_str()));
        assert_eq!(set.signatures.len(), keep.len());
        set
    })
}

fn small_db() -> &'static Database {
    static DB: OnceLock<Database> = OnceLock::new();
    DB.get_or_init(|| Database::compile(small_set()).unwrap())
}

fn small() -> &'static faultline::Archive {
    static A: OnceLock<faultline::Archive> = OnceLock::new();
    A.get_or_init(|| small_db().to_archive(MAX_DFA_BYTES).unwrap())
}

/// Lines that exercise the small database (its examples) and the markers.
fn probe_lines() -> &'static [Vec<u8>] {
    static L: OnceLock<Vec<Vec<u8>>> = OnceLock::new();
    L.get_or_init(|| {
        let mut out: Vec<Vec<u8>> = small_set()
            .signatures
            .iter()
            .flat_map(|s| s.examples.iter().chain(&s.counterexamples))
            .map(|e| e.value.as_bytes().to_vec())
            .collect();
        out.push(b"Traceback (most recent call last):".to_vec());
        out.push(b"  File \"x.py\", line 3, in f".to_vec());
        out.push(b"ValueError: bad".to_vec());
        out.push(b"ERROR 12-29 15:21:11 [core.py:708] boom".to_vec());
        out
    })
}

#[derive(Clone, Debug)]
enum Mutation {
    /// Keep only the first `len` bytes (as a fraction of the file, in 1/65536ths).
    Truncate(u16),
    /// XOR bytes at positions (fractions) with nonzero masks.
    Flip(Vec<(u16, u8)>),
    /// Copy `len` bytes from one position over another.
    Splice { from: u16, to: u16, len: u8 },
    /// Insert bytes at a position.
    Insert { at: u16, bytes: Vec<u8> },
    /// Flip one byte of the header (the first 32 bytes).
    Header { at: u8, mask: u8 },
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        any::<u16>().prop_map(Mutation::Truncate),
        prop::collection::vec((any::<u16>(), 1u8..), 1..8).prop_map(Mutation::Flip),
        (any::<u16>(), any::<u16>(), 1u8..).prop_map(|(from, to, len)| Mutation::Splice {
            from,
            to,
            len
        }),
        (any::<u16>(), prop::collection::vec(any::<u8>(), 1..16))
            .prop_map(|(at, bytes)| Mutation::Insert { at, bytes }),
        (0u8..HEADER as u8, 1u8..).prop_map(|(at, mask)| Mutation::Header { at, mask }),
    ]
}

fn at(frac: u16, len: usize) -> usize {
    (frac as usize * len) >> 16
}

/// Applies `m` to `bytes[start..]`.
fn apply(m: &Mutation, bytes: &mut Vec<u8>, start: usize) {
    let n = bytes.len().saturating_sub(start);
    if n == 0 && !matches!(m, Mutation::Insert { .. }) {
        return;
    }
    match m {
        Mutation::Truncate(f) => bytes.truncate(start + at(*f, n)),
        Mutation::Flip(flips) => {
            for &(f, mask) in flips {
                bytes[start + at(f, n)] ^= mask;
            }
        }
        Mutation::Splice { from, to, len } => {
            let (from, to) = (start + at(*from, n), start + at(*to, n));
            let len = (*len as usize)
                .min(bytes.len() - from)
                .min(bytes.len() - to);
            let piece = bytes[from..from + len].to_vec();
            bytes[to..to + len].copy_from_slice(&piece);
        }
        Mutation::Insert { at: f, bytes: ins } => {
            let i = start + at(*f, n);
            bytes.splice(i..i, ins.iter().copied());
        }
        Mutation::Header { at, mask } => {
            if let Some(b) = bytes.get_mut(*at as usize) {
                *b ^= mask;
            }
        }
    }
}

/// A load result is a clean one-line archive error, or the same database.
fn check_clean(result: Result<Database, Error>, original: &[u8], mutated: &[u8]) {
    match result {
        Err(Error::Archive { path, reason }) => {
            let reason = reason.to_string();
            assert_eq!(path, Path::new("<archive>"));
            assert!(!reason.is_empty() && !reason.contains('\n'), "{reason}");
        }
        Err(other) => panic!("not an archive error: {other}"),
        Ok(db) => {
            // Only a mutation that left the hashed payload intact may load: an identical
            // database, whatever happened to the bytes.
            assert_eq!(
                original[HEADER..],
                mutated[HEADER..],
                "a changed payload loaded"
            );
            assert_same(small_db(), &db, probe_lines());
        }
    }
}

/// Rewrites the header's length and hash to fit a mutated payload, so that validation past
/// the hash (bytecheck, indices, DFAs) meets hostile bytes.
fn reseal(bytes: &mut [u8]) {
    if bytes.len() < HEADER {
        return;
    }
    let len = (bytes.len() - HEADER) as u64;
    let hash = xxhash_rust::xxh3::xxh3_64(&bytes[HEADER..]);
    bytes[16..24].copy_from_slice(&len.to_le_bytes());
    bytes[24..32].copy_from_slice(&hash.to_le_bytes());
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|c| c.parse().ok()).unwrap_or(64),
        ..ProptestConfig::default()
    })]

    #[test]
    fn damaged_archives_error_cleanly_or_load_identically(ms in prop::collection::vec(mutation(), 1..4)) {
        let original = &small().bytes;
        let mut bytes = original.clone();
        for m in &ms {
            apply(m, &mut bytes, 0);
            if bytes.is_empty() {
                break;
            }
        }
        check_clean(Database::from_archive_bytes(&bytes), original, &bytes);
    }

    #[test]
    fn resealed_hostile_payloads_error_cleanly_or_scan_without_panic(ms in prop::collection::vec(mutation(), 1..4)) {
        let mut bytes = small().bytes.clone();
        for m in &ms {
            if !matches!(m, Mutation::Header { .. }) && bytes.len() > HEADER {
                apply(m, &mut bytes, HEADER);
            }
        }
        reseal(&mut bytes);
        match Database::from_archive_bytes(&bytes) {
            Err(Error::Archive { reason, .. }) => {
                prop_assert!(!reason.to_string().contains('\n'))
            }
            Err(other) => prop_assert!(false, "not an archive error: {other}"),
            Ok(db) => {
                // Whatever it loaded must be usable: scanning and reporting never panic.
                for line in probe_lines() {
                    let hit = db.match_line(line);
                    for &s in &hit.signatures {
                        prop_assert!((s as usize) < db.signatures().len());
                        let _ = db.captures(s, line);
                    }
                }
            }
        }
    }
}

#[test]
fn magic_and_format_lead_the_file() {
    let bytes = &small().bytes;
    assert_eq!(bytes[..8], MAGIC);
    assert_eq!(bytes[8..12], FORMAT.to_le_bytes());
}

#[test]
fn a_pattern_over_the_dfa_limit_is_named_by_db_check_and_still_matches() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("db.toml"),
        "name = \"t\"\nversion = \"2026.12.0\"\nformat = 1\n",
    )
    .unwrap();
    // The DFA of `[ab]*a[ab]{16}` needs 2^17 states: far over the 1 MiB limit.
    let example = format!("boom {} end", "a".repeat(17));
    std::fs::write(
        dir.path().join("t.toml"),
        format!(
            "[[signature]]\nid = \"test.dfa.blowup\"\nrevision = 1\ntitle = \"t\"\nrole = \"cause\"\nseverity = \"fatal\"\ncategory = \"c\"\npatterns = ['boom [ab]*a[ab]{{16}} end']\nremediation = \"r\"\nsource = \"s\"\nexamples = ['{example}']\ncounterexamples = ['boom b end']\n"
        ),
    )
    .unwrap();
    let faultline = |args: &[&str]| {
        let o = Command::new(env!("CARGO_BIN_EXE_faultline"))
            .args(args)
            .output()
            .unwrap();
        (
            o.status.code(),
            String::from_utf8_lossy(&o.stdout).into_owned(),
        )
    };
    let d = dir.path().to_str().unwrap();
    let (code, out) = faultline(&["db", "check", d]);
    assert_eq!(code, Some(0), "{out}");
    assert!(
        out.contains("0 of 1 patterns confirmed by stored DFAs"),
        "{out}"
    );
    assert!(
        out.contains("test.dfa.blowup: pattern \"boom [ab]*a[ab]{16} end\" has no stored DFA"),
        "{out}"
    );
    let db = dir.path().join("t.fl");
    let log = dir.path().join("x.log");
    std::fs::write(&log, format!("start\n{example}\nboom b end\n")).unwrap();
    let (code, out) = faultline(&["db", "compile", d, "-o", db.to_str().unwrap()]);
    assert_eq!(code, Some(0), "{out}");
    let (code, out) = faultline(&[
        "scan",
        "--format",
        "json",
        "--db",
        db.to_str().unwrap(),
        log.to_str().unwrap(),
    ]);
    assert_eq!(code, Some(0), "{out}");
    let v: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(v["findings"][0]["signature"], "test.dfa.blowup", "{out}");
    assert_eq!(v["findings"][0]["line"], 2, "{out}");
}
