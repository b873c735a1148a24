//! Regenerates the sample text anchor choice counts frequencies on
//! (`crates/faultline-db/data/anchor-sample.log`): 192 KiB of generated healthy serving log
//! (the text the compiler used to generate itself) and, with `--corpus-bytes N`, about N bytes
//! of real corpus lines spread over all the logs. The checked-in sample has no corpus lines:
//! every share tried (16 KiB, 64 KiB) moved the anchors to ones that cost 35-40% more
//! instructions on the serving log (BENCHMARKS.md, "The anchor model's sample, checked in").
//!
//! ```sh
//! cargo run --release -p faultline-db --example anchor_sample -- tests/corpus \
//!     > crates/faultline-db/data/anchor-sample.log
//! ```
//!
//! Each `DIR` argument adds its `*.log` files in name order (a file argument adds itself).
//! Only ordinary corpus lines are taken: a line that a signature or a structural marker of
//! the set in `--signatures DIR` (default `signatures`) matches is left out, since it is a
//! candidate whatever the anchors are and says nothing about what an anchor adds (before:
//! only the lines holding a sidecar's `root_cause` or `decoys`, which kept the other
//! signatures' lines and steered anchors away from the very literals that find them).
//! Changing the sample changes compiled archives and the database hash: commit it with the
//! instruction counts it gives (`.ci/perf-guard`).

use std::path::{Path, PathBuf};

use faultline_db::{load_dir, Database, LogGen, SynthOptions};

/// Bytes of generated healthy serving log in the sample (the size, seed and options the
/// compiler used when it generated its sample itself).
const GENERATED_BYTES: usize = 192 << 10;
/// About how many corpus bytes are taken (`--corpus-bytes N` overrides): lines spread evenly
/// over all the logs, so that the generated text stays the larger part.
const CORPUS_BYTES: usize = 0;

fn main() {
    let mut files: Vec<PathBuf> = Vec::new();
    let mut corpus_bytes = CORPUS_BYTES;
    let mut signatures = String::from("signatures");
    let mut args = std::env::args_os().skip(1);
    while let Some(arg) = args.next() {
        if arg == "--signatures" {
            signatures = match args.next().and_then(|v| v.into_string().ok()) {
                Some(v) => v,
                None => fail(Path::new("--signatures"), "expects a directory"),
            };
            continue;
        }
        if arg == "--corpus-bytes" {
            corpus_bytes = match args.next().and_then(|v| v.to_str()?.parse().ok()) {
                Some(n) => n,
                None => fail(Path::new("--corpus-bytes"), "expects a byte count"),
            };
            continue;
        }
        let path = PathBuf::from(arg);
        if path.is_dir() {
            let mut logs: Vec<PathBuf> = match std::fs::read_dir(&path) {
                Ok(rd) => rd
                    .filter_map(|e| e.ok().map(|e| e.path()))
                    .filter(|p| p.extension().is_some_and(|x| x == "log"))
                    .collect(),
                Err(e) => fail(&path, &e.to_string()),
            };
            logs.sort();
            files.extend(logs);
        } else {
            files.push(path);
        }
    }
    if files.is_empty() {
        eprintln!(
            "usage: anchor_sample DIR_OR_LOG... > crates/faultline-db/data/anchor-sample.log"
        );
        std::process::exit(2);
    }
    // Ordinary text only: a line some signature or structural marker matches is a candidate
    // whatever the anchors are, so it says nothing about what an anchor would add.
    let db = match load_dir(Path::new(&signatures)).and_then(|set| Database::compile(&set)) {
        Ok(db) => db,
        Err(e) => fail(Path::new(&signatures), &e.to_string()),
    };
    let mut corpus = Vec::new();
    let mut dropped = 0usize;
    for f in &files {
        let text = std::fs::read(f).unwrap_or_else(|e| fail(f, &e.to_string()));
        for line in text.split_inclusive(|&b| b == b'\n') {
            let body = line.strip_suffix(b"\n").unwrap_or(line);
            if db.match_line(body).is_empty() {
                corpus.extend_from_slice(line);
            } else {
                dropped += 1;
            }
        }
        if !corpus.ends_with(b"\n") {
            corpus.push(b'\n');
        }
    }
    let mut sample = Vec::with_capacity(GENERATED_BYTES + CORPUS_BYTES + 4096);
    LogGen::new(SynthOptions {
        seed: 0x00ba_c6d0,
        non_ascii: 0.01,
        long_line_rate: 0.0,
        ..SynthOptions::default()
    })
    .fill(&mut sample, GENERATED_BYTES);
    let generated = sample.len();
    let mut taken = 0;
    let (mut seen, mut due) = (0usize, 0usize);
    for line in corpus.split_inclusive(|&b| b == b'\n') {
        seen += line.len();
        // Take a line whenever the share owed so far reaches it.
        if due + line.len() <= seen * corpus_bytes / corpus.len().max(1) {
            sample.extend_from_slice(line);
            taken += line.len();
            due += line.len();
        }
    }
    eprintln!(
        "anchor_sample: {generated} generated bytes, {taken} of {} corpus bytes from {} logs ({dropped} lines a signature or marker matches left out)",
        corpus.len(),
        files.len()
    );
    use std::io::Write;
    if let Err(e) = std::io::stdout().write_all(&sample) {
        fail(Path::new("<stdout>"), &e.to_string());
    }
}

fn fail(path: &Path, msg: &str) -> ! {
    eprintln!("anchor_sample: {}: {msg}", path.display());
    std::process::exit(1);
}
