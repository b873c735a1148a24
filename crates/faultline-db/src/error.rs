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
        reason: String,
    },
    /// A resource limit was exceeded while compiling a signature set.
    #[error("{0}")]
    Limit(String),
    /// The caller asked for something that cannot be done (an unknown id, a bad argument).
    #[error("{0}")]
    Usage(String),
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
