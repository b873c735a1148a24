//! Embeds the signature files of `signatures/` into the library and compiles them into the
//! database archive that `Database::embedded()` loads, with the `faultline-db` crate, exactly
//! as `faultline db compile signatures` would. So the binary compiles no regex at start-up,
//! and the archive follows `signatures/` on every build. A signature set that does not
//! compile, or whose examples fail through the loaded archive, fails the build with the
//! problems listed.
//!
//! The checkout is found at run time, from the `CARGO_MANIFEST_DIR` that cargo sets for each
//! run of the script: never a path baked in when the script was compiled, so checkouts that
//! share one `CARGO_TARGET_DIR` (and reuse one compiled build script) each read their own
//! `signatures/`.

use std::fmt::Write;
use std::path::PathBuf;

use faultline_db::{load_dir, Database, Error, MAX_DFA_BYTES};

/// Prints every problem of `e` and stops the build.
fn fail(what: &str, e: Error) -> ! {
    eprintln!("error: {what}: {e}");
    if let Error::Signatures { problems } = &e {
        for p in problems.iter().skip(1) {
            eprintln!("error: {p}");
        }
    }
    std::process::exit(1);
}

/// A value cargo sets for every build script run; without it the script cannot work.
fn cargo_env(name: &str) -> PathBuf {
    match std::env::var_os(name) {
        Some(v) => PathBuf::from(v),
        None => {
            eprintln!("error: {name} is not set (build.rs runs under cargo)");
            std::process::exit(1);
        }
    }
}

fn main() {
    let dir = cargo_env("CARGO_MANIFEST_DIR").join("signatures");
    println!("cargo:rerun-if-changed={}", dir.display());
    let entries = std::fs::read_dir(&dir).unwrap_or_else(|e| {
        fail(
            "reading the signature directory",
            Error::Io {
                path: dir.clone(),
                source: e,
            },
        )
    });
    let mut names: Vec<String> = entries
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".toml"))
        .collect();
    names.sort();
    let mut out = String::from("pub(crate) static FILES: &[(&str, &str)] = &[\n");
    for name in &names {
        let path = dir.join(name);
        println!("cargo:rerun-if-changed={}", path.display());
        let _ = writeln!(
            out,
            "    ({name:?}, include_str!({:?})),",
            path.display().to_string()
        );
    }
    out.push_str("];\n");

    let set = load_dir(&dir).unwrap_or_else(|e| fail("loading signatures/", e));
    let db = Database::compile(&set).unwrap_or_else(|e| fail("compiling signatures/", e));
    let archive = db
        .to_archive(MAX_DFA_BYTES)
        .unwrap_or_else(|e| fail("archiving signatures/", e));
    let loaded = Database::from_archive_bytes(&archive.bytes)
        .unwrap_or_else(|e| fail("loading the archive of signatures/", e));
    loaded
        .check_examples(&set)
        .unwrap_or_else(|e| fail("checking the archive of signatures/", e));
    for (p, reason) in &archive.lazy {
        println!(
            "cargo:warning=pattern {:?} has no stored DFA ({reason}); it is compiled at first use",
            db.pattern_sources()[*p as usize]
        );
    }
    let _ = writeln!(
        out,
        "const DB_NAME: &str = {:?};\nconst DB_VERSION: &str = {:?};\nconst DB_HASH: &str = {:?};",
        db.name(),
        db.version(),
        db.hash()
    );
    let out_dir = cargo_env("OUT_DIR");
    for (file, bytes) in [
        ("embedded_signatures.rs", out.as_bytes()),
        ("embedded.fldb", &archive.bytes[..]),
    ] {
        let path = out_dir.join(file);
        std::fs::write(&path, bytes)
            .unwrap_or_else(|e| fail("writing", Error::Io { path, source: e }));
    }
}
