//! Typed errors of the signature database. A program turns each into one readable line.

use std::fmt;
use std::path::PathBuf;

/// A place in a signature file: `file:line:column`, 1-based.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Location {
    /// The signature file.
    pub file: PathBuf,
    /// 1-based line.
    pub line: usize,
    /// 1-based column, in characters.
    pub column: usize,
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}", self.file.display(), self.line, self.column)
    }
}

/// One problem found while loading or validating a signature set.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Problem {
    /// Where the problem is.
    pub location: Location,
    /// What is wrong, in one line.
    pub message: String,
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.location, self.message)
    }
}

/// Everything that can go wrong with a signature database: reading its files, the
/// signatures themselves, a compiled archive, a limit, an id no signature has. (The
/// `faultline` crate's own errors, about logs, corpora and reports, wrap this one.)
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Reading or writing a signature file or an archive failed.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file or stream.
        path: PathBuf,
        #[source]
        /// The I/O error.
        source: std::io::Error,
    },
    /// The signature set is invalid. The first problem is shown; all are kept.
    #[error("{}{}", problems.first().map(|p| p.to_string()).unwrap_or_default(), more_problems(problems.len()))]
    Signatures {
        /// Every problem found, in file order.
        problems: Vec<Problem>,
    },
    /// A compiled database archive could not be used.
    #[error("{}: {reason}", path.display())]
    Archive {
        /// The archive file (or `<archive>` for bytes).
        path: PathBuf,
        /// Why it cannot be used.
        reason: ArchiveProblem,
    },
    /// A resource limit was exceeded while compiling or archiving a signature set.
    #[error("{0}")]
    Limit(#[from] Limit),
    /// A signature id to disable that no signature has.
    #[error("{0}: no signature has this id, so it cannot be disabled")]
    UnknownId(String),
}

/// A limit a signature set or a database went over, or an internal pattern that does not
/// build (a bug of this crate, reported rather than panicked on).
#[derive(Debug, thiserror::Error)]
pub enum Limit {
    /// More patterns than one database may hold.
    #[error("the signature set has {count} patterns; at most {max} are allowed")]
    Patterns {
        /// Patterns in the set.
        count: usize,
        /// The most allowed.
        max: usize,
    },
    /// The compiled regexes together take more memory than allowed.
    #[error("{location}: the compiled patterns take over {mib} MiB together; at most {max_mib} MiB are allowed (split the set or simplify its largest patterns)")]
    RegexMemory {
        /// The pattern that went over.
        location: Location,
        /// MiB taken with it.
        mib: usize,
        /// The most allowed, in MiB.
        max_mib: usize,
    },
    /// An internal structural marker does not parse.
    #[error("internal marker: {0}")]
    MarkerSyntax(#[source] Box<regex_syntax::Error>),
    /// An internal structural marker does not build.
    #[error("internal marker: {0}")]
    MarkerRegex(#[source] Box<regex_automata::meta::BuildError>),
    /// An internal structural marker has no confirmation DFA.
    #[error("internal marker pattern has no DFA: {0}")]
    MarkerDfa(#[source] DfaProblem),
    /// The prefilter's automaton could not be built from the anchors.
    #[error("{0}")]
    Matcher(#[source] aho_corasick::BuildError),
    /// The database could not be serialised into an archive.
    #[error("cannot serialise the database: {0}")]
    Serialise(#[source] rkyv::rancor::Error),
}

/// What makes an archive usable again, for a program to word as a hint (the command line
/// names its `db compile` command).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArchiveRemedy {
    /// Compile the signature set into a new archive.
    Recompile,
    /// The archive is newer than this build: use a newer build, or compile a new archive.
    UpgradeOrRecompile,
}

/// Why a compiled database archive cannot be used. Each message is one line.
#[derive(Debug, thiserror::Error)]
pub enum ArchiveProblem {
    /// Larger than any archive may be.
    #[error("larger than {max} bytes; not a faultline archive")]
    TooLarge {
        /// The most an archive may hold.
        max: u64,
    },
    /// The file got shorter while it was read.
    #[error("truncated while being read")]
    TruncatedWhileRead,
    /// It does not start with the archive's magic bytes.
    #[error("not a faultline database archive (bad magic bytes)")]
    BadMagic,
    /// Shorter than the header.
    #[error("truncated: {len} bytes, shorter than the {header}-byte header")]
    ShortHeader {
        /// Its length.
        len: usize,
        /// The header's length.
        header: usize,
    },
    /// Written in another archive format.
    #[error("archive format {found}, this faultline reads format {reads}")]
    Format {
        /// The archive's format.
        found: u32,
        /// The format this build reads.
        reads: u32,
    },
    /// The header's reserved bytes are not zero.
    #[error("corrupt header (reserved bytes are not zero)")]
    ReservedBytes,
    /// The payload is not as long as the header says.
    #[error("{}: the header says {len} payload bytes, the file holds {have}", if have < len { "truncated" } else { "trailing bytes" })]
    PayloadLength {
        /// The length the header gives.
        len: u64,
        /// The bytes after the header.
        have: u64,
    },
    /// The payload's hash is not the one stored in the header.
    #[error("content hash mismatch (stored {stored:016x}, computed {computed:016x}): the file is corrupt")]
    HashMismatch {
        /// The hash in the header.
        stored: u64,
        /// The payload's hash.
        computed: u64,
    },
    /// The payload is not a valid serialised database.
    #[error("invalid archive payload: {}", one_line(.0))]
    Payload(#[source] rkyv::rancor::Error),
    /// The payload is well-formed but its content is inconsistent.
    #[error("invalid archive: {0}")]
    Invalid(#[from] ArchiveInvalid),
    /// Built with other internal structural markers than this build's.
    #[error("built by a faultline with other structural markers")]
    OtherMarkers,
    /// A stored confirmation DFA does not deserialise.
    #[error("pattern {pattern}: stored DFA is not usable ({})", one_line(.source))]
    Dfa {
        /// The pattern's index.
        pattern: usize,
        /// Why it does not.
        #[source]
        source: regex_automata::util::wire::DeserializeError,
    },
}

impl ArchiveProblem {
    /// What makes the archive usable again, when compiling a new one does.
    pub fn remedy(&self) -> Option<ArchiveRemedy> {
        match self {
            ArchiveProblem::Format { found, reads } if found > reads => {
                Some(ArchiveRemedy::UpgradeOrRecompile)
            }
            ArchiveProblem::Format { .. }
            | ArchiveProblem::HashMismatch { .. }
            | ArchiveProblem::OtherMarkers
            | ArchiveProblem::Dfa { .. } => Some(ArchiveRemedy::Recompile),
            _ => None,
        }
    }
}

/// An inconsistency inside a well-formed archive payload (what validation checks before a
/// database is built from it).
#[derive(Debug, thiserror::Error)]
pub enum ArchiveInvalid {
    /// Fewer patterns than the structural markers alone need.
    #[error("{patterns} patterns, fewer than the {markers} markers")]
    FewerThanMarkers {
        /// Patterns stored.
        patterns: usize,
        /// Markers every database holds.
        markers: usize,
    },
    /// More signature patterns than a database may hold.
    #[error("{0} patterns, over the limit")]
    TooManyPatterns(usize),
    /// A signature's role code is unknown.
    #[error("signature {0}: role code")]
    RoleCode(usize),
    /// A signature's severity code is unknown.
    #[error("signature {0}: severity code")]
    SeverityCode(usize),
    /// A signature's anchor code is unknown.
    #[error("signature {0}: anchor code")]
    AnchorCode(usize),
    /// A signature's quiet-level bits are unknown.
    #[error("signature {0}: quiet-level code")]
    QuietLevelCode(usize),
    /// A signature lists a pattern that belongs to another owner.
    #[error("signature {signature} lists pattern {pattern}, not its own")]
    ForeignPattern {
        /// The signature's index.
        signature: usize,
        /// The pattern's index.
        pattern: u32,
    },
    /// A pattern names a signature that does not exist or is a marker.
    #[error("pattern {pattern} names signature {signature} of {signatures}")]
    PatternOwner {
        /// The pattern's index.
        pattern: usize,
        /// The signature it names.
        signature: u32,
        /// Signatures stored.
        signatures: usize,
    },
    /// A pattern its signature does not list.
    #[error("pattern {0} is not listed by its signature")]
    Unlisted(usize),
    /// A pattern with an empty required literal.
    #[error("pattern {0} has an empty required literal")]
    EmptyLiteral(usize),
    /// A pattern without a required literal.
    #[error("pattern {0} has no required literal")]
    NoLiteral(usize),
    /// A pattern whose DFA length is past its stored words.
    #[error("pattern {0}: DFA length")]
    DfaLength(usize),
    /// An empty prefilter anchor.
    #[error("empty anchor")]
    EmptyAnchor,
    /// More anchors said to be in the packed searchers than there are.
    #[error("{packed} packed anchors of {anchors}")]
    PackedAnchors {
        /// The stored count.
        packed: usize,
        /// The anchors stored.
        anchors: usize,
    },
    /// The prefilter's automaton does not build from the stored anchors.
    #[error("{}", one_line(.0))]
    Matcher(#[source] aho_corasick::BuildError),
    /// A required literal that no prefilter anchor covers.
    #[error("a required literal holds no prefilter anchor")]
    UnanchoredLiteral,
}

/// An error's text on one line (a library's message may hold line breaks).
fn one_line(e: &dyn fmt::Display) -> String {
    e.to_string().replace(['\n', '\r'], " ")
}

/// Why a pattern's confirmation DFA is not stored in an archive (the pattern is then compiled
/// at first use).
#[derive(Clone, Debug, thiserror::Error)]
pub enum DfaProblem {
    /// The DFA does not build (a construct a DFA cannot express, or over the build limits).
    #[error("{0}")]
    Build(#[source] Box<regex_automata::dfa::dense::BuildError>),
    /// The DFA builds but is larger than the archive allows.
    #[error("DFA is {bytes} bytes, over the {limit}-byte limit")]
    TooLarge {
        /// Its size.
        bytes: usize,
        /// The most allowed.
        limit: usize,
    },
}

/// ` (and N more problems)` after the first of `n` problems, or nothing for one.
fn more_problems(n: usize) -> String {
    if n > 1 {
        format!(
            " (and {} more problem{})",
            n - 1,
            if n == 2 { "" } else { "s" }
        )
    } else {
        String::new()
    }
}

/// Shorthand for faultline results.
pub type Result<T, E = Error> = std::result::Result<T, E>;
