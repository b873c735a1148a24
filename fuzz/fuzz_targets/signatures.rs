//! The signature loader and compiler on arbitrary TOML text: any input ends in a set, a
//! database or a located error, never a panic, and an error always names a place.
#![no_main]

use std::path::PathBuf;

use faultline::{load_sources, SourceFile};
use faultline::{Database, DbError as Error};
use libfuzzer_sys::fuzz_target;

const HEADER: &str = "name = \"fuzz\"\nversion = \"2026.12.0\"\nformat = 1\n";

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    // A leading "db.toml\n" line makes the input the header file instead.
    let files = match text.strip_prefix("db.toml\n") {
        Some(header) => vec![SourceFile {
            path: PathBuf::from("db.toml"),
            text: header.to_string(),
        }],
        None => vec![
            SourceFile {
                path: PathBuf::from("db.toml"),
                text: HEADER.to_string(),
            },
            SourceFile {
                path: PathBuf::from("fuzz.toml"),
                text: text.to_string(),
            },
        ],
    };
    let result = load_sources(files).and_then(|set| Database::compile(&set).map(|_| ()));
    match result {
        Ok(()) | Err(Error::Limit(_)) => {}
        Err(Error::Signatures { problems }) => {
            assert!(!problems.is_empty());
            for p in problems {
                assert!(p.location.line >= 1 && p.location.column >= 1, "{p}");
            }
        }
        Err(e) => panic!("unexpected error kind: {e}"),
    }
});
