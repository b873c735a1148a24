//! The archive loader on arbitrary bytes: an archive is untrusted input, so any bytes end in
//! a database or an error, never a panic; a database that loads must scan.
//!
//! A random mutation almost never survives the header's content hash, so when the first byte
//! is odd the rest is taken as a *payload* and given a valid header (magic, format, length,
//! xxh3 hash; layout in crates/faultline-db/src/database/archive.rs): the rkyv validation, the stored DFAs and the
//! matcher rebuild then see the fuzzer's bytes too.
#![no_main]

use faultline::{ARCHIVE_FORMAT as FORMAT, ARCHIVE_MAGIC as MAGIC};
use faultline::{scan_slice, ScanOptions};
use faultline::Database;
use libfuzzer_sys::fuzz_target;

/// An archive file around `payload`, with a header that passes every check.
fn with_header(payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(32 + payload.len());
    out.extend_from_slice(&MAGIC);
    out.extend_from_slice(&FORMAT.to_le_bytes());
    out.extend_from_slice(&0u32.to_le_bytes());
    out.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    out.extend_from_slice(&xxhash_rust::xxh3::xxh3_64(payload).to_le_bytes());
    out.extend_from_slice(payload);
    out
}

const LOG: &[u8] = b"INFO start\nModuleNotFoundError: No module named 'flash_attn'\r\nTraceback (most recent call last):\n  File \"x.py\", line 3, in f\nValueError: bad\n\x00\xff\n";

fuzz_target!(|data: &[u8]| {
    let loaded = match data.split_first() {
        Some((flag, payload)) if flag & 1 == 1 => {
            Database::from_archive_bytes(&with_header(payload))
        }
        _ => Database::from_archive_bytes(data),
    };
    let Ok(db) = loaded else {
        return;
    };
    let opts = ScanOptions {
        threads: 1,
        ..ScanOptions::default()
    };
    let mut hits = 0usize;
    let stats = scan_slice(&db, LOG, &opts, &mut |_| hits += 1);
    assert_eq!(stats.lines, 6);
    for line in LOG.split(|&b| b == b'\n') {
        let _ = db.match_line(line);
    }
});
