//! The copies in tests/face-2a61866/ are the files of commit 2a61866, unedited: `cargo test`
//! builds them (Cargo.toml's `face-2a61866-*` examples, the `Face2a61866Doctests` doctest), so
//! they show that code written against the face of that commit still compiles and runs.

use std::path::Path;
use std::process::Command;

/// Each copy and the file of commit 2a61866 it was taken from (the README's block is compared
/// on its own).
const COPIES: [(&str, &str); 6] = [
    ("count_newlines.rs", "examples/count_newlines.rs"),
    ("genlog.rs", "examples/genlog.rs"),
    ("gensigs.rs", "examples/gensigs.rs"),
    ("load_db.rs", "examples/load_db.rs"),
    ("perf_probe.rs", "examples/perf_probe.rs"),
    (
        "anchor_sample.rs",
        "crates/faultline-db/examples/anchor_sample.rs",
    ),
];

/// The commit's version of `path`, or `None` when git or the commit is not at hand (a source
/// tarball).
fn at_commit(path: &str) -> Option<String> {
    let root = env!("CARGO_MANIFEST_DIR");
    let out = Command::new("git")
        .args(["-C", root, "show", &format!("2a61866:{path}")])
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

#[test]
fn the_copies_are_the_files_of_2a61866_unedited() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/face-2a61866");
    let Some(readme) = at_commit("README.md") else {
        eprintln!("face: commit 2a61866 is not in this checkout; copies not compared");
        return;
    };
    for (copy, original) in COPIES {
        let text = std::fs::read_to_string(dir.join(copy)).unwrap();
        assert_eq!(
            Some(text),
            at_commit(original),
            "tests/face-2a61866/{copy} is not {original} of 2a61866"
        );
    }
    // The README's library section, its one Rust block.
    let section = &readme[readme.find("## Library").unwrap()..readme.find("## Python").unwrap()];
    let start = section.find("```rust").unwrap();
    let end = start + section[start..].find("\n```\n").unwrap() + "\n```\n".len();
    let copy = std::fs::read_to_string(dir.join("readme-library.md")).unwrap();
    assert_eq!(copy, section[start..end]);
}
