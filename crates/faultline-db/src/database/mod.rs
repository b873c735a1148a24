//! The compiled database's runtime side, the engine: [`Database`] (what a scan and a report
//! ask of it), the two-stage matcher the scan runs, the regex dialect every regex is built
//! in, and the archive format that stores a database. Nothing here uses the compiler
//! (`crate::compile`): a database loaded from an archive runs without it.

pub(crate) mod archive;
pub(crate) mod dfas;
pub(crate) mod dialect;
pub(crate) mod hashed;
pub(crate) mod matcher;
pub(crate) mod short;

/// Whether `hay` holds `needle` at `at`, with no library call when `needle` is 16 bytes or
/// shorter (nearly every anchor and literal comparison): two overlapping loads a side. A
/// `memcmp` call cost about 30 ns a comparison on a hit-dense log, 10% of its scan.
#[inline(always)]
pub(crate) fn holds_at(hay: &[u8], at: usize, needle: &[u8]) -> bool {
    let n = needle.len();
    let Some(h) = at.checked_add(n).and_then(|end| hay.get(at..end)) else {
        return false;
    };
    fn word<const W: usize>(b: &[u8], i: usize) -> [u8; W] {
        let mut w = [0u8; W];
        w.copy_from_slice(&b[i..i + W]);
        w
    }
    match n {
        0 => true,
        1..=3 => h[0] == needle[0] && h[n / 2] == needle[n / 2] && h[n - 1] == needle[n - 1],
        4..=7 => {
            word::<4>(h, 0) == word::<4>(needle, 0)
                && word::<4>(h, n - 4) == word::<4>(needle, n - 4)
        }
        8..=16 => {
            word::<8>(h, 0) == word::<8>(needle, 0)
                && word::<8>(h, n - 8) == word::<8>(needle, n - 8)
        }
        _ => h == needle,
    }
}

use std::sync::OnceLock;

pub(crate) use matcher::Matcher;
pub use matcher::{
    CandidateLine, CandidateLines, CandidateProfile, Cursor, HashedLayout, LineMatch, Marker,
    Owner, PrefilterLayout, Scratch,
};

use crate::signature::SignatureInfo;
use dialect::build_regex;
pub use dialect::MAX_CONFIRM_STATES;

/// A compiled, ready-to-scan signature database.
///
/// ```
/// use faultline_db::{load_sources, Database, SourceFile};
///
/// let db_toml = "name = \"mine\"\nversion = \"1.0.0\"\nformat = 2\n";
/// let sigs = r#"
/// [[signature]]
/// id = "pytorch.cuda.oom"
/// revision = 1
/// title = "CUDA out of memory"
/// role = "cause"
/// severity = "fatal"
/// category = "cuda-oom"
/// patterns = ['CUDA out of memory\. Tried to allocate (?P<size>\S+ [GM]iB)']
/// remediation = "Lower the batch size; {size} did not fit."
/// source = "pytorch: c10/cuda/CUDACachingAllocator.cpp"
/// examples = ["torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB."]
/// counterexamples = ["CUDA out of memory checks passed"]
/// survivable = false
/// "#;
/// let set = load_sources(vec![
///     SourceFile { path: "db.toml".into(), text: db_toml.into() },
///     SourceFile { path: "pytorch.toml".into(), text: sigs.into() },
/// ])
/// .unwrap();
/// let db = Database::compile(&set).unwrap();
/// let hit = db.match_line(b"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 3 has a total capacity of 79.19 GiB of which 1.01 GiB is free.");
/// let ids: Vec<&str> = hit.signatures.iter().map(|&s| db.signature(s).id.as_str()).collect();
/// assert!(ids.iter().any(|id| id.contains("oom")), "{ids:?}");
/// ```
pub struct Database {
    pub(crate) name: String,
    pub(crate) version: String,
    pub(crate) hash: String,
    pub(crate) signatures: Vec<SignatureInfo>,
    /// Per signature, the indices of its patterns.
    pub(crate) signature_patterns: Vec<Vec<u32>>,
    pub(crate) pattern_sources: Vec<String>,
    pub(crate) matcher: Matcher,
    pub(crate) capture_regexes: Vec<OnceLock<Option<regex_automata::meta::Regex>>>,
}

impl std::fmt::Debug for Database {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Database")
            .field("name", &self.name)
            .field("version", &self.version)
            .field("hash", &self.hash)
            .field("signatures", &self.signatures.len())
            .finish()
    }
}

impl Database {
    /// The database's name, from `db.toml`.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The database's calendar version, from `db.toml`.
    pub fn version(&self) -> &str {
        &self.version
    }

    /// The database hash: the compiled payload (what an archive stores, without its DFAs)
    /// and the compiler's revision, hashed; equal for two compilations of the same set.
    pub fn hash(&self) -> &str {
        &self.hash
    }

    /// Every signature, in index order.
    pub fn signatures(&self) -> &[SignatureInfo] {
        &self.signatures
    }

    /// The signature with index `index` (as found in [`LineMatch::signatures`]).
    pub fn signature(&self, index: u32) -> &SignatureInfo {
        &self.signatures[index as usize]
    }

    /// The indices of signature `index`'s patterns (into [`Database::pattern_sources`]).
    pub fn signature_patterns(&self, index: u32) -> &[u32] {
        &self.signature_patterns[index as usize]
    }

    /// The source text of every pattern, in index order.
    pub fn pattern_sources(&self) -> &[String] {
        &self.pattern_sources
    }

    /// The prefilter's anchors and whether packed SIMD searchers hold every one of them.
    pub fn anchors(&self) -> (&[Vec<u8>], bool) {
        (self.matcher.anchors(), self.matcher.is_packed())
    }

    /// What kind of prefilter runs over the input, in words (`db check` prints it): the
    /// [`PrefilterLayout`]'s `Display`.
    pub fn prefilter_kind(&self) -> String {
        self.prefilter_layout().to_string()
    }

    /// How the prefilter is laid out: packed searchers and a hashed prefilter, or one
    /// general automaton.
    ///
    /// ```
    /// use faultline_db::{load_dir, Database, PrefilterLayout};
    ///
    /// let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../signatures");
    /// let db = Database::compile(&load_dir(&dir).unwrap()).unwrap();
    /// // The default set: short anchors in packed searchers, the others hashed.
    /// let PrefilterLayout::Split { packed_searchers, hashed: Some(hashed) } = db.prefilter_layout()
    /// else {
    ///     panic!("the default set has a split layout");
    /// };
    /// assert!(packed_searchers >= 1 && hashed.anchors > 100);
    /// assert!(db.prefilter_kind().contains("hashed 4-byte prefilter"));
    /// ```
    pub fn prefilter_layout(&self) -> PrefilterLayout {
        self.matcher.prefilter_layout()
    }

    /// Per anchor (in [`Database::anchors`] order): how often it is expected to occur per
    /// MiB of ordinary serving log, as estimated when the anchors were chosen; empty for a
    /// database loaded from an archive (rates are not stored).
    pub fn anchor_rates(&self) -> &[f64] {
        self.matcher.anchor_rates()
    }

    /// The required literals and the pattern indices that own each.
    pub fn required_literals(&self) -> impl Iterator<Item = (&[u8], &[u32])> {
        self.matcher.members()
    }

    /// Counts, over `sample`, the lines the prefilter hands to confirmation and how often
    /// each anchor is the first on such a line: the candidate rate `db check` reports.
    pub fn candidate_profile(&self, sample: &[u8]) -> CandidateProfile {
        self.matcher.candidate_profile(sample)
    }

    /// The candidate lines of `buf` in order, each with the first anchor found on it: the
    /// lines a scan confirms.
    ///
    /// ```
    /// use faultline_db::{load_dir, Database};
    ///
    /// let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../signatures");
    /// let db = Database::compile(&load_dir(&dir).unwrap()).unwrap();
    /// let log = b"INFO ready\nRuntimeError: CUDA error: out of memory\nINFO bye\n";
    /// let lines: Vec<&[u8]> = db.candidate_lines(log).map(|c| &log[c.line]).collect();
    /// assert_eq!(lines, [&b"RuntimeError: CUDA error: out of memory"[..]]);
    /// ```
    pub fn candidate_lines<'a>(&'a self, buf: &'a [u8]) -> CandidateLines<'a> {
        self.matcher.candidate_lines(buf)
    }

    /// The start of the first candidate (an anchor occurrence) in `hay[start..]`, as an index
    /// into `hay`: the prefilter's step of a scan.
    #[inline]
    pub fn find_candidate(&self, hay: &[u8], start: usize) -> Option<usize> {
        self.matcher.find_candidate(hay, start)
    }

    /// [`Database::find_candidate`] for a scan that only moves forward through `hay`, with the
    /// anchor found there (its index), for [`Database::confirm_in`]: `cursor` remembers each
    /// searcher's next hit (start a fresh cursor for each buffer).
    #[inline]
    pub fn find_anchor_from(
        &self,
        hay: &[u8],
        start: usize,
        cursor: &mut Cursor,
    ) -> Option<(usize, usize)> {
        self.matcher.find_anchor_from(hay, start, cursor)
    }

    /// Confirms the line `hay[start..end]` (no terminator) on which a scan of `hay` with
    /// `cursor` found anchor `anchor` at `hit` ([`Database::find_anchor_from`]): the line's
    /// other anchors are found by the same search that goes on to the next candidate, so no
    /// byte is searched twice. Gives what [`Database::confirm_from`] gives for the line from
    /// `hit`.
    #[inline]
    pub fn confirm_in(
        &self,
        hay: &[u8],
        line: (usize, usize),
        found: (usize, usize),
        cursor: &mut Cursor,
        scratch: &mut Scratch,
        out: &mut LineMatch,
    ) {
        self.matcher
            .confirm_in(hay, line, found, cursor, scratch, out);
    }

    /// Confirms one candidate line (no terminator) into `out`, for a line on which no anchor
    /// starts before `from` (a scan that found the line by its first anchor does not search
    /// the bytes before it again).
    #[inline]
    pub fn confirm_from(
        &self,
        line: &[u8],
        from: usize,
        scratch: &mut Scratch,
        out: &mut LineMatch,
    ) {
        self.matcher.confirm_from(line, from, scratch, out);
    }

    /// Whether pattern `p` (by index, as in [`Database::pattern_owners`]) matches anywhere in
    /// `line`: one pattern's confirmation alone, for a cost profile.
    pub fn pattern_matches(&self, p: usize, line: &[u8]) -> bool {
        self.matcher.is_match(p, line)
    }

    /// Who each compiled pattern belongs to, by pattern index: the signatures' patterns (in
    /// [`Database::pattern_sources`] order), then the structural markers'.
    pub fn pattern_owners(&self) -> impl ExactSizeIterator<Item = Owner> + '_ {
        self.matcher.patterns.iter().map(|p| p.owner)
    }

    /// The pattern a candidate line is charged to in a cost profile, so that every candidate
    /// line is charged once (see the matcher's rule); None when no anchor is on the line.
    pub fn charged_pattern(&self, line: &[u8]) -> Option<u32> {
        self.matcher.charged_pattern(line)
    }

    /// Matches one line (without its terminator) the way a scan does, prefilter included.
    pub fn match_line(&self, line: &[u8]) -> LineMatch {
        let mut out = LineMatch::default();
        if self.matcher.find_candidate(line, 0).is_some() {
            self.matcher
                .confirm(line, &mut Scratch::default(), &mut out);
        }
        out
    }

    /// The patterns skipped because confirming them would cost more than the confirmation
    /// budget allows (over [`MAX_CONFIRM_STATES`] NFA states): each with its signature's
    /// index, its source and its NFA states. They confirm no line; a caller warns of them,
    /// naming the signature. Checked from each pattern's source, also for a database loaded
    /// from an archive.
    pub fn skipped_patterns(&self) -> impl Iterator<Item = (u32, &str, usize)> + '_ {
        self.matcher
            .patterns
            .iter()
            .zip(&self.pattern_sources)
            .filter_map(|(p, source)| match (p.owner, p.over_budget) {
                (Owner::Signature(s), Some(states)) => Some((s, source.as_str(), states)),
                _ => None,
            })
    }

    /// Whether a pattern of signature `sig` has a match in `text` that starts before
    /// `prefix_end` (one unanchored search: the leftmost match starts there) or exactly at
    /// one of `points` (an anchored search from each; what comes before a point still counts
    /// for `^` and `\b`): where a signature anchored at the message may match (see
    /// [`crate::Anchor`]). Run only on lines the scan already matched: it builds the
    /// pattern's full regex at its first use, as [`Database::captures`] does.
    pub fn matches_from(&self, sig: u32, text: &[u8], prefix_end: usize, points: &[usize]) -> bool {
        self.signature_patterns[sig as usize].iter().any(|&p| {
            if self
                .matcher
                .patterns
                .get(p as usize)
                .is_none_or(|c| c.over_budget.is_some())
            {
                return false;
            }
            let re = self.capture_regexes[p as usize]
                .get_or_init(|| build_regex(&self.pattern_sources[p as usize]).ok());
            re.as_ref()
                .is_some_and(|re| match_starts(re, text, prefix_end, points))
        })
    }

    /// [`Database::matches_from`] for a structural marker's patterns (the same in every
    /// database): whether the line carries `marker` where the software prints it.
    pub fn marker_matches_from(
        marker: Marker,
        text: &[u8],
        prefix_end: usize,
        points: &[usize],
    ) -> bool {
        static MARKER_REGEXES: OnceLock<Vec<(Marker, regex_automata::meta::Regex)>> =
            OnceLock::new();
        MARKER_REGEXES
            .get_or_init(|| {
                matcher::MARKERS
                    .iter()
                    .filter_map(|(m, source)| Some((*m, build_regex(source).ok()?)))
                    .collect()
            })
            .iter()
            .any(|(m, re)| *m == marker && match_starts(re, text, prefix_end, points))
    }

    /// Whether a pattern of signature `sig` matches anywhere in `text` (the full regex, as
    /// [`Database::matches_from`] runs it).
    pub fn matches_in(&self, sig: u32, text: &[u8]) -> bool {
        self.matches_from(sig, text, usize::MAX, &[])
    }

    /// The named captures of signature `sig` on `line` (the first pattern that matches).
    pub fn captures(&self, sig: u32, line: &[u8]) -> Vec<(String, String)> {
        let mut out = Vec::new();
        for &p in &self.signature_patterns[sig as usize] {
            if self
                .matcher
                .patterns
                .get(p as usize)
                .is_some_and(|c| c.over_budget.is_some())
            {
                continue;
            }
            let re = self.capture_regexes[p as usize]
                .get_or_init(|| build_regex(&self.pattern_sources[p as usize]).ok());
            let Some(re) = re else { continue };
            let mut caps = re.create_captures();
            re.captures(line, &mut caps);
            if !caps.is_match() {
                continue;
            }
            for (i, name) in re
                .group_info()
                .pattern_names(regex_automata::PatternID::ZERO)
                .enumerate()
            {
                if let (Some(name), Some(span)) = (name, caps.get_group(i)) {
                    out.push((
                        name.to_string(),
                        String::from_utf8_lossy(&line[span.range()]).into_owned(),
                    ));
                }
            }
            break;
        }
        out
    }
}

/// Whether `re` has a match in `text` that starts before `prefix_end` or exactly at one of
/// `points` (see [`Database::matches_from`]).
fn match_starts(
    re: &regex_automata::meta::Regex,
    text: &[u8],
    prefix_end: usize,
    points: &[usize],
) -> bool {
    let in_prefix = prefix_end > 0
        && re
            .find(regex_automata::Input::new(text))
            .is_some_and(|m| m.start() < prefix_end);
    in_prefix
        || points.iter().any(|&at| {
            at <= text.len()
                && re.is_match(
                    regex_automata::Input::new(text)
                        .range(at..)
                        .anchored(regex_automata::Anchored::Yes),
                )
        })
}

/// The prefilters' reference: leftmost-first Aho-Corasick over `anchors`, as (anchor,
/// position) from a start.
#[cfg(test)]
pub(crate) fn leftmost_first(
    anchors: &[Vec<u8>],
) -> impl Fn(&[u8], usize) -> Option<(usize, usize)> {
    let ac = aho_corasick::AhoCorasick::builder()
        .match_kind(aho_corasick::MatchKind::LeftmostFirst)
        .build(anchors)
        .expect("builds");
    move |hay, start| {
        ac.find(aho_corasick::Input::new(hay).range(start..))
            .map(|m| (m.pattern().as_usize(), m.start()))
    }
}

#[cfg(test)]
mod holds_at_tests {
    proptest::proptest! {
        /// The same answer as `starts_with` at every place, for needles of every length class.
        #[test]
        fn holds_at_is_starts_with(
            hay in proptest::collection::vec(b'a'..b'c', 0..40),
            needle in proptest::collection::vec(b'a'..b'c', 0..24),
        ) {
            for at in 0..=hay.len() + 1 {
                let want = hay.get(at..).is_some_and(|rest| rest.starts_with(&needle));
                proptest::prop_assert_eq!(super::holds_at(&hay, at, &needle), want, "at {}", at);
            }
        }
    }
}
