//! The errors of the `faultline` crate: its own kinds (inputs, corpora, report files, requests
//! it cannot do) and the signature database's ([`Error::Db`]), wrapped. A program turns each
//! into one readable line; the command line adds its hints (the command that fixes an archive).

use std::path::PathBuf;

use faultline_db::Problem;

/// The signature database's errors (signature files, archives, limits, unknown ids), as
/// [`Error::Db`] holds them: `Error::Db(DbError::Signatures { problems })`.
pub type DbError = faultline_db::Error;

/// Everything that can go wrong in faultline.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The signature database: a signature file, an archive, a limit, an unknown id.
    #[error(transparent)]
    Db(#[from] DbError),
    /// Opening or reading a file or stream (an input, a corpus file, a report file) failed.
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
    /// A corpus directory is malformed (a sidecar that does not parse, a log without its pair).
    /// The first problem is shown; all are kept.
    #[error("{}", first_of(problems))]
    Corpus {
        /// Every problem found.
        problems: Vec<Problem>,
    },
    /// A line of a JSON-lines report file (`faultline summary`) is not a report.
    #[error("{0}")]
    Report(Problem),
    /// A baseline (good runs of the same job) could not be loaded: the error names its path
    /// (and byte offset); nothing is scanned against half a baseline.
    #[error("--baseline: {0}")]
    Baseline(Box<Error>),
    /// The caller asked for something that cannot be done (a bad shard or glob, standard
    /// input named twice, an empty corpus, a calling program's own argument).
    #[error("{0}")]
    Usage(#[from] Usage),
}

/// The first of `problems`, and how many more there are.
fn first_of(problems: &[Problem]) -> String {
    match problems {
        [] => String::new(),
        [one] => one.to_string(),
        [first, rest @ ..] => format!(
            "{first} (and {} more problem{})",
            rest.len(),
            if rest.len() == 1 { "" } else { "s" }
        ),
    }
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
    /// A sweep whose walk selected no input (an empty directory, filters that leave
    /// nothing): its roots and filters, as [`crate::WalkOptions::describe`] words them.
    #[error("no input was selected from {0}")]
    NothingSelected(String),
    /// A corpus directory without logs.
    #[error("{}: no logs (*.log, *.log.gz, *.log.zst, *.gz, *.zst) in this corpus", .0.display())]
    EmptyCorpus(PathBuf),
    /// A calling program's own message about its arguments (a command-line flag, a keyword
    /// argument); the library never makes one.
    #[error("{0}")]
    Caller(String),
}

impl Error {
    /// Every problem an error of signature files or of a corpus holds (the first is in its
    /// message); none for other errors.
    pub fn problems(&self) -> &[Problem] {
        match self {
            Error::Db(DbError::Signatures { problems }) | Error::Corpus { problems } => problems,
            _ => &[],
        }
    }
}

/// Shorthand for faultline results.
pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;
    use faultline_db::Location;

    fn problem(line: usize) -> Problem {
        Problem {
            location: Location {
                file: "c.expect.toml".into(),
                line,
                column: 1,
            },
            message: "bad".into(),
        }
    }

    #[test]
    fn corpus_errors_show_the_first_problem_and_count_the_rest() {
        let e = |n: usize| Error::Corpus {
            problems: (1..=n).map(problem).collect(),
        };
        assert_eq!(e(1).to_string(), "c.expect.toml:1:1: bad");
        assert_eq!(
            e(2).to_string(),
            "c.expect.toml:1:1: bad (and 1 more problem)"
        );
        assert_eq!(
            e(3).to_string(),
            "c.expect.toml:1:1: bad (and 2 more problems)"
        );
        assert_eq!(e(3).problems().len(), 3);
    }

    #[test]
    fn database_errors_keep_their_message() {
        let e: Error = DbError::UnknownId("x.y.z".into()).into();
        assert_eq!(
            e.to_string(),
            "x.y.z: no signature has this id, so it cannot be disabled"
        );
    }
}
