//! From a [`SignatureSet`] to a ready-to-scan [`Database`]: pattern checks, literal
//! extraction, the two-stage matcher, and every example and counterexample run through it.

pub mod anchors;
mod buckets;
pub mod literals;

use std::sync::OnceLock;

pub use crate::database::archive;
pub(crate) use crate::database::matcher::{build_regex, Confirm, Matcher, MARKERS};
pub use crate::database::matcher::{CandidateProfile, LineMatch, Marker, Scratch};
#[doc(hidden)]
pub use crate::database::matcher::{CompiledPattern, Cursor, Owner};
pub use crate::database::{Database, SignatureInfo};

use crate::error::{Error, Problem, Result};
use crate::signature::{Located, SignatureSet};

pub use crate::database::MAX_PATTERNS;
/// Longest pattern accepted, in bytes.
pub const MAX_PATTERN_LEN: usize = 4096;
/// Most heap the compiled regexes of one database may take together, in bytes; each
/// pattern alone is held to the NFA size limit of `build_regex` (4 MiB).
pub const MAX_REGEX_BYTES: usize = 256 << 20;

/// Says why a pattern did not compile, in the signature author's terms.
fn build_error(e: &regex_automata::meta::BuildError) -> String {
    match e.size_limit() {
        Some(limit) => format!(
            "pattern is too large once compiled (over the {} KiB limit): large or nested repetitions such as (a{{1000}}){{1000}} multiply its size; use smaller counts or + and *",
            limit >> 10
        ),
        None => {
            let mut msg = format!("cannot compile: {e}");
            let mut source = std::error::Error::source(e);
            while let Some(s) = source {
                msg.push_str(&format!(": {s}"));
                source = s.source();
            }
            msg
        }
    }
}

fn pattern_problem(set: &SignatureSet, pat: &Located, offset: usize, message: String) -> Problem {
    let mut location = set.locate(&pat.span);
    // Skip the opening quote; the offset is into the pattern text.
    location.column += 1 + pat.value[..offset.min(pat.value.len())].chars().count();
    Problem { location, message }
}

fn placeholders(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(open) = rest.find('{') {
        let after = &rest[open + 1..];
        match after.find('}') {
            Some(close)
                if after[..close]
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'_')
                    && close > 0 =>
            {
                out.push(&after[..close]);
                rest = &after[close + 1..];
            }
            _ => rest = after,
        }
    }
    out
}

/// The database hash: everything a compiled archive's bytes depend on besides the compiler's
/// code. The signature files (by name and text), the built-in markers' patterns, the
/// sample text anchor choice counts frequencies on ([`anchors::SAMPLE`]) and the archive format.
fn content_hash(set: &SignatureSet) -> String {
    let mut files: Vec<_> = set.files.iter().collect();
    files.sort_by(|a, b| a.path.file_name().cmp(&b.path.file_name()));
    let mut h = xxhash_rust::xxh3::Xxh3::new();
    for f in files {
        h.update(
            f.path
                .file_name()
                .map(|n| n.as_encoded_bytes())
                .unwrap_or_default(),
        );
        h.update(&[0]);
        h.update(f.text.as_bytes());
        h.update(&[0]);
    }
    for (_, pattern) in MARKERS {
        h.update(pattern.as_bytes());
        h.update(&[0]);
    }
    h.update(anchors::SAMPLE);
    h.update(&[0]);
    h.update(&archive::FORMAT.to_le_bytes());
    format!("{:016x}", h.digest())
}

impl Database {
    /// Compiles and validates a signature set: every pattern must parse, hold a required
    /// literal of at least 4 bytes and not match the empty string; every example must be
    /// found by the full scan pipeline and no counterexample may match.
    pub fn compile(set: &SignatureSet) -> Result<Database> {
        Database::compile_within(set, MAX_REGEX_BYTES)
    }

    /// [`Database::compile`] with a budget for the compiled regexes' memory.
    fn compile_within(set: &SignatureSet, regex_budget: usize) -> Result<Database> {
        let mut regex_bytes = 0usize;
        let mut problems = Vec::new();
        let total: usize = set.signatures.iter().map(|s| s.patterns.len()).sum();
        if total > MAX_PATTERNS {
            return Err(Error::Limit(format!(
                "the signature set has {total} patterns; at most {MAX_PATTERNS} are allowed"
            )));
        }
        let mut compiled = Vec::with_capacity(total + MARKERS.len());
        let mut required = Vec::with_capacity(total + MARKERS.len());
        let mut pattern_sources = Vec::with_capacity(total);
        let mut signatures = Vec::with_capacity(set.signatures.len());
        for (si, sig) in set.signatures.iter().enumerate() {
            let mut ids = Vec::new();
            let mut names: Vec<String> = Vec::new();
            for pat in &sig.patterns {
                if pat.value.len() > MAX_PATTERN_LEN {
                    problems.push(pattern_problem(
                        set,
                        pat,
                        0,
                        format!(
                            "pattern is {} bytes; at most {MAX_PATTERN_LEN} are allowed",
                            pat.value.len()
                        ),
                    ));
                    continue;
                }
                let hir = match literals::parse(&pat.value) {
                    Ok(h) => h,
                    Err(e) => {
                        let (offset, msg) = match &e {
                            regex_syntax::Error::Parse(p) => {
                                (p.span().start.offset, p.kind().to_string())
                            }
                            regex_syntax::Error::Translate(t) => {
                                (t.span().start.offset, t.kind().to_string())
                            }
                            other => (0, other.to_string()),
                        };
                        problems.push(pattern_problem(
                            set,
                            pat,
                            offset,
                            format!("bad regex: {msg}"),
                        ));
                        continue;
                    }
                };
                if hir.properties().minimum_len() == Some(0) {
                    problems.push(pattern_problem(
                        set,
                        pat,
                        0,
                        "pattern can match the empty string".into(),
                    ));
                    continue;
                }
                let req = match literals::required(&hir) {
                    Some(r) if r.iter().all(|m| m.len() >= literals::MIN_LITERAL) => r,
                    _ => {
                        problems.push(pattern_problem(
                            set,
                            pat,
                            0,
                            format!(
                                "pattern has no required literal of at least {} bytes for the prefilter; add literal text every match must contain",
                                literals::MIN_LITERAL
                            ),
                        ));
                        continue;
                    }
                };
                let regex = match build_regex(&pat.value) {
                    Ok(r) => r,
                    Err(e) => {
                        problems.push(pattern_problem(set, pat, 0, build_error(&e)));
                        continue;
                    }
                };
                regex_bytes += regex.memory_usage();
                if regex_bytes > regex_budget {
                    return Err(Error::Limit(format!(
                        "{}: the compiled patterns take over {} MiB together; at most {} MiB are allowed (split the set or simplify its largest patterns)",
                        set.locate(&pat.span),
                        regex_bytes >> 20,
                        regex_budget >> 20
                    )));
                }
                for name in regex
                    .group_info()
                    .pattern_names(regex_automata::PatternID::ZERO)
                    .flatten()
                {
                    names.push(name.to_string());
                }
                ids.push(compiled.len() as u32);
                pattern_sources.push(pat.value.clone());
                compiled.push(CompiledPattern::new(
                    Owner::Signature(si as u32),
                    Confirm::Regex(regex),
                    &pat.value,
                    &req,
                ));
                required.push(req);
            }
            for p in placeholders(&sig.remediation) {
                if !names.iter().any(|n| n == p) {
                    problems.push(Problem {
                        location: set.locate(&sig.span),
                        message: format!(
                            "remediation uses {{{p}}} but no pattern captures a group named {p:?}"
                        ),
                    });
                }
            }
            signatures.push(SignatureInfo {
                id: sig.id.clone(),
                revision: sig.revision,
                title: sig.title.clone(),
                role: sig.role,
                severity: sig.severity,
                category: sig.category.clone(),
                tags: sig.tags.clone(),
                priority: sig.priority,
                survivable: sig.survivable,
                remediation: sig.remediation.clone(),
                source: sig.source.clone(),
                patterns: ids,
            });
        }
        if !problems.is_empty() {
            return Err(Error::Signatures { problems });
        }
        for &(marker, pat) in MARKERS {
            let hir =
                literals::parse(pat).map_err(|e| Error::Limit(format!("internal marker: {e}")))?;
            let req = literals::required(&hir).unwrap_or_default();
            compiled.push(CompiledPattern::new(
                Owner::Marker(marker),
                Confirm::Regex(
                    build_regex(pat).map_err(|e| Error::Limit(format!("internal marker: {e}")))?,
                ),
                pat,
                &req,
            ));
            required.push(req);
        }
        let members = crate::database::matcher::distinct_members(&required);
        let choice = anchors::choose_anchors(&members);
        let matcher = Matcher::build(compiled, &required, (choice.anchors, choice.per_mib), None)
            .map_err(Error::Limit)?;
        let capture_regexes = (0..pattern_sources.len())
            .map(|_| OnceLock::new())
            .collect();
        let db = Database {
            name: set.info.name.clone(),
            version: set.info.version.clone(),
            hash: content_hash(set),
            signatures,
            pattern_sources,
            matcher,
            capture_regexes,
        };
        db.check_examples(set)?;
        Ok(db)
    }

    /// Runs every example and counterexample of `set` through this database (as compiled
    /// from `set`, or loaded from an archive of it): each example must match its signature
    /// through the full pipeline, no counterexample may match.
    pub fn check_examples(&self, set: &SignatureSet) -> Result<()> {
        let mut problems = Vec::new();
        for (si, sig) in set.signatures.iter().enumerate() {
            let Some(info) = self.signatures.get(si).filter(|i| i.id == sig.id) else {
                problems.push(Problem {
                    location: set.locate(&sig.span),
                    message: format!("signature {} is not in this database", sig.id),
                });
                continue;
            };
            for ex in &sig.examples {
                let hit = self.match_line(ex.value.trim_end_matches(['\n', '\r']).as_bytes());
                if !hit.signatures.contains(&(si as u32)) {
                    problems.push(Problem {
                        location: set.locate(&ex.span),
                        message: format!("example does not match signature {}", sig.id),
                    });
                }
            }
            for cx in &sig.counterexamples {
                let line = cx.value.trim_end_matches(['\n', '\r']).as_bytes();
                if info
                    .patterns
                    .iter()
                    .any(|&p| self.matcher.is_match(p as usize, line))
                {
                    problems.push(Problem {
                        location: set.locate(&cx.span),
                        message: format!("counterexample matches signature {}", sig.id),
                    });
                }
            }
        }
        if problems.is_empty() {
            Ok(())
        } else {
            Err(Error::Signatures { problems })
        }
    }

    /// What the prefilter is expected to cost, measured on a generated healthy serving log
    /// ([`anchors::background`]): the share of lines handed to confirmation, the anchors
    /// seen more than `per_mib` times per MiB, and the patterns whose own required literals
    /// are that common (every line holding one must be confirmed, whatever the anchors).
    pub fn prefilter_load(&self, per_mib: f64) -> PrefilterLoad {
        let sample = anchors::background();
        let profile = self.matcher.candidate_profile(sample);
        let mib = sample.len() as f64 / (1 << 20) as f64;
        let anchors = self
            .matcher
            .anchors()
            .iter()
            .zip(&profile.per_anchor)
            .map(|(a, &n)| (String::from_utf8_lossy(a).into_owned(), n as f64 / mib))
            .filter(|(_, r)| *r > per_mib)
            .collect();
        let members: Vec<(&[u8], &[u32])> = self.matcher.members().collect();
        let mut seen = vec![0u64; members.len()];
        if let Ok(ac) = aho_corasick::AhoCorasick::builder()
            .match_kind(aho_corasick::MatchKind::Standard)
            .build(members.iter().map(|m| m.0))
        {
            for m in ac.find_overlapping_iter(sample) {
                seen[m.pattern().as_usize()] += 1;
            }
        }
        let mut per_pattern = vec![(0.0f64, Vec::<String>::new()); self.matcher.patterns.len()];
        for ((member, patterns), n) in members.iter().zip(seen) {
            // Too short to anchor: such a literal never makes a line a candidate.
            if member.len() < literals::MIN_LITERAL {
                continue;
            }
            for &p in *patterns {
                let slot = &mut per_pattern[p as usize];
                slot.0 += n as f64 / mib;
                slot.1.push(String::from_utf8_lossy(member).into_owned());
            }
        }
        let mut common = Vec::new();
        for (p, (rate, literals)) in per_pattern.into_iter().enumerate() {
            if rate <= per_mib {
                continue;
            }
            let owner = match self.matcher.patterns[p].owner {
                Owner::Signature(s) => self.signatures[s as usize].id.clone(),
                Owner::Marker(m) => format!("(marker {m:?})"),
            };
            common.push(CommonLiteral {
                owner,
                literals,
                per_mib: rate,
            });
        }
        common.sort_by(|a, b| b.per_mib.total_cmp(&a.per_mib).then(a.owner.cmp(&b.owner)));
        PrefilterLoad {
            candidate_lines_per_mib: profile.candidate_lines as f64 / mib,
            candidate_line_share: profile.candidate_lines as f64 / profile.lines.max(1) as f64,
            anchors,
            common,
        }
    }
}

/// The prefilter's expected load, from [`Database::prefilter_load`].
#[derive(Clone, Debug)]
pub struct PrefilterLoad {
    /// Candidate lines per MiB of the generated healthy serving log.
    pub candidate_lines_per_mib: f64,
    /// The share of that log's lines that are candidates.
    pub candidate_line_share: f64,
    /// Anchors seen more often than the threshold, with their rate per MiB: common text the
    /// compiler accepted to keep the packed searcher within its 64 literals.
    pub anchors: Vec<(String, f64)>,
    /// Patterns whose required literals are common, most expensive first.
    pub common: Vec<CommonLiteral>,
}

/// A pattern whose only literals are common in ordinary log text.
#[derive(Clone, Debug)]
pub struct CommonLiteral {
    /// The signature id, or `(marker NAME)` for a structural marker.
    pub owner: String,
    /// Its required literals (any one of them may be on a matching line).
    pub literals: Vec<String>,
    /// Their occurrences per MiB of ordinary serving log, summed.
    pub per_mib: f64,
}

/// A pattern with its capture groups' names dropped (`(?P<gpu>\d+)` becomes `(\d+)`), the
/// matching unchanged: tools that join many patterns into one regex (`rg -f`) reject a name
/// used twice. A pattern that does not parse is returned as it is.
///
/// ```
/// assert_eq!(faultline_db::compile::unnamed(r"GPU (?P<gpu>\d+) (?<x>a)"), r"GPU (\d+) (a)");
/// ```
pub fn unnamed(pattern: &str) -> String {
    use regex_syntax::ast::{self, Ast, GroupKind};
    struct Names(Vec<(usize, usize)>);
    impl ast::Visitor for Names {
        type Output = Vec<(usize, usize)>;
        type Err = ();
        fn finish(self) -> Result<Self::Output, ()> {
            Ok(self.0)
        }
        fn visit_pre(&mut self, ast: &Ast) -> Result<(), ()> {
            if let Ast::Group(g) = ast {
                if let GroupKind::CaptureName { name, .. } = &g.kind {
                    // From just after `(` through the `>` that closes the name.
                    self.0
                        .push((g.span.start.offset + 1, name.span.end.offset + 1));
                }
            }
            Ok(())
        }
    }
    let Ok(ast) = ast::parse::Parser::new().parse(pattern) else {
        return pattern.to_string();
    };
    let Ok(mut names) = ast::visit(&ast, Names(Vec::new())) else {
        return pattern.to_string();
    };
    names.sort_unstable();
    let mut out = String::with_capacity(pattern.len());
    let mut at = 0;
    for (start, end) in names {
        if start < at || end > pattern.len() {
            return pattern.to_string();
        }
        out.push_str(&pattern[at..start]);
        at = end;
    }
    out.push_str(&pattern[at..]);
    out
}

/// Longest capture text put into a remediation; the rest is counted.
pub const MAX_CAPTURE_IN_REMEDIATION: usize = 256;

/// The word shown for a placeholder whose capture did not match (an optional group).
pub const MISSING_CAPTURE: &str = "(not captured)";

/// Fills the `{name}` placeholders of `text` from `captures` in one pass over `text`: the
/// inserted values are never scanned again (a capture holding `{other}` stays as written),
/// each is cut at [`MAX_CAPTURE_IN_REMEDIATION`] bytes with `…(N more bytes)`, and a
/// placeholder with no capture gets [`MISSING_CAPTURE`], never its raw `{name}`. Braces that
/// do not form a placeholder (`{}`, `{a b}`) are kept. The output is at most `text.len()`
/// plus 300 bytes per placeholder, whatever the captures hold.
///
/// ```
/// use faultline_db::compile::interpolate;
/// let caps = vec![("m".to_string(), "{m}{m}".to_string())];
/// assert_eq!(interpolate("pip install {m} ({x})", &caps), "pip install {m}{m} ((not captured))");
/// ```
pub fn interpolate(text: &str, captures: &[(String, String)]) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        let name_len = after
            .bytes()
            .take_while(|b| b.is_ascii_alphanumeric() || *b == b'_')
            .count();
        if name_len > 0 && after.as_bytes().get(name_len) == Some(&b'}') {
            let name = &after[..name_len];
            match captures.iter().find(|(n, _)| n == name) {
                Some((_, value)) => push_cut(&mut out, value, MAX_CAPTURE_IN_REMEDIATION),
                None => out.push_str(MISSING_CAPTURE),
            }
            rest = &after[name_len + 1..];
        } else {
            out.push('{');
            rest = after;
        }
    }
    out.push_str(rest);
    out
}

/// Appends `value` cut at `max` bytes (on a character boundary), saying how much was cut.
fn push_cut(out: &mut String, value: &str, max: usize) {
    if value.len() <= max {
        out.push_str(value);
        return;
    }
    let mut end = max;
    while !value.is_char_boundary(end) {
        end -= 1;
    }
    out.push_str(&value[..end]);
    out.push_str(&format!("…({} more bytes)", value.len() - end));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::signature::{load_sources, SourceFile};
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
        let m = db.matcher();
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
                let whole = db.matcher().is_match(i, line.as_bytes());
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
        let toml =
            sig("boom", "boom", "x").replace("['boom']", &format!("[{}]", patterns.join(", ")));
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
        let (m, bytes) = (db.matcher(), log.as_bytes());
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
            "pip install vllm._C"
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
        assert!(out.ends_with(" and x"), "{out}");
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
            out.starts_with(&"é".repeat(128)) && out.ends_with("…(144 more bytes)"),
            "{out}"
        );
    }
}
