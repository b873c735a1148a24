use super::*;

fn file(name: &str, text: &str) -> SourceFile {
    SourceFile {
        path: PathBuf::from(name),
        text: text.to_string(),
    }
}

const HEADER: &str = "name = \"t\"\nversion = \"2026.12.0\"\nformat = 1\n";
const HEADER2: &str = "name = \"t\"\nversion = \"2027.01.0\"\nformat = 2\n";

const ONE: &str = r#"
[[signature]]
id = "x.y.z"
revision = 1
title = "t"
role = "cause"
severity = "error"
category = "c"
patterns = ['boom happened']
remediation = "r"
source = "s"
examples = ["boom happened"]
counterexamples = ["no boom"]
"#;

/// `n` signatures in one file, ids `x.y.s<i>` (or the invalid `Xs<i>` when `bad`).
fn many(n: usize, bad: bool) -> String {
    let mut text = String::new();
    for i in 0..n {
        let id = if bad {
            format!("Xs{i}")
        } else {
            format!("x.y.s{i}")
        };
        text.push_str(&ONE.replace("x.y.z", &id));
    }
    text
}

/// Locating every signature of a large file is one pass over it plus a binary search
/// each: 12,000 signatures (2 MB), every one with a located problem, load within a
/// deadline far above that (rescanning from byte 0 per signature takes minutes here in a
/// debug build).
#[test]
fn locating_many_signatures_is_linear() {
    let text = many(12_000, true);
    let start = std::time::Instant::now();
    let err = load_sources(vec![file("db.toml", HEADER), file("a.toml", &text)]).unwrap_err();
    let elapsed = start.elapsed();
    let Error::Signatures { problems } = err else {
        panic!("wrong error")
    };
    assert_eq!(problems.len(), 12_000);
    let last = &problems[11_999];
    let lines = ONE.lines().count();
    assert_eq!(
        (last.location.line, last.location.column),
        (11_999 * lines + 3, 6)
    );
    assert!(
        elapsed < std::time::Duration::from_secs(60),
        "took {elapsed:?}"
    );
}

/// More `[[signature]]` tables than the set may have patterns is refused before the
/// TOML is parsed, at the first table too many; so is a file over the size cap.
#[test]
fn over_limit_sets_are_refused_before_parsing() {
    let max = crate::signature::MAX_PATTERNS;
    // Not valid TOML past the headers: only a check before parsing can name the limit.
    let mut text = String::new();
    for _ in 0..=max {
        text.push_str("[[signature]]\nid = \n");
    }
    let err = load_sources(vec![file("db.toml", HEADER), file("a.toml", &text)]).unwrap_err();
    let msg = err.to_string();
    assert!(
        msg.starts_with(&format!("a.toml:{}:1: signature {}:", 2 * max + 1, max + 1)),
        "{msg}"
    );
    assert!(msg.contains(&format!("at most {max}")), "{msg}");
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("db.toml"), HEADER).unwrap();
    let big = "#".repeat(MAX_SIGNATURE_FILE_BYTES as usize + 1);
    std::fs::write(dir.path().join("big.toml"), &big).unwrap();
    let msg = load_dir(dir.path()).unwrap_err().to_string();
    assert!(
        msg.contains("big.toml:1:1: signature file is over 16 MiB"),
        "{msg}"
    );
}

#[test]
fn loads_a_valid_set() {
    let set = load_sources(vec![file("db.toml", HEADER), file("a.toml", ONE)]).unwrap();
    assert_eq!(set.signatures.len(), 1);
    assert_eq!(set.locate(&set.signatures[0].span).line, 3);
}

#[test]
fn unknown_field_names_line_and_column() {
    let bad = ONE.replace("source = \"s\"", "sauce = \"s\"");
    let err = load_sources(vec![file("db.toml", HEADER), file("a.toml", &bad)]).unwrap_err();
    let Error::Signatures { problems } = err else {
        panic!("wrong error")
    };
    assert_eq!(problems[0].location.file, PathBuf::from("a.toml"));
    assert!(problems[0].message.contains("sauce"), "{}", problems[0]);
}

#[test]
fn duplicate_ids_point_at_both() {
    let err = load_sources(vec![
        file("db.toml", HEADER),
        file("a.toml", ONE),
        file("b.toml", ONE),
    ])
    .unwrap_err();
    let msg = err.to_string();
    assert!(msg.starts_with("b.toml:3:6: duplicate id"), "{msg}");
    assert!(msg.contains("a.toml:3:6"), "{msg}");
}

#[test]
fn bad_role_is_located() {
    let bad = ONE.replace("\"cause\"", "\"culprit\"");
    let err = load_sources(vec![file("db.toml", HEADER), file("a.toml", &bad)]).unwrap_err();
    assert!(err.to_string().starts_with("a.toml:6:"), "{err}");
}

#[test]
fn bad_ids_and_retired_ids_are_rejected() {
    let header = format!("{HEADER}retired = [\"x.y.z\"]\n");
    let err = load_sources(vec![file("db.toml", &header), file("a.toml", ONE)]).unwrap_err();
    assert!(err.to_string().contains("retired"), "{err}");
    let bad = ONE.replace("x.y.z", "Xyz");
    let err = load_sources(vec![file("db.toml", HEADER), file("a.toml", &bad)]).unwrap_err();
    assert!(err.to_string().contains("not of the form"), "{err}");
}

#[test]
fn format_2_requires_survivable_and_format_1_defaults_it() {
    let err = load_sources(vec![file("db.toml", HEADER2), file("a.toml", ONE)]).unwrap_err();
    assert!(err.to_string().contains("survivable must be set"), "{err}");
    let two = ONE.replace("source = \"s\"", "source = \"s\"\nsurvivable = false");
    let set = load_sources(vec![file("db.toml", HEADER2), file("a.toml", &two)]).unwrap();
    assert!(!set.signatures[0].info.survivable);
    let deprecated = |set: &SignatureSet| {
        set.warnings()
            .iter()
            .filter(|w| w.contains("deprecated"))
            .count()
    };
    assert_eq!(deprecated(&set), 0);
    let set = load_sources(vec![file("db.toml", HEADER), file("a.toml", ONE)]).unwrap();
    assert!(
        set.signatures[0].info.survivable,
        "severity error defaults to survivable"
    );
    assert_eq!(deprecated(&set), 1);
    let fatal = ONE.replace("\"error\"", "\"fatal\"");
    let set = load_sources(vec![file("db.toml", HEADER), file("a.toml", &fatal)]).unwrap();
    assert!(!set.signatures[0].info.survivable);
}

#[test]
fn constructed_examples_must_be_examples() {
    let c = ONE.replace(
        "source = \"s\"",
        "source = \"s\"\nconstructed = [\"boom happened\"]",
    );
    let set = load_sources(vec![file("db.toml", HEADER), file("a.toml", &c)]).unwrap();
    assert_eq!(set.constructed_examples(), 1);
    let bad = ONE.replace(
        "source = \"s\"",
        "source = \"s\"\nconstructed = [\"other\"]",
    );
    let err = load_sources(vec![file("db.toml", HEADER), file("a.toml", &bad)]).unwrap_err();
    assert!(err.to_string().contains("not one of the examples"), "{err}");
}

const HEADER3: &str = "name = \"t\"\nversion = \"2027.02.0\"\nformat = 3\n";

const EVIDENCE: &str = r#"
[[signature]]
id = "x.progress.step"
revision = 1
title = "a step"
role = "progress"
category = "progress"
patterns = ['step \d+ done']
source = "s"
examples = ["step 3 done"]
counterexamples = ["step done"]
"#;

#[test]
fn format_3_evidence_needs_no_severity_remediation_or_survivable() {
    let two = ONE.replace("source = \"s\"", "source = \"s\"\nsurvivable = false");
    let set = load_sources(vec![
        file("db.toml", HEADER3),
        file("a.toml", &two),
        file("e.toml", EVIDENCE),
    ])
    .unwrap();
    let e = &set.signatures[1].info;
    assert_eq!(e.role, Role::Progress);
    assert!(e.role.is_evidence() && e.survivable);
    assert!(set.warnings().is_empty(), "{:?}", set.warnings());
    let without = load_sources(vec![file("db.toml", HEADER3), file("a.toml", &two)]).unwrap();
    assert!(
        without.warnings()[0].contains("no evidence signatures"),
        "{:?}",
        without.warnings()
    );
    let err = load_sources(vec![file("db.toml", HEADER2), file("e.toml", EVIDENCE)]).unwrap_err();
    assert!(err.to_string().contains("needs a format 3 set"), "{err}");
    // A cause still needs its severity and remediation in format 3.
    let bare = two.replace("severity = \"error\"\n", "");
    let err = load_sources(vec![file("db.toml", HEADER3), file("a.toml", &bare)]).unwrap_err();
    assert!(
        err.to_string().contains("missing field `severity`"),
        "{err}"
    );
    let ok = two.replace(
        "source = \"s\"",
        "source = \"s\"\nhealthy_ok = \"a retried download\"",
    );
    let set = load_sources(vec![file("db.toml", HEADER3), file("a.toml", &ok)]).unwrap();
    assert_eq!(
        set.signatures[0].healthy_ok.as_deref(),
        Some("a retried download")
    );
    let err = load_sources(vec![file("db.toml", HEADER2), file("a.toml", &ok)]).unwrap_err();
    assert!(
        err.to_string().contains("healthy_ok needs a format 3 set"),
        "{err}"
    );
}

/// The problems a format `header` set of one signature file `text` has (none: it loads).
fn problems_of(header: &str, text: &str) -> Vec<String> {
    match load_sources(vec![file("db.toml", header), file("a.toml", text)]) {
        Ok(_) => Vec::new(),
        Err(crate::Error::Signatures { problems }) => {
            problems.into_iter().map(|p| p.message).collect()
        }
        Err(e) => vec![e.to_string()],
    }
}

/// `anchor = "anywhere"` needs its reason (and a reason needs `anywhere`); `anchor`,
/// `anchor_reason` and `quiet_levels` are format 3; quiet levels are for causes and symptoms.
#[test]
fn anchor_anywhere_needs_a_reason_and_format_3() {
    let two = ONE.replace("source = \"s\"", "source = \"s\"\nsurvivable = false");
    let set = load_sources(vec![file("db.toml", HEADER3), file("a.toml", &two)]).unwrap();
    assert_eq!(set.signatures[0].info.anchor, crate::Anchor::Message);
    assert!(set.signatures[0].info.quiet_levels.is_empty());
    let with = |line: &str| two.replace("source = \"s\"", &format!("source = \"s\"\n{line}"));
    let needs_reason = "anchor = \"anywhere\" needs anchor_reason: why the message is printed inside other text (a match anywhere lets quoted log text, such as a request's prompt, choose the diagnosis)";
    for bare in [
        "anchor = \"anywhere\"",
        "anchor = \"anywhere\"\nanchor_reason = \" \"",
    ] {
        assert_eq!(
            problems_of(HEADER3, &with(bare)),
            vec![needs_reason],
            "{bare}"
        );
    }
    let ok = with(
        "anchor = \"anywhere\"\nanchor_reason = \"a wrapper quotes it\"\nquiet_levels = [\"info\"]",
    );
    let set = load_sources(vec![file("db.toml", HEADER3), file("a.toml", &ok)]).unwrap();
    let sig = &set.signatures[0];
    assert_eq!(sig.info.anchor, crate::Anchor::Anywhere);
    assert_eq!(sig.anchor_reason.as_deref(), Some("a wrapper quotes it"));
    assert_eq!(sig.info.quiet_levels, vec![crate::QuietLevel::Info]);
    assert_eq!(
        problems_of(HEADER2, &ok),
        ["anchor", "anchor_reason", "quiet_levels"].map(|f| format!("{f} needs a format 3 set"))
    );
    assert_eq!(
        problems_of(HEADER3, &with("anchor_reason = \"why\"")),
        vec!["anchor_reason is only for anchor = \"anywhere\""]
    );
    assert_eq!(problems_of(HEADER3, &with("anchor = \"start\"")).len(), 1);
    assert_eq!(
        problems_of(HEADER3, &ok.replace("role = \"cause\"", "role = \"noise\"")),
        vec!["quiet_levels is for causes and symptoms"]
    );
}
