//! faultline-db: the signature format, its compiler and the compiled signature database.
//!
//! Data flows one way: [`signature`] files are loaded and checked, then [`compile`]d into a
//! [`Database`]: the two-stage matcher the scan runs ([`database`]) and its archive format
//! ([`database::archive`]), which stores a compiled database and loads it back without
//! compiling a regex. The `faultline` crate embeds the archive of its `signatures/` (its
//! build script uses this crate) and scans logs with it.

#![deny(missing_docs, missing_debug_implementations)]

pub mod compile;
pub mod database;
pub mod error;
pub mod signature;
pub mod synth;
pub mod synth_set;

pub use compile::Database;
pub use error::{ArchiveInvalid, ArchiveProblem, DfaProblem, Error, Limit, Result, Usage};

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
            let archive = db
                .to_archive(crate::database::archive::MAX_DFA_BYTES)
                .expect("archives");
            Database::from_archive_bytes(&archive.bytes).expect("the archive loads")
        })
    }
}
