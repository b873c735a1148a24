//! Properties of the scanner over generated input: it never panics, its hits do not depend
//! on how the input is cut (chunk size, thread count, stream block size, whole buffer or
//! stream), every hit points at the line it names, and signature examples hidden in noise are
//! found at their exact line, also inside lines longer than the cap wherever the stream's
//! block edges fall. The case count follows `PROPTEST_CASES` (default 256).

use faultline::EmbeddedDatabase;
use std::sync::OnceLock;

use faultline::embedded_signature_set;
use faultline::Database;
use faultline::{scan_reader, scan_slice, Hit, ScanOptions, ScanStats, TAIL_BYTES};
use proptest::prelude::*;

fn db() -> &'static Database {
    Database::embedded()
}

/// Every example line of the embedded signature files, with its signature's index.
fn examples() -> &'static [(u32, String)] {
    static EXAMPLES: OnceLock<Vec<(u32, String)>> = OnceLock::new();
    EXAMPLES.get_or_init(|| {
        let set = embedded_signature_set().expect("embedded set");
        set.signatures
            .iter()
            .enumerate()
            .flat_map(|(i, s)| {
                s.examples
                    .iter()
                    .map(move |e| (i as u32, e.value.trim_end_matches(['\n', '\r']).to_string()))
            })
            .collect()
    })
}

fn slice(log: &[u8], opts: &ScanOptions) -> (Vec<Hit>, ScanStats) {
    let mut hits = Vec::new();
    let stats = scan_slice(db(), log, opts, &mut |h| hits.push(h));
    (hits, stats)
}

fn stream(log: &[u8], opts: &ScanOptions) -> (Vec<Hit>, ScanStats) {
    let mut hits = Vec::new();
    let (stats, err) = scan_reader(db(), &mut &log[..], opts, &mut |h| hits.push(h));
    assert!(err.is_none());
    (hits, stats)
}

/// Options that keep every line of `log` whole.
fn uncapped(log: &[u8]) -> ScanOptions {
    ScanOptions {
        threads: 1,
        block_size: 1 << 16,
        max_line_bytes: log.len() + 1,
        min_chunk: 1 << 20,
    }
}

/// Logs made of pieces that matter to a scanner: noise, line ends of every kind, NUL and
/// invalid UTF-8, and signature example lines (which make hits).
fn log_strategy() -> impl Strategy<Value = Vec<u8>> {
    let piece = prop_oneof![
        3 => proptest::collection::vec(any::<u8>(), 0..24),
        3 => "[ -~]{0,40}".prop_map(String::into_bytes),
        2 => Just(b"\n".to_vec()),
        1 => Just(b"\r\n".to_vec()),
        1 => Just(b"\r".to_vec()),
        1 => Just(b"\x00\xff\xfe".to_vec()),
        2 => (0..examples().len()).prop_map(|i| examples()[i].1.clone().into_bytes()),
        1 => Just(b"Traceback (most recent call last):\n  File \"x.py\", line 3, in f\nValueError: bad".to_vec()),
    ];
    proptest::collection::vec(piece, 0..40).prop_map(|p| p.concat())
}

/// Lines split the naive way, with each line's start offset.
fn naive_lines(log: &[u8]) -> Vec<(u64, &[u8])> {
    let mut out = Vec::new();
    let mut start = 0;
    for (i, &b) in log.iter().enumerate() {
        if b == b'\n' {
            out.push((start as u64, &log[start..i]));
            start = i + 1;
        }
    }
    if start < log.len() {
        out.push((start as u64, &log[start..]));
    }
    out
}

fn trim_cr(line: &[u8]) -> &[u8] {
    line.strip_suffix(b"\r").unwrap_or(line)
}

/// The tail as `ScanStats::tail` defines it: from the first line start in the last
/// `TAIL_BYTES` bytes.
fn naive_tail(log: &[u8]) -> &[u8] {
    let from = log.len().saturating_sub(TAIL_BYTES);
    let start = (from..log.len())
        .find(|&i| i == 0 || log[i - 1] == b'\n')
        .unwrap_or(log.len());
    &log[start..]
}

proptest! {
    #[test]
    fn the_tail_is_the_same_however_the_input_is_read(
        lines in proptest::collection::vec(("[ -~]{0,300}", 0usize..3), 0..200),
        block in 1usize..9000,
        threads in 1usize..4,
    ) {
        let log: Vec<u8> = lines
            .iter()
            .flat_map(|(l, end)| [l.as_bytes(), [&b"\n"[..], b"\r\n", b""][*end]].concat())
            .collect();
        let opts = ScanOptions { threads, block_size: block, min_chunk: 4096, ..uncapped(&log) };
        let (_, whole) = slice(&log, &opts);
        prop_assert_eq!(&whole.tail[..], naive_tail(&log));
        let (_, streamed) = stream(&log, &opts);
        prop_assert_eq!(&streamed.tail[..], naive_tail(&log));
    }

    #[test]
    fn any_bytes_scan_without_panic(
        log in proptest::collection::vec(any::<u8>(), 0..4096),
        block in 1usize..64,
        cap in 1usize..128,
    ) {
        let opts = ScanOptions { threads: 2, block_size: block, max_line_bytes: cap, min_chunk: 7 };
        let (_, a) = slice(&log, &opts);
        let (hits, b) = stream(&log, &opts);
        prop_assert_eq!(a, b);
        for h in hits {
            prop_assert!(h.text.len() <= cap);
        }
    }

    #[test]
    fn hits_do_not_depend_on_how_the_input_is_cut(
        log in log_strategy(),
        threads in 1usize..4,
        min_chunk in 1usize..96,
        block in 1usize..200,
    ) {
        let whole = uncapped(&log);
        let expected = slice(&log, &whole);
        let chunked = ScanOptions { threads, min_chunk, ..whole.clone() };
        prop_assert_eq!(&slice(&log, &chunked), &expected);
        let blocks = ScanOptions { block_size: block, ..whole };
        prop_assert_eq!(&stream(&log, &blocks), &expected);
    }

    #[test]
    fn a_hit_points_at_its_line(log in log_strategy(), block in 1usize..200) {
        let lines = naive_lines(&log);
        for opts in [uncapped(&log), ScanOptions { block_size: block, ..uncapped(&log) }] {
            let (hits, stats) = stream(&log, &opts);
            prop_assert_eq!(stats.lines, lines.len() as u64);
            prop_assert_eq!(stats.bytes, log.len() as u64);
            prop_assert_eq!(stats.binary, log.contains(&0));
            for h in &hits {
                let (offset, line) = lines[(h.line - 1) as usize];
                prop_assert_eq!(h.offset, offset);
                prop_assert_eq!(&h.text[..], trim_cr(line));
                prop_assert!(!h.text_truncated);
                prop_assert_eq!(&h.matched, &db().match_line(trim_cr(line)));
            }
        }
    }

    #[test]
    fn examples_hidden_in_noise_are_found_at_their_line(
        noise in proptest::collection::vec("[a-z0-9 =:,.]{0,60}", 1..60),
        picks in proptest::collection::vec((any::<prop::sample::Index>(), any::<prop::sample::Index>()), 1..8),
        crlf in any::<bool>(),
        block in 1usize..300,
    ) {
        let mut lines: Vec<(Option<u32>, String)> = noise.into_iter().map(|n| (None, n)).collect();
        for (at, which) in picks {
            let (sig, text) = &examples()[which.index(examples().len())];
            lines.insert(at.index(lines.len() + 1), (Some(*sig), text.clone()));
        }
        let end = if crlf { "\r\n" } else { "\n" };
        let log: String = lines.iter().map(|(_, l)| format!("{l}{end}")).collect();
        let opts = ScanOptions { block_size: block, ..uncapped(log.as_bytes()) };
        let (hits, _) = stream(log.as_bytes(), &opts);
        let (slice_hits, _) = slice(log.as_bytes(), &ScanOptions { threads: 2, min_chunk: 64, ..opts });
        prop_assert_eq!(&hits, &slice_hits);
        for (i, (sig, text)) in lines.iter().enumerate() {
            let Some(sig) = sig else { continue };
            let hit = hits.iter().find(|h| h.line == i as u64 + 1);
            prop_assert!(hit.is_some(), "line {} not found: {}", i + 1, text);
            let hit = hit.unwrap();
            prop_assert!(hit.matched.signatures.contains(sig), "line {}: {}", i + 1, text);
            prop_assert_eq!(&hit.text[..], text.as_bytes());
        }
    }

    #[test]
    fn examples_inside_over_long_lines_are_found_across_block_edges(
        before in 0usize..3000,
        after in 0usize..3000,
        which in any::<prop::sample::Index>(),
        block in 16usize..700,
        cap in 1usize..300,
    ) {
        let (sig, example) = &examples()[which.index(examples().len())];
        let line = format!("{} {example} {}", "x".repeat(before), "y".repeat(after));
        // Patterns anchored at the line's start do not match mid-line: nothing to find.
        prop_assume!(db().match_line(line.as_bytes()).signatures.contains(sig));
        let log = format!("INFO a\n{line}\nINFO b\n");
        let opts = ScanOptions { threads: 1, block_size: block, max_line_bytes: cap, min_chunk: 1 << 20 };
        let (hits, stats) = stream(log.as_bytes(), &opts);
        prop_assert_eq!(stats.lines, 3);
        let hit = hits.iter().find(|h| h.line == 2);
        prop_assert!(hit.is_some(), "not found: {} bytes, block {}, cap {}", line.len(), block, cap);
        let hit = hit.unwrap();
        prop_assert!(hit.matched.signatures.contains(sig));
        prop_assert_eq!(hit.offset, 7);
        prop_assert_eq!(hit.text_truncated, line.len() > cap);
        prop_assert_eq!(&hit.text[..], &line.as_bytes()[..line.len().min(cap)]);
    }
}
