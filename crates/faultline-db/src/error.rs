//! Typed errors. The binary turns each into one readable line.

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

/// Everything that can go wrong in faultline.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Reading a file or stream failed.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file or stream.
        path: PathBuf,
        #[source]
        /// The I/O error.
        source: std::io::Error,
    },
    /// Reading an input failed part-way; findings before `offset` were kept.
    #[error("{}: at byte offset {offset}: {source}", path.display())]
    Input {
        /// The input.
        path: PathBuf,
        /// How far reading got, in bytes.
        offset: u64,
        #[source]
        /// The I/O error.
        source: std::io::Error,
    },
    /// The signature set is invalid. The first problem is shown; all are kept.
    #[error("{}{}", problems.first().map(|p| p.to_string()).unwrap_or_default(), more(problems.len()))]
    Signatures {
        /// Every problem found, in file order.
        problems: Vec<Problem>,
    },
    /// A corpus directory is malformed (a sidecar that does not parse, a log without its pair).
    /// The first problem is shown; all are kept.
    #[error("{}{}", problems.first().map(|p| p.to_string()).unwrap_or_default(), more(problems.len()))]
    Corpus {
        /// Every problem found.
        problems: Vec<Problem>,
    },
    /// A line of a JSON-lines report file (`faultline summary`) is not a report.
    #[error("{0}")]
    Report(Problem),
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
    /// The caller asked for something that cannot be done (an unknown id, a bad argument).
    #[error("{0}")]
    Usage(#[from] Usage),
}

/// A request that cannot be done as asked.
#[derive(Debug, thiserror::Error)]
pub enum Usage {
    /// A shard that is not `I/N` with `1 <= I <= N`.
    #[error("shard {0}: expected I/N with 1 <= I <= N")]
    Shard(String),
    /// A glob that does not parse.
    #[error("{what} {glob}: {source}")]
    Glob {
        /// Which list it is in (`glob`, `exclude glob`).
        what: &'static str,
        /// The glob as given.
        glob: String,
        /// Why it does not parse.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// A list of globs that does not build into one matcher.
    #[error("{what}: {source}")]
    GlobSet {
        /// Which list it is (`glob`, `exclude glob`).
        what: &'static str,
        /// Why it does not build.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// Standard input named more than once, in any form: `-`, or a path to the same stream
    /// as file descriptor 0 (`/dev/stdin`, `/dev/fd/0`, `/proc/self/fd/0`).
    #[error("standard input is named more than once (`-`, /dev/stdin, /dev/fd/0 and /proc/self/fd/0 all name it): one stream can be read only once")]
    StdinTwice,
    /// A corpus directory without logs.
    #[error("{}: no logs (*.log, *.log.gz, *.log.zst, *.gz, *.zst) in this corpus", .0.display())]
    EmptyCorpus(PathBuf),
    /// A signature id to disable that no signature has.
    #[error("{0}: no signature has this id, so it cannot be disabled")]
    UnknownId(String),
    /// A calling program's own message about its arguments (a command-line flag, a keyword
    /// argument); the libraries never make one.
    #[error("{0}")]
    Caller(String),
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

/// What the binary's hints say to do about an archive it cannot use.
const RECOMPILE: &str = "recompile with `faultline db compile`";

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
    #[error("archive format {found}, this faultline reads format {reads}; {}", if found > reads { format!("upgrade faultline or {RECOMPILE}") } else { RECOMPILE.to_string() })]
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
    #[error("content hash mismatch (stored {stored:016x}, computed {computed:016x}): the file is corrupt; {RECOMPILE}")]
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
    #[error("built by a faultline with other structural markers; {RECOMPILE}")]
    OtherMarkers,
    /// A stored confirmation DFA does not deserialise.
    #[error("pattern {pattern}: stored DFA is not usable ({}); {RECOMPILE}", one_line(.source))]
    Dfa {
        /// The pattern's index.
        pattern: usize,
        /// Why it does not.
        #[source]
        source: regex_automata::util::wire::DeserializeError,
    },
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

fn more(n: usize) -> String {
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
