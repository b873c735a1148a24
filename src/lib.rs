//! faultline: a versioned database of failure signatures for ML-serving and GPU logs,
//! compiled into a multi-pattern scanner that names the root cause of a failure.
//!
//! Data flows one way: signature files ([`load_dir`]) are compiled into a [`Database`]
//! (in the `faultline-db` crate; [`EmbeddedDatabase`] gives the one built into this crate),
//! which scans an [`Input`] ([`open`] a path: mmap, stream, `.gz`, `.zst`) into hits, which
//! the analysis turns into a ranked [`Report`] ([`analyze_input`], [`analyze_path`]).
//!
//! Around that pipeline: [`walk`] turns directories into the entries of a sweep (globs;
//! [`Shard`] keeps one shard of them), [`sweep`] turns entries into reports, [`Summary`]
//! tables many reports, and [`tools`] measures a signature set over a corpus of logs with
//! expected answers. The command line (`faultline`) is a binary
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

// The modules are private: everything a crate user (this package's binary, the Python
// package, tests, benches, fuzz targets and tools included) calls is re-exported below.
mod analyze;
mod embedded;
mod error;
mod report;
mod sanitize;
mod scan;
mod summary;
mod sweep;
pub mod tools;

// The signature format, its compiler and the compiled database live in the `faultline-db`
// crate: the modules above use its face (`faultline_db::…`), and this face re-exports what
// a user of this crate needs of it.

// The face.

/// Line structure: a raw line's process tag, level, timestamp and message, and the key
/// findings fold by.
pub use analyze::line::{fold_key, parse_line, LineInfo};
/// Analysis: from an input to a ranked [`Report`].
pub use analyze::{analyze_input, analyze_path, AnalyzeOptions, Analyzer, DEFAULT_MAX_FINDINGS};
/// The job view (`--job`): many inputs of one distributed job as one report, its root cause
/// the first failure in time that does not wait on a peer.
pub use analyze::{analyze_job, DEFAULT_CLOCK_SKEW, WAITS_ON_PEER};
/// Good runs of the same job (`--baseline`): their line templates, and the template function.
pub use analyze::{
    line_template, template_hash, Baseline, BaselineWarning, LoadedBaseline,
    DEFAULT_BASELINE_MAX_TEMPLATES,
};
/// The database and the signature set built into this crate.
pub use embedded::{embedded_signature_set, EmbeddedDatabase};
/// Typed errors: this crate's, and the signature database's inside [`Error::Db`] with their
/// typed causes.
pub use error::{DbError, Error, Result, Usage};
/// Signature files: load a directory or sources, the set and its parts.
pub use faultline_db::{
    load_dir, load_sources, Anchor, DbInfo, Located, QuietLevel, Role, Severity, Signature,
    SignatureSet, SourceFile, Span,
};
/// The compiled signature database (from `faultline-db`), and a pattern without its group
/// names.
pub use faultline_db::{unnamed, Database, SignatureInfo, MAX_CONFIRM_STATES};
/// The compiled database as a file.
pub use faultline_db::{Archive, ARCHIVE_FORMAT, ARCHIVE_MAGIC, MAX_DFA_BYTES};
pub use faultline_db::{
    ArchiveInvalid, ArchiveProblem, ArchiveRemedy, DfaProblem, Limit, Location, Problem,
};
/// The deterministic serving-log generator (benchmarks, tests, tools).
pub use faultline_db::{LogGen, SynthOptions};
/// The report of one input and its parts (the JSON contract), and its human rendering.
pub use report::{
    raw_path, render_human, render_human_with_hints, BaselineInfo, Bucket, Counts, DatabaseRef,
    Finding, FindingRole, FirstFailure, HumanHints, JobInput, MatchedLine, Report, RunOutcome,
    RunState, TimeFrom, MAX_PROCESSES_LISTED, SCHEMA_VERSION,
};
/// Text made safe for a terminal (control characters escaped).
pub use sanitize::{terminal_safe, terminal_safe_lines};
/// Inputs, scan options and the scanner; the parallel directory walk of a sweep.
pub use scan::walk::{
    check_selection, not_a_log_by_name, roots_exist, skipped_by_name_note, stdin_named_once, walk,
    Entry, Shard, SkipReason, WalkOptions,
};
pub use scan::{
    open, scan_reader, scan_slice, Hit, Input, InputKind, ScanOptions, ScanStats, CONTEXT_LINES,
    MAX_THREADS, TAIL_BYTES, WINDOW_OVERLAP,
};
/// Many reports as one table per signature.
pub use summary::{
    table, FailedInput, RepeatedInput, SignatureRow, Summary, SummaryBuilder,
    SUMMARY_SCHEMA_VERSION, UNCLASSIFIED,
};
/// The reports of a sweep's entries ([`Entry::report`] for one).
pub use sweep::sweep;

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

/// The README's library example as it was at commit 2a61866, unedited: the face must still
/// run it (tests/face-2a61866/README.md).
#[cfg(doctest)]
#[doc = include_str!("../tests/face-2a61866/readme-library.md")]
pub struct Face2a61866Doctests;
