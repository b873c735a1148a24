//! Scans that split a buffer across threads, started from inside the global rayon pool
//! while every pool thread is busy with one (a bulk scan of several large files does this):
//! each must finish, with the hits a one-thread scan finds. Its own process, so that it owns
//! the global pool.

use faultline::EmbeddedDatabase;
use std::sync::mpsc;
use std::time::Duration;

use faultline::Database;
use faultline::{scan_slice, Hit, ScanOptions, ScanStats};
use faultline::{LogGen, SynthOptions};
use rayon::prelude::*;

fn scan(buf: &[u8], opts: &ScanOptions) -> (Vec<Hit>, ScanStats) {
    let mut hits = Vec::new();
    let stats = scan_slice(Database::embedded(), buf, opts, &mut |h| hits.push(h));
    (hits, stats)
}

#[test]
fn parallel_scans_inside_a_busy_pool_finish() {
    rayon::ThreadPoolBuilder::new()
        .num_threads(2)
        .build_global()
        .expect("the global pool is this test's");
    let mut buf = Vec::new();
    LogGen::new(SynthOptions {
        seed: 5,
        ..SynthOptions::default()
    })
    .fill(&mut buf, 2 << 20);
    let one = scan(
        &buf,
        &ScanOptions {
            threads: 1,
            ..ScanOptions::default()
        },
    );
    let split = ScanOptions {
        threads: 2,
        min_chunk: 4096,
        ..ScanOptions::default()
    };
    let (tx, rx) = mpsc::channel();
    let job = buf.clone();
    std::thread::spawn(move || {
        let results: Vec<(Vec<Hit>, ScanStats)> =
            (0..4).into_par_iter().map(|_| scan(&job, &split)).collect();
        let _ = tx.send(results);
    });
    // A pool starved by its own blocked threads never answers: fail instead of hanging.
    let results = rx
        .recv_timeout(Duration::from_secs(120))
        .expect("scans inside the busy pool did not finish (pool starved)");
    for r in results {
        assert_eq!(r, one);
    }
}
