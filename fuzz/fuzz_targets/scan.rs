//! The scanner and the analysis on arbitrary bytes, with the full embedded database.
//!
//! The first byte picks a stream block size and a line cap; the rest is the log. Whole-buffer
//! scans (one thread, and many small chunks) and a stream scan in small blocks must report
//! the same hits and totals; a stream scan over a tiny cap and the full analysis with both
//! renderers must not panic.
#![no_main]

use std::path::Path;

use faultline::{analyze_input, AnalyzeOptions};
use faultline::render_human;
use faultline::{scan_reader, scan_slice, Hit, Input, ScanOptions, ScanStats};
use faultline::{Database, EmbeddedDatabase};
use libfuzzer_sys::fuzz_target;

fn slice(log: &[u8], opts: &ScanOptions) -> (Vec<Hit>, ScanStats) {
    let mut hits = Vec::new();
    let stats = scan_slice(Database::embedded(), log, opts, &mut |h| hits.push(h));
    (hits, stats)
}

fn stream(log: &[u8], opts: &ScanOptions) -> (Vec<Hit>, ScanStats) {
    let mut hits = Vec::new();
    let (stats, err) = scan_reader(Database::embedded(), &mut &log[..], opts, &mut |h| {
        hits.push(h)
    });
    assert!(err.is_none(), "reading a slice cannot fail");
    (hits, stats)
}

fuzz_target!(|data: &[u8]| {
    let Some((&ctl, log)) = data.split_first() else {
        return;
    };
    let uncapped = log.len() + 1;
    let whole = ScanOptions {
        threads: 1,
        block_size: 1 << 16,
        max_line_bytes: uncapped,
        min_chunk: 1 << 20,
    };
    let expected = slice(log, &whole);
    let chunked = ScanOptions {
        threads: 2,
        min_chunk: 1 + usize::from(ctl >> 4),
        ..whole.clone()
    };
    assert_eq!(slice(log, &chunked), expected, "chunked scan differs");
    let blocks = ScanOptions {
        block_size: 1 + usize::from(ctl & 0x3f),
        ..whole.clone()
    };
    assert_eq!(stream(log, &blocks), expected, "stream scan differs");

    // Lines over a tiny cap: scanned in windows; the totals still agree.
    let capped = ScanOptions {
        max_line_bytes: 1 + usize::from(ctl),
        ..blocks
    };
    let (hits, stats) = stream(log, &capped);
    assert_eq!(stats, expected.1);
    for h in &hits {
        assert!(h.text.len() <= capped.max_line_bytes);
        assert!(
            h.offset == 0 || log[h.offset as usize - 1] == b'\n',
            "a hit starts a line"
        );
    }

    let input = Input::from_bytes(Path::new("fuzz.log"), log.to_vec());
    let report = analyze_input(
        Database::embedded(),
        input,
        &capped,
        AnalyzeOptions {
            all: true,
            ..AnalyzeOptions::default()
        },
    );
    let _ = render_human(&report, true);
    let _ = report.to_json_line();
});
