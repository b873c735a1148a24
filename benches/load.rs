//! Time to a ready-to-scan database: compiling the signature directory (TOML, regexes,
//! literals, anchors, examples) against loading the compiled archive file (read, hash,
//! validate, DFAs in place, prefilter rebuilt); plus the prefilter rebuild alone.

use std::path::Path;

use aho_corasick::{packed, AhoCorasick, MatchKind};
use criterion::{black_box, criterion_group, criterion_main, Criterion};
use faultline::load_dir;
use faultline::Database;
use faultline::MAX_DFA_BYTES;

fn load(c: &mut Criterion) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("signatures");
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("db.fl");
    let db = Database::compile(&load_dir(&dir).unwrap()).unwrap();
    db.write_archive(&file, MAX_DFA_BYTES).unwrap();

    let mut g = c.benchmark_group("load");
    g.sample_size(20);
    g.bench_function("toml-dir", |b| {
        b.iter(|| Database::compile(&load_dir(black_box(&dir)).unwrap()).unwrap())
    });
    g.bench_function("archive-file", |b| {
        b.iter(|| Database::open(black_box(&file)).unwrap())
    });
    // What load rebuilds because aho-corasick cannot be stored.
    let anchors = db.anchors().0.to_vec();
    let members: Vec<Vec<u8>> = db.required_literals().map(|(m, _)| m.to_vec()).collect();
    g.bench_function("prefilter-rebuild", |b| {
        b.iter(|| {
            let teddy = packed::Config::new()
                .match_kind(packed::MatchKind::LeftmostFirst)
                .builder()
                .extend(&anchors)
                .build();
            let literals = AhoCorasick::builder()
                .match_kind(MatchKind::Standard)
                .build(&members)
                .unwrap();
            black_box((teddy, literals))
        })
    });
    g.finish();
}

criterion_group!(benches, load);
criterion_main!(benches);
