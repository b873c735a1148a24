//! The two-stage matcher: a SIMD prefilter over raw bytes finds candidate lines, the anchors
//! it finds on that line name the patterns whose literals may be there, and only those
//! patterns' regexes confirm.

use std::sync::OnceLock;

use aho_corasick::{AhoCorasick, MatchKind};
use regex_automata::{meta, Input};

use super::dfas::Dfas;
pub(crate) use super::dialect::build_regex;
use super::dialect::{literal_language, over_confirm_budget};

/// Shortest member a required set may hold for the prefilter to use it.
pub(crate) const MIN_LITERAL: usize = 4;
/// Most anchors one packed (Teddy) searcher takes.
pub(crate) const MAX_ANCHORS: usize = 64;
/// Most packed searchers the prefilter runs side by side: more anchors, rarer ones, at the
/// price of one more pass per searcher.
pub(crate) const MAX_GROUPS: usize = 4;

/// How `n` anchors (in their stored order) split into packed searchers: consecutive runs of
/// near-equal size, none over [`MAX_ANCHORS`].
pub(crate) fn group_sizes(n: usize) -> Vec<usize> {
    let groups = n.div_ceil(MAX_ANCHORS).max(1);
    (0..groups)
        .map(|g| n / groups + usize::from(g < n % groups))
        .collect()
}

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
    /// A line that says a process ended badly on its own: death by signal, a non-zero exit,
    /// a Go/Rust/C++/Java crash, a compiler or linker error, a failed package build.
    Terminal = 64,
}

/// Internal patterns for the markers. Each has a required literal like any signature.
pub(crate) const MARKERS: &[(Marker, &str)] = &[
    (
        Marker::TracebackStart,
        r"Traceback \(most recent call last\):",
    ),
    // Straight quotes as Python prints them, or typographic ones where a chat tool or an
    // editor "smartened" a pasted traceback (`File “/x.py”, line 965, in f`).
    (
        Marker::Frame,
        r#"File (?:"[^"]*"|\xE2\x80\x9C[^\n]*?\xE2\x80\x9D), line \d+"#,
    ),
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
        r"(?:^|[\s\[|])(?:ERROR|CRITICAL|FATAL)(?:[\s\]:|]|$)",
    ),
    // glog's `E1102 04:12:55.123 ...`, and `E20251102 ...` with the year glog prints unless
    // `--log_year_in_prefix=false`: no literal long enough to anchor, so it runs on every
    // candidate line; alone, its automaton stops after a byte or two on other lines.
    (Marker::ErrorLevel, r"^\[?E(?:\d{4})?\d{4} \d\d:\d\d:\d\d"),
    // spdlog's lower-case `[%l]` (Habana's Synapse: `[..][GC    ][error][tid:44F8A] ...`) and
    // nginx's error log (`2024/01/01 00:00:00 [error] 12#0: ...`).
    (Marker::ErrorLevel, r"\[(?:error|critical)\]"),
    // Death by signal: as the shell reports it, alone at the end of a line (a progress bar
    // with no newline before it included), or with a core dump.
    // ... and as glibc's psiginfo() reports it (backward-cpp and other crash handlers):
    // `Aborted (Signal sent by tkill() 1733323 1000)`.
    (
        Marker::Terminal,
        r"(?:Segmentation fault|Aborted|Bus error|Illegal instruction|Floating point exception) \((?:core dumped\)|Signal sent by \w+\(\))",
    ),
    (
        Marker::Terminal,
        r"(?:^|[\s|:\]])(?:Segmentation fault|Bus error|Killed|Aborted)\s*$",
    ),
    (
        Marker::Terminal,
        r"line \d+:\s+\d+ (?:Killed|Segmentation fault|Aborted|Bus error|Illegal instruction)",
    ),
    (Marker::Terminal, r"Fatal Python error: "),
    // abseil's failure signal handler (Ray, glog users): `*** SIGSEGV received at time=...`;
    // not SIGTERM, which a clean shutdown also gets.
    (
        Marker::Terminal,
        r"\*\*\* SIG(?:SEGV|ABRT|BUS|ILL|FPE) received at time=",
    ),
    // Go's runtime and Open MPI/UCX name the signal that killed the process.
    (
        Marker::Terminal,
        r"(?:^|[|\]]\s*)SIG(?:SEGV|ABRT|BUS|ILL|FPE): ",
    ),
    (
        Marker::Terminal,
        r"Signal: (?:Aborted|Segmentation fault|Bus error|Illegal instruction|Floating point exception) \(\d+\)",
    ),
    // A non-zero exit status.
    (
        Marker::Terminal,
        r"exited with (?:exit )?code:? (?:-[1-9]|[1-9])",
    ),
    (
        Marker::Terminal,
        r"returned non-zero exit status (?:-[1-9]|[1-9])",
    ),
    (Marker::Terminal, r"exitcode\s*: (?:-[1-9]|[1-9])"),
    // Go, C++, Rust and Java crashes.
    (Marker::Terminal, r"(?:^|[|\]]\s*)(?:panic|fatal error): "),
    (
        Marker::Terminal,
        r"terminate called (?:after throwing an instance of|without an active exception)",
    ),
    // libc++abi's terminate handler (clang, macOS, Android): `libc++abi: terminating due to
    // uncaught exception of type T: what`.
    (Marker::Terminal, r"libc\+\+abi: terminating"),
    (Marker::Terminal, r"thread '[^']*' panicked at"),
    (Marker::Terminal, r#"Exception in thread ""#),
    // Compilers, assemblers, linkers and package builds.
    (Marker::Terminal, r":\d+:\d+: (?:fatal )?error: "),
    (Marker::Terminal, r"\(\d+\): (?:catastrophic )?error: "),
    (
        Marker::Terminal,
        r"(?:ptxas (?:error|fatal)|nvcc fatal)\s*:",
    ),
    (Marker::Terminal, r"ld returned [1-9]\d* exit status"),
    (Marker::Terminal, r"collect2: error"),
    (
        Marker::Terminal,
        r"error: subprocess-exited-with-error|Failed building wheel for |Could not build wheels for ",
    ),
];

/// Who a compiled pattern belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Owner {
    /// A signature, by index in the database.
    Signature(u32),
    /// A structural marker the analysis needs.
    Marker(Marker),
}

#[derive(Debug)]
pub(crate) struct CompiledPattern {
    pub owner: Owner,
    pub confirm: Confirm,
    /// Whether the pattern matches exactly the strings of its required literal set (its
    /// source is a plain literal, or plain text with `|` and `(?:…)`, see
    /// [`literal_language`]): a line holding one of them matches, with no regex to run.
    pub plain: bool,
    /// A plain pattern's strings (its required literals), empty otherwise: whether a line
    /// matches is whether it holds one of them.
    pub strings: Vec<Vec<u8>>,
    /// The NFA states of a signature's pattern over the confirmation budget (see
    /// [`super::dialect::MAX_CONFIRM_STATES`]): it is skipped, it confirms no line.
    pub over_budget: Option<usize>,
}

impl CompiledPattern {
    /// A pattern compiled from `source`, whose required literal set is `required`.
    pub fn new(owner: Owner, confirm: Confirm, source: &str, required: &[Vec<u8>]) -> Self {
        // Every string must be long enough to anchor, else the pattern would be a candidate
        // on every candidate line (see `unanchored`) and its regex must decide.
        let plain = literal_language(source).is_some_and(|lang| {
            lang.iter().all(|m| m.len() >= MIN_LITERAL) && {
                let mut req = required.to_vec();
                req.sort_unstable();
                req.dedup();
                req == lang
            }
        });
        // Checked from the source, so that a database compiled here and one loaded from an
        // archive (whatever wrote it) skip the same patterns. Markers are ours.
        let over_budget = match owner {
            Owner::Signature(_) if !plain => over_confirm_budget(source),
            _ => None,
        };
        CompiledPattern {
            owner,
            confirm,
            plain,
            strings: if plain { required.to_vec() } else { Vec::new() },
            over_budget,
        }
    }
}

/// How a pattern confirms a candidate line.
#[derive(Debug)]
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

#[derive(Debug)]
enum Prefilter {
    /// Packed searchers over consecutive groups of the first anchors ([`group_sizes`]), each
    /// with the index of its first anchor; then the hashed prefilter over the others, with
    /// the index of its first. Each searcher is a slot of the [`Cursor`].
    Split {
        packed: Vec<(usize, super::short::Short)>,
        hashed: Option<(usize, super::hashed::Hashed)>,
    },
    /// Anchors neither takes (shorter than four bytes where the packed searchers cannot hold
    /// them).
    General(AhoCorasick),
}

/// The prefilter's anchors, as the compiler chose them or an archive stored them.
#[derive(Clone, Debug, Default)]
pub(crate) struct Anchors {
    /// The anchors, in their searchers' order.
    pub list: Vec<Vec<u8>>,
    /// How many of the first anchors the packed searchers hold (at most
    /// [`MAX_ANCHORS`] × [`MAX_GROUPS`]); the others go to the hashed prefilter.
    pub packed: usize,
    /// Per anchor: expected occurrences per MiB of ordinary log (empty when unknown).
    pub rates: Vec<f64>,
}

/// Where each packed searcher's next anchor is, so that a scan moving forward through one
/// buffer searches each stretch once per searcher, not once per candidate.
#[derive(Debug, Default)]
pub struct Cursor {
    /// Per searcher (one for a prefilter that is not packed): searched from `from`, the
    /// first hit (anchor, start) at or after it.
    next: Vec<(usize, Option<(usize, usize)>)>,
}

/// How often the prefilter fires over a sample: see [`crate::Database::candidate_profile`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CandidateProfile {
    /// Bytes in the sample.
    pub bytes: u64,
    /// Lines in the sample (a last line without terminator counts).
    pub lines: u64,
    /// Lines the prefilter hands to confirmation.
    pub candidate_lines: u64,
    /// Per anchor (in [`crate::Database::anchors`] order): candidate lines it opened.
    pub per_anchor: Vec<u64>,
}

/// A line of a buffer that holds an anchor occurrence, and the first anchor found on it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CandidateLine {
    /// The anchor (an index into `Database::anchors`) that made the line a candidate.
    pub anchor: usize,
    /// The line's bytes in the buffer, without its `\n` (a `\r` before it stays).
    pub line: std::ops::Range<usize>,
}

/// The candidate lines of a buffer, in order (`Database::candidate_lines`).
#[derive(Debug)]
pub struct CandidateLines<'a> {
    matcher: &'a Matcher,
    buf: &'a [u8],
    pos: usize,
    cursor: Cursor,
}

impl Iterator for CandidateLines<'_> {
    type Item = CandidateLine;

    fn next(&mut self) -> Option<CandidateLine> {
        let (buf, pos) = (self.buf, self.pos);
        let (anchor, at) = self.matcher.find_anchor_from(buf, pos, &mut self.cursor)?;
        let start = memchr::memrchr(b'\n', &buf[pos..at]).map_or(pos, |i| pos + i + 1);
        let end = memchr::memchr(b'\n', &buf[at..]).map_or(buf.len(), |i| at + i);
        self.pos = end + 1;
        Some(CandidateLine {
            anchor,
            line: start..end,
        })
    }
}

/// Per-thread scratch space for confirming candidate lines.
#[derive(Debug, Default)]
pub struct Scratch {
    candidates: Vec<u32>,
    cursor: Cursor,
    /// The anchor occurrences on the line being confirmed: (anchor, start in the line).
    found: Vec<(usize, usize)>,
}

/// What one line matched: the signatures (by index, ascending) and the markers.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LineMatch {
    /// Indices of the signatures whose patterns matched, ascending.
    pub signatures: Vec<u32>,
    /// The markers found, as a bit set of [`Marker`] values.
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

#[derive(Debug)]
pub(crate) struct Matcher {
    prefilter: Prefilter,
    anchors: Vec<Vec<u8>>,
    /// Per anchor: expected occurrences per MiB of ordinary log (see `compile::anchors::background`; empty for an archive).
    anchor_rates: Vec<f64>,
    /// Per anchor: the required literals that hold it, or hold an anchor that can start at
    /// the same place (a prefix of it, or one it is a prefix of), each with where in the
    /// literal that anchor starts. An anchor found at `s` checks each such literal in place
    /// at `s - offset`, so a line's candidate patterns cost one comparison per literal.
    /// Each list is keyed by a byte its literals need on the line beside the anchor.
    anchor_keyed: Vec<Keyed>,
    /// Patterns with a required literal too short to anchor: run on every candidate line.
    unanchored: Vec<u32>,
    members: Vec<Vec<u8>>,
    /// Per member: its first and last byte, compared before the whole member is.
    member_ends: Vec<[u8; 2]>,
    member_patterns: Vec<Vec<u32>>,
    pub patterns: Vec<CompiledPattern>,
    /// The DFAs of a loaded archive, by pattern index.
    dfas: Option<Dfas>,
}

/// The distinct required literals of `required` (per pattern, its set), in order of first
/// appearance: the members the anchors must cover.
pub(crate) fn distinct_members(required: &[Vec<Vec<u8>>]) -> Vec<Vec<u8>> {
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::new();
    for m in required.iter().flatten() {
        if seen.insert(m.as_slice()) {
            out.push(m.clone());
        }
    }
    out
}

/// Per anchor: every (literal, offset) where it or an anchor that can start at the same
/// place (a prefix of it, or one it is a prefix of) starts inside a literal of at least
/// [`MIN_LITERAL`] bytes, sorted. One overlapping automaton pass over the literals and a
/// prefix lookup per anchor: linear in their sizes (searching every anchor in every literal
/// and comparing every pair of anchors takes 2.5 s of a 5,000-signature archive's load).
/// With `hashed`, the hashed prefilter over these anchors, its table replaces the automaton:
/// one lookup per position of each literal, nothing to build (building the automaton takes a
/// tenth of a 5,000-signature archive's load).
fn anchor_members(
    anchors: &[Vec<u8>],
    members: &[Vec<u8>],
    hashed: Option<(usize, &super::hashed::Hashed)>,
) -> Result<Vec<Vec<(u32, u32)>>, aho_corasick::BuildError> {
    let mut direct: Vec<Vec<(u32, u32)>> = vec![Vec::new(); anchors.len()];
    // Anchors from `automaton_end` on are found by the hashed prefilter's table; the others
    // by an automaton built for this.
    let automaton_end = hashed.map_or(anchors.len(), |(first, _)| first);
    if let Some((first, h)) = hashed {
        for (m, member) in members.iter().enumerate() {
            if member.len() < MIN_LITERAL {
                continue;
            }
            for k in 0..=member.len() - 4 {
                for a in h.all_at(member, k) {
                    direct[first + a].push((m as u32, k as u32));
                }
            }
        }
    }
    let searchable: Vec<usize> = (0..automaton_end)
        .filter(|&a| !anchors[a].is_empty())
        .collect();
    if !searchable.is_empty() {
        let ac = AhoCorasick::builder()
            .match_kind(MatchKind::Standard)
            .build(searchable.iter().map(|&a| &anchors[a]))?;
        for (m, member) in members.iter().enumerate() {
            if member.len() < MIN_LITERAL {
                continue;
            }
            for hit in ac.find_overlapping_iter(member) {
                direct[searchable[hit.pattern().as_usize()]].push((m as u32, hit.start() as u32));
            }
        }
    }
    // Anchors in byte order: the anchors that are prefixes of one (equal ones included) come
    // before it, and every anchor between such a prefix and it holds that prefix too, so a
    // stack of the prefix chain so far holds exactly its prefixes.
    let mut sorted: Vec<usize> = (0..anchors.len()).collect();
    sorted.sort_unstable_by(|&x, &y| anchors[x].cmp(&anchors[y]));
    let mut related: Vec<Vec<usize>> = vec![Vec::new(); anchors.len()];
    let mut chain: Vec<usize> = Vec::new();
    for &i in &sorted {
        while chain
            .last()
            .is_some_and(|&j| !anchors[i].starts_with(&anchors[j]))
        {
            chain.pop();
        }
        for &j in &chain {
            // `anchors[j]` is a prefix of `anchors[i]`: each can start where the other does.
            related[i].push(j);
            related[j].push(i);
        }
        chain.push(i);
    }
    Ok((0..anchors.len())
        .map(|i| {
            let mut at = direct[i].clone();
            for &j in &related[i] {
                at.extend_from_slice(&direct[j]);
            }
            at.sort_unstable();
            at.dedup();
            at
        })
        .collect())
}

/// One anchor's literals, each under a byte it needs on the line next to the anchor's place:
/// the second byte after the anchor when the literal goes on that far (the first is often a
/// space), else the first, else the byte right before it. A common anchor is held by dozens
/// of literals (`sion`: 70, `Error`: 74 in the 2027.01 set); an occurrence then compares only
/// the few under the bytes the line has there (on the independent generator's training
/// cluster log, 11% fewer instructions for the whole scan: BENCHMARKS.md).
#[derive(Debug, Default)]
struct Keyed {
    /// (key, literal, offset of the anchor's place in it), by key: the second byte after
    /// (0..=255), the first byte after ([`Keyed::AFTER`] + byte), the byte before
    /// ([`Keyed::BEFORE`] + byte), or none ([`Keyed::NONE`]: the literal is the anchor).
    entries: Vec<(u16, u32, u32)>,
    /// Which keys below [`Keyed::NONE`] have entries, a bit each: most occurrences of a
    /// common anchor have bytes beside them that no literal needs, and stop here.
    present: [u64; 12],
    /// Where the entries under [`Keyed::NONE`] (the last key) start.
    none_from: usize,
    /// The anchor's length: its bytes after it start there.
    anchor_len: usize,
}

impl Keyed {
    const AFTER: u16 = 256;
    const BEFORE: u16 = 512;
    const NONE: u16 = 768;

    fn new(anchor_len: usize, at: &[(u32, u32)], members: &[Vec<u8>]) -> Keyed {
        let mut entries: Vec<(u16, u32, u32)> = at
            .iter()
            .map(|&(m, k)| {
                let member = &members[m as usize];
                let after = k as usize + anchor_len;
                let key = if let Some(&b) = member.get(after + 1) {
                    u16::from(b)
                } else if let Some(&b) = member.get(after) {
                    Keyed::AFTER + u16::from(b)
                } else if let Some(&b) = (k as usize).checked_sub(1).and_then(|i| member.get(i)) {
                    Keyed::BEFORE + u16::from(b)
                } else {
                    Keyed::NONE
                };
                (key, m, k)
            })
            .collect();
        entries.sort_unstable();
        let mut present = [0u64; 12];
        for &(key, _, _) in &entries {
            if key < Keyed::NONE {
                present[usize::from(key) / 64] |= 1 << (key % 64);
            }
        }
        let none_from = entries.partition_point(|e| e.0 < Keyed::NONE);
        Keyed {
            entries,
            present,
            none_from,
            anchor_len,
        }
    }

    /// The literals that may be in place for the anchor's occurrence at `start` in `line`,
    /// by the two bytes the line has after it and the byte before it (a short list whole).
    fn candidates(&self, line: &[u8], start: usize) -> [&[(u16, u32, u32)]; 4] {
        let end = start + self.anchor_len;
        let after = (line.get(end).copied(), line.get(end + 1).copied());
        let before = start.checked_sub(1).and_then(|i| line.get(i)).copied();
        let range = |key: u16| {
            if key < Keyed::NONE && self.present[usize::from(key) / 64] & (1 << (key % 64)) == 0 {
                return &[][..];
            }
            let lo = self.entries.partition_point(|e| e.0 < key);
            let hi = lo + self.entries[lo..].partition_point(|e| e.0 == key);
            &self.entries[lo..hi]
        };
        if self.entries.len() <= 8 {
            return [&self.entries, &[], &[], &[]];
        }
        [
            after.1.map_or(&[][..], |b| range(u16::from(b))),
            after
                .0
                .map_or(&[][..], |b| range(Keyed::AFTER + u16::from(b))),
            before.map_or(&[][..], |b| range(Keyed::BEFORE + u16::from(b))),
            &self.entries[self.none_from..],
        ]
    }
}

impl Matcher {
    /// Builds the matcher from patterns, per pattern its required literal set, the anchors
    /// the prefilter searches for (chosen by the compiler, or stored in an archive) with
    /// their expected rates per MiB (empty when unknown), and a loaded archive's `dfas`.
    pub(crate) fn build(
        patterns: Vec<CompiledPattern>,
        required: &[Vec<Vec<u8>>],
        anchors: Anchors,
        dfas: Option<Dfas>,
    ) -> Result<Matcher, aho_corasick::BuildError> {
        let mut members: Vec<Vec<u8>> = Vec::new();
        let mut index: std::collections::HashMap<&[u8], usize> = std::collections::HashMap::new();
        let mut member_patterns: Vec<Vec<u32>> = Vec::new();
        for (p, set) in required.iter().enumerate() {
            for m in set {
                let i = *index.entry(m.as_slice()).or_insert_with(|| {
                    members.push(m.clone());
                    member_patterns.push(Vec::new());
                    members.len() - 1
                });
                member_patterns[i].push(p as u32);
            }
        }
        let Anchors {
            list: anchors,
            packed: packed_len,
            rates: anchor_rates,
        } = anchors;
        let packed_len = packed_len.min(anchors.len());
        let mut searchers = Vec::new();
        let mut first = 0;
        if packed_len <= MAX_ANCHORS * MAX_GROUPS {
            for size in group_sizes(packed_len) {
                if size == 0 {
                    break;
                }
                let built = super::short::Short::new(&anchors[first..first + size]);
                match built {
                    Some(s) => searchers.push((first, s)),
                    None => break,
                }
                first += size;
            }
        }
        let hashed = (packed_len < anchors.len())
            .then(|| super::hashed::Hashed::new(&anchors[packed_len..]))
            .flatten()
            .map(|h| (packed_len, h));
        // Every anchor in a searcher that took it, else all in the general automaton.
        let split = first == packed_len && (packed_len == anchors.len() || hashed.is_some());
        let prefilter = if split && !anchors.is_empty() {
            Prefilter::Split {
                packed: searchers,
                hashed,
            }
        } else {
            Prefilter::General(
                AhoCorasick::builder()
                    .match_kind(MatchKind::LeftmostFirst)
                    .build(&anchors)?,
            )
        };
        let hashed = match &prefilter {
            Prefilter::Split {
                hashed: Some((first, h)),
                ..
            } => Some((*first, h)),
            _ => None,
        };
        let anchor_keyed = anchors
            .iter()
            .zip(&anchor_members(&anchors, &members, hashed)?)
            .map(|(a, at)| Keyed::new(a.len(), at, &members))
            .collect();
        let mut unanchored: Vec<u32> = members
            .iter()
            .zip(&member_patterns)
            .filter(|(m, _)| m.len() < MIN_LITERAL)
            .flat_map(|(_, ps)| ps.iter().copied())
            .collect();
        unanchored.sort_unstable();
        unanchored.dedup();
        Ok(Matcher {
            prefilter,
            anchors,
            anchor_rates,
            anchor_keyed,
            unanchored,
            member_ends: members
                .iter()
                .map(|m| {
                    [
                        m.first().copied().unwrap_or(0),
                        m.last().copied().unwrap_or(0),
                    ]
                })
                .collect(),
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
        if pat.over_budget.is_some() {
            return false;
        }
        if pat.plain {
            // The pattern matches exactly its strings (and has no stored DFA in an archive).
            return pat
                .strings
                .iter()
                .any(|s| memchr::memmem::find(line, s).is_some());
        }
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
        self.find_anchor(hay, start).map(|(_, at)| at)
    }

    /// The anchor index and start of the first anchor occurrence in `hay[start..]`.
    fn find_anchor(&self, hay: &[u8], start: usize) -> Option<(usize, usize)> {
        self.find_anchor_from(hay, start, &mut Cursor::default())
    }

    pub(crate) fn find_anchor_from(
        &self,
        hay: &[u8],
        start: usize,
        cursor: &mut Cursor,
    ) -> Option<(usize, usize)> {
        if start >= hay.len() {
            return None;
        }
        let slots = match &self.prefilter {
            Prefilter::Split { packed, hashed } => packed.len() + usize::from(hashed.is_some()),
            Prefilter::General(_) => 1,
        };
        if cursor.next.len() != slots {
            cursor.next.clear();
            cursor.next.resize(slots, (usize::MAX, None));
        }
        // A slot is still valid when it was searched from at or before `start` and its hit
        // (or the end, for none) is not behind `start`.
        let fresh = |slot: &(usize, Option<(usize, usize)>)| {
            slot.0 <= start && slot.1.is_none_or(|(_, at)| at >= start)
        };
        match &self.prefilter {
            Prefilter::Split { packed, hashed } => {
                let mut slots = cursor.next.iter_mut();
                for ((first, s), slot) in packed.iter().zip(&mut slots) {
                    if !fresh(slot) {
                        *slot = (start, s.find(hay, start).map(|(a, at)| (first + a, at)));
                    }
                }
                if let (Some((first, h)), Some(slot)) = (hashed, slots.next()) {
                    if !fresh(slot) {
                        *slot = (start, h.find(hay, start).map(|(a, at)| (first + a, at)));
                    }
                }
                // The leftmost hit; on a tie, the first searcher's (its anchors come first).
                cursor
                    .next
                    .iter()
                    .filter_map(|slot| slot.1)
                    .min_by_key(|&(_, at)| at)
            }
            Prefilter::General(ac) => {
                let slot = &mut cursor.next[0];
                if !fresh(slot) {
                    let hit = ac
                        .find(aho_corasick::Input::new(hay).range(start..))
                        .map(|m| (m.pattern().as_usize(), m.start()));
                    *slot = (start, hit);
                }
                slot.1
            }
        }
    }

    /// See [`crate::Database::candidate_profile`].
    pub fn candidate_profile(&self, sample: &[u8]) -> CandidateProfile {
        let mut p = CandidateProfile {
            bytes: sample.len() as u64,
            lines: bytecount::count(sample, b'\n') as u64
                + u64::from(sample.last().is_some_and(|&b| b != b'\n')),
            candidate_lines: 0,
            per_anchor: vec![0; self.anchors.len()],
        };
        for c in self.candidate_lines(sample) {
            p.candidate_lines += 1;
            p.per_anchor[c.anchor] += 1;
        }
        p
    }

    /// The candidate lines of `buf`, in order.
    pub fn candidate_lines<'a>(&'a self, buf: &'a [u8]) -> CandidateLines<'a> {
        CandidateLines {
            matcher: self,
            buf,
            pos: 0,
            cursor: Cursor::default(),
        }
    }

    /// Confirms one line (no terminator): every pattern one of whose required literals the
    /// line holds is run on it (a plain pattern needs no run).
    pub fn confirm(&self, line: &[u8], scratch: &mut Scratch, out: &mut LineMatch) {
        self.confirm_from(line, 0, scratch, out);
    }

    /// [`Matcher::confirm`] for a line on which no anchor starts before `from`: a scan that
    /// found the line by its first anchor does not search the bytes before it again (on a
    /// long line, that search is most of a candidate's cost).
    pub fn confirm_from(
        &self,
        line: &[u8],
        from: usize,
        scratch: &mut Scratch,
        out: &mut LineMatch,
    ) {
        scratch.found.clear();
        self.collect_from(line, from, scratch);
        self.confirm_found(line, scratch, out);
    }

    /// Appends the anchor occurrences on `line` from `from` on to `scratch.found`.
    fn collect_from(&self, line: &[u8], from: usize, scratch: &mut Scratch) {
        let mut at = from.min(line.len());
        scratch.cursor.next.clear();
        while let Some((a, start)) = self.find_anchor_from(line, at, &mut scratch.cursor) {
            scratch.found.push((a, start));
            at = start + 1;
        }
    }

    /// Confirms the line `hay[start..end]` (no terminator) on which the scan found anchor
    /// `anchor` at `hit` with `cursor`, the cursor it scans `hay` with: the other anchors on
    /// the line are found by the same search that goes on to the next candidate, so no byte
    /// is searched twice. The same answer as [`Matcher::confirm_from`]`(line, hit - start)`.
    pub fn confirm_in(
        &self,
        hay: &[u8],
        (start, end): (usize, usize),
        (anchor, hit): (usize, usize),
        cursor: &mut Cursor,
        scratch: &mut Scratch,
        out: &mut LineMatch,
    ) {
        let end = end.min(hay.len());
        let line = &hay[start.min(end)..end];
        scratch.found.clear();
        let mut next = Some((anchor, hit));
        while let Some((a, at)) = next {
            if at >= end {
                break;
            }
            if at < start || at + self.anchors.get(a).map_or(0, Vec::len) > end {
                // An occurrence reaching past the line's end (into a `\r`) may hide another
                // that starts at the same place: search the rest in the line alone.
                self.collect_from(line, at.saturating_sub(start), scratch);
                break;
            }
            scratch.found.push((a, at - start));
            next = self.find_anchor_from(hay, at + 1, cursor);
        }
        self.confirm_found(line, scratch, out);
    }

    /// Confirms `line` given its anchor occurrences (`scratch.found`, in order of start).
    fn confirm_found(&self, line: &[u8], scratch: &mut Scratch, out: &mut LineMatch) {
        out.signatures.clear();
        out.markers = 0;
        let Scratch {
            candidates, found, ..
        } = scratch;
        candidates.clear();
        if found.is_empty() {
            return;
        }
        // Each anchor occurrence is checked against the literals that hold it, in place;
        // anchors starting at the same place as a reported one are in its list.
        for &(a, start) in found.iter() {
            for &(_, m, k) in self.anchor_keyed[a]
                .candidates(line, start)
                .into_iter()
                .flatten()
            {
                let (m, k) = (m as usize, k as usize);
                let member = &self.members[m];
                let Some(s) = start.checked_sub(k) else {
                    continue;
                };
                let e = s + member.len();
                // Most literals sharing an anchor differ at an end: two byte comparisons
                // spare most of the whole comparisons.
                if e > s
                    && e <= line.len()
                    && [line[s], line[e - 1]] == self.member_ends[m]
                    && super::holds_at(line, s, member)
                {
                    candidates.extend_from_slice(&self.member_patterns[m]);
                }
            }
        }
        candidates.extend_from_slice(&self.unanchored);
        candidates.sort_unstable();
        candidates.dedup();
        for &p in candidates.iter() {
            let pat = &self.patterns[p as usize];
            // A plain pattern is in the list only when one of its strings was found.
            if pat.plain || self.is_match(p as usize, line) {
                match pat.owner {
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

    /// The pattern a candidate line is charged to in a cost profile, so that every candidate
    /// line is charged once: the first pattern (by anchor position, then index) whose
    /// required literal the line holds in place; when none does (an anchor fired on text
    /// that holds no whole literal), the first pattern owning a literal that holds the
    /// line's first anchor, whose anchor choice made the line a candidate. None when no
    /// anchor is on the line.
    pub fn charged_pattern(&self, line: &[u8]) -> Option<u32> {
        let mut at = 0;
        let mut cursor = Cursor::default();
        let mut first_anchor: Option<u32> = None;
        while let Some((a, start)) = self.find_anchor_from(line, at, &mut cursor) {
            let mut in_place: Option<u32> = None;
            for &(_, m, k) in &self.anchor_keyed[a].entries {
                let pats = &self.member_patterns[m as usize];
                let Some(&low) = pats.iter().min() else {
                    continue;
                };
                if at == 0 {
                    first_anchor = Some(first_anchor.map_or(low, |f| f.min(low)));
                }
                let (member, k) = (&self.members[m as usize], k as usize);
                if start >= k && line[start - k..].starts_with(member) {
                    in_place = Some(in_place.map_or(low, |f| f.min(low)));
                }
            }
            if in_place.is_some() {
                return in_place;
            }
            at = start + 1;
        }
        first_anchor
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

    /// Per anchor: expected occurrences per MiB of ordinary log.
    pub fn anchor_rates(&self) -> &[f64] {
        &self.anchor_rates
    }

    /// Whether packed SIMD searchers hold every anchor.
    pub fn is_packed(&self) -> bool {
        matches!(&self.prefilter, Prefilter::Split { packed, hashed: None } if !packed.is_empty())
    }

    /// How many of the first anchors the packed searchers hold (the others are in the hashed
    /// prefilter, or all in the general automaton when neither could take them).
    pub fn packed_len(&self) -> usize {
        match &self.prefilter {
            Prefilter::Split {
                hashed: Some((first, _)),
                ..
            } => *first,
            Prefilter::Split { hashed: None, .. } => self.anchors.len(),
            Prefilter::General(_) => 0,
        }
    }

    /// How the prefilter is laid out.
    pub fn prefilter_layout(&self) -> PrefilterLayout {
        match &self.prefilter {
            Prefilter::Split { packed, hashed } => PrefilterLayout::Split {
                packed_searchers: packed.len(),
                hashed: hashed.as_ref().map(|(first, h)| HashedLayout {
                    anchors: self.anchors.len() - first,
                    stride: h.stride(),
                }),
            },
            Prefilter::General(_) => PrefilterLayout::General,
        }
    }
}

/// How a database's prefilter is laid out ([`crate::Database::prefilter_layout`]); its
/// `Display` is the words `db check` prints.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PrefilterLayout {
    /// SIMD packed (Teddy) searchers over the short anchors, and a hashed prefilter over the
    /// others when there are any.
    Split {
        /// How many packed searchers run.
        packed_searchers: usize,
        /// The hashed prefilter, when some anchors are in it.
        hashed: Option<HashedLayout>,
    },
    /// One Aho-Corasick automaton over every anchor (neither layout could take them).
    General,
}

/// The hashed prefilter's part of a [`PrefilterLayout`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HashedLayout {
    /// Anchors it holds.
    pub anchors: usize,
    /// Positions between two tested windows.
    pub stride: usize,
}

impl std::fmt::Display for PrefilterLayout {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let PrefilterLayout::Split {
            packed_searchers,
            hashed,
        } = *self
        else {
            return f.write_str("Aho-Corasick automaton");
        };
        match packed_searchers {
            0 => {}
            1 => f.write_str("1 SIMD packed searcher")?,
            n => write!(f, "{n} SIMD packed searchers")?,
        }
        match (packed_searchers, hashed) {
            (0, None) => f.write_str("none"),
            (_, None) => Ok(()),
            (p, Some(h)) => {
                if p > 0 {
                    f.write_str(" and ")?;
                }
                write!(f, "a hashed 4-byte prefilter over {} anchors", h.anchors)?;
                match h.stride {
                    1 => Ok(()),
                    s => write!(f, " (stride {s})"),
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// [`anchor_members`] by its definition: every anchor searched in every literal, every
    /// pair of anchors compared.
    fn anchor_members_by_definition(
        anchors: &[Vec<u8>],
        members: &[Vec<u8>],
    ) -> Vec<Vec<(u32, u32)>> {
        let direct: Vec<Vec<(u32, u32)>> = anchors
            .iter()
            .map(|a| {
                let mut at = Vec::new();
                for (m, member) in members.iter().enumerate() {
                    if a.is_empty() || member.len() < MIN_LITERAL {
                        continue;
                    }
                    for k in 0..member.len() {
                        if member[k..].starts_with(a) {
                            at.push((m as u32, k as u32));
                        }
                    }
                }
                at
            })
            .collect();
        anchors
            .iter()
            .enumerate()
            .map(|(i, a)| {
                let mut at = direct[i].clone();
                for (j, b) in anchors.iter().enumerate() {
                    if i != j && (a.starts_with(b) || b.starts_with(a)) {
                        at.extend_from_slice(&direct[j]);
                    }
                }
                at.sort_unstable();
                at.dedup();
                at
            })
            .collect()
    }

    /// Each line's verdict as [`Matcher::confirm_in`] gives it, driven the way the scan
    /// drives it over the whole buffer; `None` for a line with no anchor.
    fn verdicts_in(m: &Matcher, buf: &[u8]) -> Vec<(usize, LineMatch)> {
        let (mut out, mut pos) = (Vec::new(), 0);
        let (mut cursor, mut scratch) = (Cursor::default(), Scratch::default());
        while let Some((a, hit)) = m.find_anchor_from(buf, pos, &mut cursor) {
            let start = memchr::memrchr(b'\n', &buf[pos..hit]).map_or(pos, |i| pos + i + 1);
            let end = memchr::memchr(b'\n', &buf[hit..]).map_or(buf.len(), |i| hit + i);
            let trimmed = if buf[start..end].ends_with(b"\r") {
                end - 1
            } else {
                end
            };
            let mut found = LineMatch::default();
            m.confirm_in(
                buf,
                (start, trimmed),
                (a, hit),
                &mut cursor,
                &mut scratch,
                &mut found,
            );
            out.push((start, found));
            pos = end + 1;
        }
        out
    }

    proptest! {
        /// The scan's confirmation (anchors found by the search that goes on to the next
        /// line) gives each line what confirming that line alone gives: lines of the
        /// repository's literals and anchors (shared, overlapping, cut, ending in `\r`).
        #[test]
        fn confirm_in_agrees_with_confirm_per_line(
            picks in proptest::collection::vec((0usize..10_000, 0u8..8), 1..120),
        ) {
            let m = &crate::testing::database().matcher;
            let mut buf = Vec::new();
            for (i, kind) in picks {
                match kind {
                    0 => buf.push(b'\n'),
                    1 => buf.extend_from_slice(b"\r\n"),
                    2 => buf.extend_from_slice(&m.anchors[i % m.anchors.len()]),
                    3 => {
                        let a = &m.anchors[i % m.anchors.len()];
                        buf.extend_from_slice(&a[..a.len() / 2]);
                    }
                    4 => buf.extend_from_slice(b" x\r"),
                    _ => buf.extend_from_slice(&m.members[i % m.members.len()]),
                }
            }
            let mut scratch = Scratch::default();
            let mut expected = Vec::new();
            let mut start = 0;
            for line in buf.split(|&b| b == b'\n') {
                let line_trimmed = line.strip_suffix(b"\r").unwrap_or(line);
                let mut found = LineMatch::default();
                m.confirm(line_trimmed, &mut scratch, &mut found);
                let any = m.find_anchor_from(line, 0, &mut Cursor::default()).is_some();
                if any {
                    expected.push((start, found));
                }
                start += line.len() + 1;
            }
            prop_assert_eq!(verdicts_in(m, &buf), expected);
        }

        /// Small alphabets, so that anchors repeat, overlap and are prefixes of each other.
        #[test]
        fn anchor_members_agree_with_their_definition(
            anchors in proptest::collection::vec(proptest::collection::vec(b'a'..=b'c', 0..6), 0..12),
            members in proptest::collection::vec(proptest::collection::vec(b'a'..=b'c', 0..12), 0..12),
        ) {
            prop_assert_eq!(
                anchor_members(&anchors, &members, None).expect("builds"),
                anchor_members_by_definition(&anchors, &members)
            );
        }

        /// Keying an anchor's literals by the bytes beside it loses none that is in place:
        /// every (literal, offset) that sits on the line where the anchor starts is among
        /// the keyed candidates for the bytes the line has there.
        #[test]
        fn keyed_candidates_hold_every_literal_in_place(
            anchors in proptest::collection::vec(proptest::collection::vec(b'a'..=b'c', 4..7), 1..8),
            built in proptest::collection::vec(
                (0usize..8, proptest::collection::vec(b'a'..=b'c', 0..3), proptest::collection::vec(b'a'..=b'c', 0..3)),
                0..16,
            ),
            picks in proptest::collection::vec((0usize..16, proptest::collection::vec(b'a'..=b'c', 0..3)), 0..8),
        ) {
            // Literals around the anchors (bytes before, after, both or neither) and lines
            // of those literals with other bytes between them.
            let members: Vec<Vec<u8>> = built
                .iter()
                .map(|(a, pre, post)| [&pre[..], &anchors[a % anchors.len()], &post[..]].concat())
                .collect();
            let mut line = Vec::new();
            for (m, gap) in &picks {
                line.extend_from_slice(gap);
                if let Some(member) = members.get(m % members.len().max(1)) {
                    line.extend_from_slice(member);
                }
            }
            let lists = anchor_members(&anchors, &members, None).expect("builds");
            for (a, at) in lists.iter().enumerate() {
                let keyed = Keyed::new(anchors[a].len(), at, &members);
                for start in 0..line.len() {
                    if !line[start..].starts_with(&anchors[a]) {
                        continue;
                    }
                    let offered: Vec<(u32, u32)> = keyed
                        .candidates(&line, start)
                        .into_iter()
                        .flatten()
                        .map(|&(_, m, k)| (m, k))
                        .collect();
                    for &(m, k) in at {
                        let member = &members[m as usize];
                        let in_place = start
                            .checked_sub(k as usize)
                            .is_some_and(|s| line[s..].starts_with(member));
                        prop_assert!(!in_place || offered.contains(&(m, k)), "{:?} at {}", (m, k), start);
                    }
                }
            }
        }

        /// The same with the hashed prefilter's table (for the anchors from `split` on, as a
        /// split prefilter holds them) instead of the automaton: anchors of four bytes or
        /// more, as it takes, of lengths that give every stride.
        #[test]
        fn anchor_members_by_the_hashed_table_agree_with_their_definition(
            anchors in proptest::collection::vec(proptest::collection::vec(b'a'..=b'c', 4..10), 1..12),
            members in proptest::collection::vec(proptest::collection::vec(b'a'..=b'c', 0..14), 0..12),
            split in 0usize..12,
        ) {
            let split = split % anchors.len();
            let hashed = super::super::hashed::Hashed::new(&anchors[split..]).expect("anchors of 4+ bytes");
            prop_assert_eq!(
                anchor_members(&anchors, &members, Some((split, &hashed))).expect("builds"),
                anchor_members_by_definition(&anchors, &members)
            );
        }
    }

    #[test]
    fn frames_with_typographic_quotes_are_frames() {
        let db = crate::testing::database();
        for line in [
            "  File \"/usr/lib/python3.10/configparser.py\", line 965, in __getitem__",
            "  File \u{201c}/usr/lib/python3.10/configparser.py\u{201d}, line 965, in __getitem__",
        ] {
            assert!(db.match_line(line.as_bytes()).has(Marker::Frame), "{line}");
        }
        for line in [
            "  File \u{201c}/x.py\u{201d} line 965",
            "  File \u{201c}/x.py, line 965",
            "File name: report.py, line 3",
        ] {
            assert!(!db.match_line(line.as_bytes()).has(Marker::Frame), "{line}");
        }
    }

    #[test]
    fn glog_and_lower_case_error_lines_are_error_level() {
        // The glog marker has no anchor of its own: it is confirmed on lines that are
        // candidates for another reason (here the anchor `Error`).
        let db = crate::testing::database();
        let error_level = |line: &[u8]| db.match_line(line).has(Marker::ErrorLevel);
        for line in [
            &b"E1102 04:12:55.123 12 a.cc:1] Error in x"[..],
            b"E20250825 11:10:33.595355   331 util_rdma.h:592] Error in x",
            b"[E20250825 11:10:33 Error in x",
            // spdlog's `[%l]` (Habana Synapse) and nginx's error log.
            b"[19:08:34.164951][GC                    ][error][tid:44F8A] Failed to load tpc kernel for node: TPC634, GUID: constant_bf16. Got error: GLUE_FAILED",
            b"2024/01/01 00:00:00 [error] 12#0: *3 connect() failed (111: Connection refused) while connecting to upstream",
        ] {
            assert!(error_level(line), "{}", String::from_utf8_lossy(line));
        }
        // Healthy near misses: other levels, a date too short or too long, another word.
        for line in [
            &b"I20250825 11:10:33.595355   331 util_rdma.h:592] Error in x"[..],
            b"W1102 04:12:55.123 12 a.cc:1] Error in x",
            b"E202508 11:10:33 Error in x",
            b"E2025082511 11:10:33 Error in x",
            b"[19:08:34.164951][GC                    ][info ][tid:44F8A] compile done",
            b"2024/01/01 00:00:00 [warn] 12#0: an upstream response is buffered",
            b"counted [errors] 0",
        ] {
            assert!(!error_level(line), "{}", String::from_utf8_lossy(line));
        }
    }

    /// Every terminal marker matches a line of a real log in the corpus (`tests/corpus/` of
    /// the faultline package): none stands for a message nobody has seen printed.
    #[test]
    fn every_terminal_marker_matches_a_real_corpus_log() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/corpus");
        let logs: Vec<Vec<u8>> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "log"))
            .map(|p| std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display())))
            .collect();
        assert!(logs.len() > 100, "{} corpus logs", logs.len());
        for (_, pattern) in MARKERS.iter().filter(|(m, _)| *m == Marker::Terminal) {
            let re = build_regex(pattern).expect("a marker compiles");
            let seen = logs.iter().any(|log| {
                log.split(|&b| b == b'\n')
                    .any(|line| re.is_match(line.strip_suffix(b"\r").unwrap_or(line)))
            });
            assert!(
                seen,
                "no corpus log has a line for the terminal marker {pattern:?}"
            );
        }
    }
}

#[cfg(test)]
mod layout_tests {
    use super::{HashedLayout, PrefilterLayout};

    #[test]
    fn layouts_read_as_db_check_prints_them() {
        let split = |packed_searchers, hashed| PrefilterLayout::Split {
            packed_searchers,
            hashed,
        };
        let hashed = |anchors, stride| Some(HashedLayout { anchors, stride });
        for (layout, words) in [
            (split(2, None), "2 SIMD packed searchers"),
            (split(1, None), "1 SIMD packed searcher"),
            (split(0, None), "none"),
            (
                split(0, hashed(40, 1)),
                "a hashed 4-byte prefilter over 40 anchors",
            ),
            (
                split(1, hashed(528, 4)),
                "1 SIMD packed searcher and a hashed 4-byte prefilter over 528 anchors (stride 4)",
            ),
            (PrefilterLayout::General, "Aho-Corasick automaton"),
        ] {
            assert_eq!(layout.to_string(), words);
        }
    }
}
