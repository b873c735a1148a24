//! faultline: a versioned database of failure signatures for ML-serving and GPU logs,
//! compiled into a multi-pattern scanner that names the root cause of a failure.
//!
//! Data flows one way: [`signature`] files are loaded and checked, [`compile`]d into a
//! [`Database`], which [`scan`] runs over inputs to produce hits, which [`analyze`] turns
//! into a ranked [`report::Report`].
//!
//! Around that pipeline: [`scan::walk`] turns directories into the inputs of a sweep (globs,
//! shards), [`summary`] tables many reports, [`corpus`] reads logs with expected answers,
//! [`bench`](mod@bench) measures a signature set over a corpus and [`diff`] compares two sets.
//!
//! ```
//! use faultline::{analyze::{analyze_input, AnalyzeOptions}, scan::{Input, ScanOptions}, Database, EmbeddedDatabase};
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

pub mod analyze;
pub mod bench;
pub mod corpus;
pub mod diff;
mod embedded;
pub mod report;
pub mod sanitize;
pub mod scan;
pub mod summary;

/// The signature format, its compiler and the compiled database live in the `faultline-db`
/// crate; these re-exports keep their paths under `faultline::`.
pub use faultline_db::{error, signature, synth};

/// From a signature set to a [`Database`] (re-exported from `faultline-db`), and the set
/// built into this crate.
pub mod compile {
    pub use crate::embedded::signature_set as embedded_set;
    pub use faultline_db::compile::*;
}

pub use compile::Database;
pub use embedded::EmbeddedDatabase;
pub use error::{Error, Result};
pub use report::Report;
pub use summary::table;

/// The README's examples, run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
