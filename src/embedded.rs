//! The default signature set and its compiled archive, built into the binary from
//! `signatures/` by build.rs.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use crate::Database;
use faultline_db::{load_sources, SignatureSet, SourceFile};

include!(concat!(env!("OUT_DIR"), "/embedded_signatures.rs"));

/// Keeps the archive 16-byte aligned in static memory, as the loader wants it.
#[repr(C, align(16))]
struct Aligned<T: ?Sized>(T);

/// The archive build.rs compiled from `signatures/` (`faultline db compile signatures`).
static ARCHIVE: &Aligned<[u8]> =
    &Aligned(*include_bytes!(concat!(env!("OUT_DIR"), "/embedded.fldb")));

/// The embedded signature files, as a set (paths read `signatures/NAME`).
pub fn embedded_signature_set() -> faultline_db::Result<SignatureSet> {
    load_sources(
        FILES
            .iter()
            .map(|(name, text)| SourceFile {
                path: PathBuf::from("signatures").join(name),
                text: (*text).to_string(),
            })
            .collect(),
    )
}

/// The database built into this crate: `Database::embedded()` once this trait is in scope
/// (`use faultline::EmbeddedDatabase;`). [`Database`] lives in the `faultline-db` crate,
/// which the build script uses to compile `signatures/`; the archive it writes is part of
/// this crate, so the constructor that loads it is this trait's.
pub trait EmbeddedDatabase {
    /// The embedded database's name, version and content hash, without loading it.
    ///
    /// ```
    /// use faultline::{Database, EmbeddedDatabase};
    ///
    /// let (name, version, hash) = Database::embedded_identity();
    /// let db = Database::embedded();
    /// assert_eq!((name, version, hash), (db.name(), db.version(), db.hash()));
    /// ```
    fn embedded_identity() -> (&'static str, &'static str, &'static str);

    /// The default database, loaded from the archive that the build compiled from the
    /// signature files built into this crate: no regex is compiled at start-up.
    ///
    /// build.rs compiles the archive from `signatures/` and loads it back to run every
    /// example, so a bad signature set fails the build and the archive always loads.
    fn embedded() -> &'static Database;
}

impl EmbeddedDatabase for Database {
    fn embedded_identity() -> (&'static str, &'static str, &'static str) {
        (DB_NAME, DB_VERSION, DB_HASH)
    }

    fn embedded() -> &'static Database {
        static DB: OnceLock<Database> = OnceLock::new();
        DB.get_or_init(|| {
            #[allow(clippy::expect_used)]
            Database::from_static_archive(&ARCHIVE.0, Path::new("<embedded database>"))
                .expect("the embedded archive loads (checked by build.rs)")
        })
    }
}
