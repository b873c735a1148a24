//! Tools for the people who keep a signature set, over a corpus of logs with expected answers
//! (`NAME.expect.toml` sidecars): the corpus itself, a set's cost and accuracy on it
//! (`faultline bench`), and what changes between two sets (`faultline db diff`). A program
//! that only scans logs needs none of it.
//!
//! ```no_run
//! use faultline::tools::{profile_corpus, BenchOptions, Corpus};
//! use faultline::{Database, EmbeddedDatabase};
//!
//! let corpus = Corpus::load(std::path::Path::new("tests/corpus"))?;
//! let bench = profile_corpus(Database::embedded(), &corpus, &BenchOptions::default());
//! println!("{} of {} first findings right", bench.accuracy.passed, bench.accuracy.cases);
//! # Ok::<(), faultline::Error>(())
//! ```

mod bench;
mod corpus;
mod diff;

/// A signature set's cost profile over a corpus: throughput, per-signature confirm cost,
/// top-1 accuracy (`faultline bench` prints it as tables), and the verdict on two sets.
pub use bench::{
    compare_pass_times, profile_corpus, profile_corpus_sets, Accuracy, BenchOptions,
    CategoryAccuracy, Corpus, Cost, Miss, SetBench, Verdict, MIN_EFFECT,
};
/// A corpus of logs with their expected answers (`NAME.expect.toml` sidecars).
pub use corpus::{
    corpus_logs, load_corpus, precision_lint, Case, Composition, Expectation, Imprecision, Outcome,
    LOG_SUFFIXES, RUN_OUTCOMES, SIDECAR_SUFFIX,
};
/// What changed between two signature sets, and how their first findings differ on a corpus.
pub use diff::{
    diff_corpus, diff_sets, Changed, FindingChange, FirstFinding, Removed, SetDiff, MEANING_FIELDS,
};
