//! The archive loader on arbitrary bytes: an archive is untrusted input, so any bytes end in
//! a database or an error, never a panic; a database that loads must scan.
#![no_main]

use faultline::scan::{scan_slice, ScanOptions};
use faultline::Database;
use libfuzzer_sys::fuzz_target;

const LOG: &[u8] = b"INFO start\nModuleNotFoundError: No module named 'flash_attn'\r\nTraceback (most recent call last):\n  File \"x.py\", line 3, in f\nValueError: bad\n\x00\xff\n";

fuzz_target!(|data: &[u8]| {
    let Ok(db) = Database::from_archive_bytes(data) else {
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
