//! faultline-db: the signature format, its compiler and the compiled signature database.
//!
//! Data flows one way: signature files are loaded and checked ([`load_dir`],
//! [`load_sources`]) into a [`SignatureSet`], which [`Database::compile`] turns into a
//! [`Database`]: the two-stage matcher a scan runs, whose [`Archive`] stores a compiled
//! database and loads it back without compiling a regex ([`Database::open`]). The `faultline`
//! crate embeds the archive of its `signatures/` (its build script uses this crate) and scans
//! logs with it.
//!
//! The modules are private; everything another crate uses is re-exported here. The compiler's
//! internals (literal extraction, anchor choice, the bucket model) and the matcher's stay
//! inside.

#![deny(missing_docs, missing_debug_implementations)]

mod compile;
mod database;
mod error;
mod signature;
mod synth;
mod synth_set;

/// What the compiler reports besides the database (the prefilter's expected load), and the
/// pattern-text helpers a report uses (captures filled into a remediation, with the bounds
/// [`interpolate`] keeps to; group names dropped from a pattern).
pub use compile::{
    interpolate, unnamed, CommonLiteral, PrefilterLoad, MAX_CAPTURE_IN_REMEDIATION, MISSING_CAPTURE,
};
/// The compiled database as a file.
pub use database::archive::{Archive, ARCHIVE_FORMAT, ARCHIVE_MAGIC, MAX_DFA_BYTES};
/// The compiled database and what a scan asks of it: candidate search ([`Cursor`]),
/// confirmation ([`Scratch`], [`LineMatch`], [`Marker`]), who a pattern belongs to
/// ([`Owner`]), and how often the prefilter fires ([`CandidateProfile`]).
pub use database::{
    CandidateLine, CandidateLines, CandidateProfile, Cursor, Database, HashedLayout, LineMatch,
    Marker, Owner, PrefilterLayout, Scratch, MAX_CONFIRM_STATES,
};
/// Typed errors, and where in a signature file a problem is.
pub use error::{
    ArchiveInvalid, ArchiveProblem, ArchiveRemedy, DfaProblem, Error, Limit, Location, Problem,
    Result,
};
/// Signature files: load a directory or sources; the set, a signature and its one metadata
/// type ([`SignatureInfo`]); positions in the files.
pub use signature::{
    load_dir, load_sources, location, toml_problem, Anchor, DbInfo, Located, QuietLevel, Role,
    Severity, Signature, SignatureInfo, SignatureSet, SourceFile, Span,
};
/// The deterministic serving-log generator (benchmarks, tests, the anchor sample).
pub use synth::{LogGen, SynthOptions};
/// Synthetic signature sets for the signature-count scale bench.
pub use synth_set::{synthetic_set, SyntheticSet};

/// The repository's signature set and its archived database, for this crate's tests (the
/// `faultline` crate embeds the same set; this crate reads it from the checkout).
#[cfg(test)]
pub(crate) mod testing {
    use std::path::Path;
    use std::sync::OnceLock;

    use crate::signature::{load_dir, SignatureSet};
    use crate::Database;

    /// `signatures/` of the checkout this crate is built in.
    pub fn signature_set() -> SignatureSet {
        load_dir(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../../signatures"))
            .expect("the repository's signatures/ loads")
    }

    /// The repository's set, compiled, archived and loaded back, as the embedded database is.
    pub fn database() -> &'static Database {
        static DB: OnceLock<Database> = OnceLock::new();
        DB.get_or_init(|| {
            let db = Database::compile(&signature_set()).expect("signatures/ compiles");
            let archive = db.to_archive(crate::MAX_DFA_BYTES).expect("archives");
            Database::from_archive_bytes(&archive.bytes).expect("the archive loads")
        })
    }
}
