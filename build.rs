//! Embeds the signature files of `signatures/` into the library and compiles them into the
//! database archive that `Database::embedded()` loads, with the crate's own signature and
//! compile modules (included below), exactly as `faultline db compile signatures` would. So
//! the binary compiles no regex at start-up, and the archive follows `signatures/` on every
//! build. A signature set that does not compile, or whose examples fail through the loaded
//! archive, fails the build with the problems listed.

use std::fmt::Write;
use std::path::{Path, PathBuf};

#[allow(dead_code, unused_imports, clippy::result_large_err)]
#[path = "src/error.rs"]
mod error;

#[allow(dead_code, unused_imports, clippy::result_large_err)]
#[path = "src/signature/mod.rs"]
mod signature;

#[allow(dead_code, unused_imports, clippy::result_large_err)]
#[path = "src/compile/mod.rs"]
mod compile;

// The anchor choice estimates how often literals occur on a generated serving log.
#[allow(dead_code)]
#[path = "src/synth.rs"]
mod synth;

/// What the compile module calls "the embedded set": at build time, `signatures/` itself.
mod embedded {
    pub fn signature_set() -> crate::Result<crate::signature::SignatureSet> {
        crate::signature::load_dir(&crate::signatures_dir())
    }
}

use compile::Database;
pub use error::{Error, Result};

fn signatures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("signatures")
}

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

fn main() {
    let dir = signatures_dir();
    println!("cargo:rerun-if-changed={}", dir.display());
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .expect("signatures/ directory")
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".toml"))
        .collect();
    names.sort();
    let mut out = String::from("pub(crate) static FILES: &[(&str, &str)] = &[\n");
    for name in &names {
        let path = dir.join(name);
        println!("cargo:rerun-if-changed={}", path.display());
        writeln!(
            out,
            "    ({name:?}, include_str!({:?})),",
            path.display().to_string()
        )
        .unwrap();
    }
    out.push_str("];\n");

    let set = embedded::signature_set().unwrap_or_else(|e| fail("loading signatures/", e));
    let db = Database::compile(&set).unwrap_or_else(|e| fail("compiling signatures/", e));
    let archive = db
        .to_archive(compile::archive::MAX_DFA_BYTES)
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
    writeln!(
        out,
        "const DB_NAME: &str = {:?};\nconst DB_VERSION: &str = {:?};\nconst DB_HASH: &str = {:?};",
        db.name(),
        db.version(),
        db.hash()
    )
    .unwrap();
    let out_dir = PathBuf::from(std::env::var("OUT_DIR").unwrap());
    std::fs::write(out_dir.join("embedded_signatures.rs"), out).unwrap();
    std::fs::write(out_dir.join("embedded.fldb"), &archive.bytes).unwrap();
}
