//! The two-stage matcher: a SIMD prefilter over raw bytes finds candidate lines, a literal
//! automaton over just that line names the patterns whose literals it holds, and only those
//! patterns' regexes confirm.

use std::sync::OnceLock;

use aho_corasick::{packed, AhoCorasick, MatchKind};
use regex_automata::{meta, util::syntax, Input};

use super::archive::Dfas;

/// Structural lines the analysis needs, found by the same scan as the signatures.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Marker {
    /// `Traceback (most recent call last):`
    TracebackStart = 1,
    /// `  File "x.py", line 3, in f`
    Frame = 2,
    /// `The above exception was the direct cause of the following exception:`
    ChainCause = 4,
    /// `During handling of the above exception, another exception occurred:`
    ChainContext = 8,
    /// `ValueError: ...`, a Python exception line.
    Exception = 16,
    /// A line logged at ERROR, CRITICAL or FATAL level.
    ErrorLevel = 32,
}

/// Internal patterns for the markers. Each has a required literal like any signature.
pub(crate) const MARKERS: &[(Marker, &str)] = &[
    (
        Marker::TracebackStart,
        r"Traceback \(most recent call last\):",
    ),
    (Marker::Frame, r#"File "[^"]*", line \d+"#),
    (
        Marker::ChainCause,
        r"The above exception was the direct cause of the following exception",
    ),
    (
        Marker::ChainContext,
        r"During handling of the above exception, another exception occurred",
    ),
    (
        Marker::Exception,
        r"(?:^|[\s\]|:>])(?:[A-Za-z_][A-Za-z0-9_]*\.)*[A-Za-z_][A-Za-z0-9_]*(?:Error|Exception|Interrupt|Exit)(?::\s|:$|\s*$)",
    ),
    (
        Marker::ErrorLevel,
        r"(?:^|[\s\[|])(?:ERROR|CRITICAL|FATAL)(?:[\s\]:|]|$)|^\[?E\d{4} \d\d:\d\d:\d\d",
    ),
];

/// Who a compiled pattern belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Owner {
    Signature(u32),
    Marker(Marker),
}

/// Builds a regex in faultline's dialect: Unicode off, any byte, no empty-match UTF-8 rules.
#[allow(clippy::result_large_err)]
pub(crate) fn build_regex(pattern: &str) -> Result<meta::Regex, meta::BuildError> {
    meta::Builder::new()
        .syntax(syntax::Config::new().unicode(false).utf8(false))
        .configure(
            meta::Config::new()
                .utf8_empty(false)
                .nfa_size_limit(Some(4 << 20))
                .hybrid_cache_capacity(1 << 20),
        )
        .build(pattern)
}

pub(crate) struct CompiledPattern {
    pub owner: Owner,
    pub confirm: Confirm,
}

/// How a pattern confirms a candidate line.
pub(crate) enum Confirm {
    /// A regex compiled from source (a database compiled from signature files).
    Regex(meta::Regex),
    /// A pattern of a loaded archive: its stored DFA when it has one, else (its DFA was over
    /// the size limit) a regex built from `source` at first use.
    Archived {
        has_dfa: bool,
        source: Box<str>,
        lazy: OnceLock<Option<meta::Regex>>,
    },
}

impl Confirm {
    /// The confirmation of a pattern stored in an archive.
    pub fn archived(source: &str, has_dfa: bool) -> Confirm {
        Confirm::Archived {
            has_dfa,
            source: source.into(),
            lazy: OnceLock::new(),
        }
    }
}

enum Prefilter {
    Packed(packed::Searcher),
    General(AhoCorasick),
}

/// Per-thread scratch space for confirming candidate lines.
#[derive(Default)]
pub struct Scratch {
    candidates: Vec<u32>,
}

/// What one line matched: the signatures (by index, ascending) and the markers.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LineMatch {
    pub signatures: Vec<u32>,
    pub markers: u8,
}

impl LineMatch {
    /// Whether nothing matched.
    pub fn is_empty(&self) -> bool {
        self.signatures.is_empty() && self.markers == 0
    }

    /// Whether the line carries `marker`.
    pub fn has(&self, marker: Marker) -> bool {
        self.markers & marker as u8 != 0
    }
}

pub(crate) struct Matcher {
    prefilter: Prefilter,
    anchors: Vec<Vec<u8>>,
    literals: AhoCorasick,
    members: Vec<Vec<u8>>,
    member_patterns: Vec<Vec<u32>>,
    pub patterns: Vec<CompiledPattern>,
    /// The DFAs of a loaded archive, by pattern index.
    dfas: Option<Dfas>,
}

impl Matcher {
    /// Builds the matcher from patterns and, per pattern, its required literal set.
    pub fn new(
        patterns: Vec<CompiledPattern>,
        required: &[Vec<Vec<u8>>],
    ) -> Result<Matcher, String> {
        Matcher::build(patterns, required, None, None)
    }

    /// Builds the matcher; `anchors` (stored in an archive) skips choosing them again, and
    /// `dfas` are a loaded archive's confirmation automata.
    pub fn build(
        patterns: Vec<CompiledPattern>,
        required: &[Vec<Vec<u8>>],
        anchors: Option<Vec<Vec<u8>>>,
        dfas: Option<Dfas>,
    ) -> Result<Matcher, String> {
        let mut members: Vec<Vec<u8>> = Vec::new();
        let mut index = std::collections::HashMap::new();
        let mut member_patterns: Vec<Vec<u32>> = Vec::new();
        for (p, set) in required.iter().enumerate() {
            for m in set {
                let i = *index.entry(m.clone()).or_insert_with(|| {
                    members.push(m.clone());
                    member_patterns.push(Vec::new());
                    members.len() - 1
                });
                member_patterns[i].push(p as u32);
            }
        }
        let anchors = anchors.unwrap_or_else(|| super::literals::choose_anchors(&members));
        let prefilter = if anchors.len() <= super::literals::MAX_ANCHORS {
            packed::Config::new()
                .match_kind(packed::MatchKind::LeftmostFirst)
                .builder()
                .extend(&anchors)
                .build()
                .map(Prefilter::Packed)
        } else {
            None
        };
        let prefilter = match prefilter {
            Some(p) => p,
            None => Prefilter::General(
                AhoCorasick::builder()
                    .match_kind(MatchKind::LeftmostFirst)
                    .build(&anchors)
                    .map_err(|e| e.to_string())?,
            ),
        };
        let literals = AhoCorasick::builder()
            .match_kind(MatchKind::Standard)
            .build(&members)
            .map_err(|e| e.to_string())?;
        Ok(Matcher {
            prefilter,
            anchors,
            literals,
            members,
            member_patterns,
            patterns,
            dfas,
        })
    }

    /// Whether pattern `p` matches anywhere in `line` (unanchored, stopping at the earliest
    /// match).
    pub fn is_match(&self, p: usize, line: &[u8]) -> bool {
        let Some(pat) = self.patterns.get(p) else {
            return false;
        };
        let input = Input::new(line).earliest(true);
        match &pat.confirm {
            Confirm::Regex(re) => re.is_match(input),
            Confirm::Archived {
                has_dfa,
                source,
                lazy,
            } => {
                if *has_dfa {
                    if let Some(found) = self.dfas.as_ref().and_then(|d| d.is_match(p, &input)) {
                        return found;
                    }
                }
                // No stored DFA, or one that cannot answer (a DFA with quit bytes): the regex.
                lazy.get_or_init(|| build_regex(source).ok())
                    .as_ref()
                    .is_some_and(|re| re.is_match(input))
            }
        }
    }

    /// The start of the first anchor occurrence in `hay[start..]`, as an index into `hay`.
    #[inline]
    pub fn find_candidate(&self, hay: &[u8], start: usize) -> Option<usize> {
        if start >= hay.len() {
            return None;
        }
        match &self.prefilter {
            Prefilter::Packed(s) => s.find_in(hay, aho_corasick::Span::from(start..hay.len())),
            Prefilter::General(ac) => ac.find(aho_corasick::Input::new(hay).range(start..)),
        }
        .map(|m| m.start())
    }

    /// Confirms one line (no terminator): every pattern whose literal it holds is run on it.
    pub fn confirm(&self, line: &[u8], scratch: &mut Scratch, out: &mut LineMatch) {
        out.signatures.clear();
        out.markers = 0;
        scratch.candidates.clear();
        for m in self.literals.find_overlapping_iter(line) {
            scratch
                .candidates
                .extend_from_slice(&self.member_patterns[m.pattern().as_usize()]);
        }
        if scratch.candidates.is_empty() {
            return;
        }
        scratch.candidates.sort_unstable();
        scratch.candidates.dedup();
        for &p in &scratch.candidates {
            if self.is_match(p as usize, line) {
                match self.patterns[p as usize].owner {
                    Owner::Signature(s) => {
                        if out.signatures.last() != Some(&s) {
                            out.signatures.push(s);
                        }
                    }
                    Owner::Marker(m) => out.markers |= m as u8,
                }
            }
        }
        out.signatures.sort_unstable();
        out.signatures.dedup();
    }

    /// The anchors the prefilter searches for.
    pub fn anchors(&self) -> &[Vec<u8>] {
        &self.anchors
    }

    /// The distinct required literals, with the patterns that own each.
    pub fn members(&self) -> impl Iterator<Item = (&[u8], &[u32])> {
        self.members
            .iter()
            .map(Vec::as_slice)
            .zip(self.member_patterns.iter().map(Vec::as_slice))
    }

    /// Whether the prefilter is the packed SIMD searcher.
    pub fn is_packed(&self) -> bool {
        matches!(self.prefilter, Prefilter::Packed(_))
    }
}
