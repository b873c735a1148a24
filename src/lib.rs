//! faultline: a versioned database of failure signatures for ML-serving and GPU logs,
//! compiled into a multi-pattern scanner that names the root cause of a failure.
//!
//! Data flows one way: signature files ([`load_dir`]) are compiled into a [`Database`]
//! (in the `faultline-db` crate; [`EmbeddedDatabase`] gives the one built into this crate),
//! which scans an [`Input`] ([`open`] a path: mmap, stream, `.gz`, `.zst`) into hits, which
//! the analysis turns into a ranked [`Report`] ([`analyze_input`], [`analyze_path`]).
//!
//! Around that pipeline: [`walk`] turns directories into the inputs of a sweep (globs,
//! shards), [`Summary`] tables many reports, and [`profile_corpus`] measures a signature set
//! over a corpus of logs with expected answers. The command line (`faultline`) is a binary
//! of this package built on the same face; without the default `cli` feature the library
//! pulls in no clap or indicatif. See docs/ARCHITECTURE.md for the crate and module map.
//!
//! ```
//! use faultline::{analyze_input, AnalyzeOptions, Database, EmbeddedDatabase, Input, ScanOptions};
//! use std::path::Path;
//!
//! let log = "\
//! (Worker_TP7 pid=207086) INFO 02-20 21:35:48 [cuda.py:456] Using backend AttentionBackendEnum.FLASH_ATTN for vit attention
//! torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 3 has a total capacity of 79.19 GiB of which 1.01 GiB is free.
//! RuntimeError: Engine core initialization failed. See root cause above. Failed core proc(s): {}
//! ";
//! let input = Input::from_bytes(Path::new("launch.log"), log.as_bytes().to_vec());
//! let report = analyze_input(Database::embedded(), input, &ScanOptions::default(), AnalyzeOptions::default());
//! let cause = report.root_cause().expect("diagnosed");
//! assert_eq!(cause.line, 2);
//! assert_eq!(cause.category, "cuda-oom");
//! ```

#![deny(missing_docs, missing_debug_implementations)]

// The modules are not the face: everything a crate user calls is re-exported below. They stay
// reachable (hidden from the docs) for this crate's binary, tests, benches and fuzz targets,
// which reach internals such as the chunked scanner and the corpus reader.
#[doc(hidden)]
pub mod analyze;
#[doc(hidden)]
pub mod bench;
#[doc(hidden)]
pub mod corpus;
#[doc(hidden)]
pub mod diff;
mod embedded;
#[doc(hidden)]
pub mod report;
#[doc(hidden)]
pub mod sanitize;
#[doc(hidden)]
pub mod scan;
#[doc(hidden)]
pub mod summary;

/// The signature format, its compiler and the compiled database live in the `faultline-db`
/// crate; these re-exports keep their module paths under `faultline::`.
#[doc(hidden)]
pub use faultline_db::{error, signature, synth};

/// From a signature set to a [`Database`] (re-exported from `faultline-db`), and the set
/// built into this crate.
#[doc(hidden)]
pub mod compile {
    pub use crate::embedded::signature_set as embedded_set;
    pub use faultline_db::compile::*;
}

// The face.

/// Analysis: from an input to a ranked [`Report`].
pub use analyze::{
    analyze_input, analyze_path, failed_input_report, AnalyzeOptions, Analyzer,
    DEFAULT_MAX_FINDINGS,
};
/// A signature set's cost profile over a corpus: throughput, per-signature confirm cost,
/// top-1 accuracy (`faultline bench` prints it as tables).
pub use bench::{run as profile_corpus, Accuracy, BenchOptions, Corpus, Cost, SetBench};
/// The compiled signature database and the one built into this crate.
pub use compile::{Database, SignatureInfo};
pub use embedded::EmbeddedDatabase;
/// Typed errors.
pub use error::{
    ArchiveInvalid, ArchiveProblem, DfaProblem, Error, Limit, Location, Problem, Result, Usage,
};
/// The report of one input and its parts (the JSON contract).
pub use report::{
    raw_path, render_human, render_human_with_hints, Counts, DatabaseRef, Finding, FindingRole,
    HumanHints, MatchedLine, Report, SCHEMA_VERSION,
};
/// Inputs and scan options; the parallel directory walk of a sweep.
pub use scan::walk::{walk, Entry, Shard, SkipReason, WalkOptions};
pub use scan::{open, Input, InputKind, ScanOptions, MAX_THREADS};
/// Signature files: load a directory, the set, its enums.
pub use signature::{load_dir, Role, Severity, SignatureSet};
/// Many reports as one table per signature.
pub use summary::{table, Summary, SummaryBuilder};

// Here rather than beside the type, whose fields are the analysis' own.
impl std::fmt::Debug for Analyzer<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Analyzer").finish_non_exhaustive()
    }
}

/// The README's examples, run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
