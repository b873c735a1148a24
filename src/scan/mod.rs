//! The hot loop: find candidate lines with the prefilter, confirm them, count lines only
//! between hits. Whole buffers split into chunks at line boundaries and scan on all cores;
//! streams scan in blocks with the partial last line carried over.

mod input;
pub mod walk;

use std::io::Read;

use memchr::{memchr, memrchr};
use rayon::prelude::*;

use faultline_db::{Cursor, Database, LineMatch, Marker, Scratch};

pub use input::{decode, open, Input, InputKind};

/// Most worker threads a scan uses (`-j` takes 1..=MAX_THREADS); larger values are clamped.
pub const MAX_THREADS: usize = 1024;

/// How a scan runs.
#[derive(Clone, Debug)]
pub struct ScanOptions {
    /// Worker threads for one large buffer; 1 scans on the calling thread. Clamped to
    /// `1..=MAX_THREADS`.
    pub threads: usize,
    /// Bytes read per block from a stream.
    pub block_size: usize,
    /// Longest line a stream keeps whole; longer lines are scanned in windows and cut.
    pub max_line_bytes: usize,
    /// Smallest chunk a buffer is split into for parallel scanning.
    pub min_chunk: usize,
}

impl Default for ScanOptions {
    fn default() -> Self {
        ScanOptions {
            threads: rayon::current_num_threads(),
            block_size: 4 << 20,
            max_line_bytes: 64 << 20,
            min_chunk: 1 << 20,
        }
    }
}

/// One line that matched a signature or a structural marker, or (with an empty `matched`) one
/// of the [`CONTEXT_LINES`] lines after a traceback frame, traceback start or exception line:
/// the analysis needs those to find where a traceback ends and whether its process went on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hit {
    /// 1-based line number, as `grep -n` counts.
    pub line: u64,
    /// Byte offset of the line's first byte in the input.
    pub offset: u64,
    /// The line, without its terminator (`\n` or `\r\n`); cut if `text_truncated`.
    pub text: Vec<u8>,
    /// Whether `text` was cut (a streamed line longer than the cap).
    pub text_truncated: bool,
    /// What matched.
    pub matched: LineMatch,
}

/// Totals of one scan.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ScanStats {
    /// Bytes scanned.
    pub bytes: u64,
    /// Lines scanned (a final unterminated line counts).
    pub lines: u64,
    /// Whether the input held a NUL byte (it was scanned all the same).
    pub binary: bool,
    /// The input's last lines: from the first line start in its last [`TAIL_BYTES`] bytes
    /// (the whole input when it is shorter). The analysis reads them when it found no failure.
    pub tail: Vec<u8>,
}

/// Most bytes of [`ScanStats::tail`].
pub const TAIL_BYTES: usize = 16 << 10;

/// The tail of an input of `len` bytes whose last bytes are `end`: `end` holds the whole
/// input, or at least its last `TAIL_BYTES + 1` bytes (the byte before the tail's window tells
/// whether the window starts a line).
fn tail_of(end: &[u8], len: u64) -> Vec<u8> {
    if len <= TAIL_BYTES as u64 {
        return end.to_vec();
    }
    let Some(before) = end.len().checked_sub(TAIL_BYTES + 1) else {
        return Vec::new();
    };
    match memchr(b'\n', &end[before..]) {
        Some(i) => end[before + i + 1..].to_vec(),
        None => Vec::new(),
    }
}

/// The last `TAIL_BYTES + 1` bytes of a stream, kept as blocks are read.
#[derive(Default)]
struct TailKeeper(Vec<u8>);

impl TailKeeper {
    fn push(&mut self, new: &[u8]) {
        let keep = TAIL_BYTES + 1;
        if new.len() >= keep {
            self.0.clear();
            self.0.extend_from_slice(&new[new.len() - keep..]);
        } else {
            self.0.extend_from_slice(new);
            let over = self.0.len().saturating_sub(keep);
            self.0.drain(..over);
        }
    }
}

#[inline]
fn trim_cr(line: &[u8]) -> &[u8] {
    match line.last() {
        Some(b'\r') => &line[..line.len() - 1],
        _ => line,
    }
}

/// Lines after a trigger line (a traceback start, frame, exception or terminal line) delivered
/// even when they match nothing.
pub const CONTEXT_LINES: usize = 8;

/// Most bytes one scanned chunk covers: what the hits of one chunk can hold is bounded by
/// this, and at most [`in_flight`] chunks are held at once.
pub const MAX_CHUNK: usize = 4 << 20;

/// Chunks scanned but not yet analysed, at most, for `threads` workers.
pub fn in_flight(threads: usize) -> usize {
    threads.saturating_mul(2).max(2)
}

/// Whether a matched line opens a context window: a traceback line, or a terminal line (what
/// its process printed next tells a logged child's death from its own).
#[inline]
fn triggers(m: &LineMatch) -> bool {
    m.markers
        & (Marker::Frame as u8
            | Marker::TracebackStart as u8
            | Marker::Exception as u8
            | Marker::Terminal as u8)
        != 0
}

struct ChunkHit {
    /// Newlines before this line, counted from the chunk start.
    newlines: u64,
    start: usize,
    /// The line (without terminator), cut to the cap; copied while it is in cache.
    text: Vec<u8>,
    truncated: bool,
    matched: LineMatch,
}

/// What scanning a chunk gives.
struct Scanned {
    /// Matched lines and context lines, in order.
    hits: Vec<ChunkHit>,
    /// Newlines in the chunk.
    newlines: u64,
    /// Whether the chunk holds a NUL byte.
    nul: bool,
    /// The chunk's first [`CONTEXT_LINES`] lines (as context lines): the merge delivers those
    /// a previous chunk's window reaches into.
    head: Vec<ChunkHit>,
    /// Lines of the next chunk still in this chunk's last context window.
    window_left: usize,
    /// The chunk's length in bytes.
    len: usize,
}

impl Scanned {
    /// The scan of a chunk that was not scanned (past the input's end, see [`End`]).
    fn nothing() -> Scanned {
        Scanned {
            hits: Vec::new(),
            newlines: 0,
            nul: false,
            head: Vec::new(),
            window_left: 0,
            len: 0,
        }
    }
}

/// Where a mapped input ends when it turned out shorter than its map (a file truncated while
/// it was read, whose pages past the new end read as zeros): `None` while it has not.
pub(crate) type End<'a> = &'a (dyn Fn() -> Option<u64> + Sync);

/// The input's length: `buf`'s, or less when `end` says the input ended earlier.
fn input_len(buf: &[u8], end: Option<End<'_>>) -> usize {
    end.and_then(|e| e()).map_or(buf.len(), |e| {
        usize::try_from(e).unwrap_or(usize::MAX).min(buf.len())
    })
}

/// The scan of the chunk at `start` cut to an input of `len` bytes: nothing of a chunk at or
/// past the end; of the chunk the end falls in, the lines before it (hit texts cut there),
/// and its newlines and NUL bytes counted again over the bytes the input still has.
fn clip(buf: &[u8], start: usize, mut done: Scanned, len: usize) -> Option<Scanned> {
    if start >= len {
        return None;
    }
    let within = len - start;
    if done.len <= within {
        return Some(done);
    }
    let kept = &buf[start..len];
    done.newlines = bytecount::count(kept, b'\n') as u64;
    done.nul = memchr(0, kept).is_some();
    done.len = within;
    for lines in [&mut done.hits, &mut done.head] {
        lines.retain(|h| h.start < within);
        for h in lines.iter_mut() {
            h.text.truncate(within - h.start);
        }
    }
    Some(done)
}

/// A line as a hit of its chunk, cut to `cap`.
fn chunk_line(
    newlines: u64,
    start: usize,
    line: &[u8],
    cap: usize,
    matched: LineMatch,
) -> ChunkHit {
    ChunkHit {
        newlines,
        start,
        text: line[..line.len().min(cap)].to_vec(),
        truncated: line.len() > cap,
        matched,
    }
}

/// Scans `buf` (which starts at a line start) and returns its hits, newline count and
/// whether it holds a NUL byte. Newlines and NULs are counted in the stretch the prefilter
/// has just passed over, while it is still in cache.
/// A line longer than `cap` keeps its first `cap` bytes and is marked cut.
fn scan_chunk(db: &Database, buf: &[u8], cap: usize) -> Scanned {
    let cap = cap.max(1);
    let mut hits: Vec<ChunkHit> = Vec::new();
    let mut scratch = Scratch::default();
    let mut matched = LineMatch::default();
    let mut pos = 0;
    let mut counted = 0;
    let mut newlines = 0u64;
    let mut cursor = Cursor::default();
    let mut nul = false;
    let mut window = 0usize;
    loop {
        let candidate = db.find_anchor_from(buf, pos, &mut cursor);
        if window > 0 && pos < buf.len() {
            let end = memchr(b'\n', &buf[pos..]).map_or(buf.len(), |i| pos + i);
            if candidate.is_none_or(|(_, c)| c >= end) {
                // A line in a trigger's window with no candidate: delivered as context.
                let passed = &buf[counted..pos];
                newlines += bytecount::count(passed, b'\n') as u64;
                nul = nul || memchr(0, passed).is_some();
                counted = pos;
                let line = trim_cr(&buf[pos..end]);
                hits.push(chunk_line(newlines, pos, line, cap, LineMatch::default()));
                window -= 1;
                pos = end + 1;
                continue;
            }
        }
        let Some((anchor, hit)) = candidate else {
            break;
        };
        let start = memrchr(b'\n', &buf[pos..hit]).map_or(pos, |i| pos + i + 1);
        let end = memchr(b'\n', &buf[hit..]).map_or(buf.len(), |i| hit + i);
        let passed = &buf[counted..start];
        newlines += bytecount::count(passed, b'\n') as u64;
        nul = nul || memchr(0, passed).is_some();
        counted = start;
        let line = trim_cr(&buf[start..end]);
        // No anchor starts between `start` and `hit`: the searchers have passed it; the
        // line's other anchors are found by the search that goes on to the next candidate.
        db.confirm_in(
            buf,
            (start, start + line.len()),
            (anchor, hit),
            &mut cursor,
            &mut scratch,
            &mut matched,
        );
        // Lines skipped since `pos` (none when a window is open) closed no window.
        if !matched.is_empty() {
            let trigger = triggers(&matched);
            hits.push(chunk_line(
                newlines,
                start,
                line,
                cap,
                std::mem::take(&mut matched),
            ));
            window = if trigger {
                CONTEXT_LINES
            } else {
                window.saturating_sub(1)
            };
        } else if window > 0 {
            hits.push(chunk_line(newlines, start, line, cap, LineMatch::default()));
            window -= 1;
        }
        pos = end + 1;
    }
    let rest = &buf[counted.min(buf.len())..];
    newlines += bytecount::count(rest, b'\n') as u64;
    nul = nul || memchr(0, rest).is_some();
    // The first lines, for a window that a previous chunk opened.
    let mut head = Vec::new();
    let mut at = 0;
    while head.len() < CONTEXT_LINES && at < buf.len() {
        let end = memchr(b'\n', &buf[at..]).map_or(buf.len(), |i| at + i);
        let line = trim_cr(&buf[at..end]);
        head.push(chunk_line(
            head.len() as u64,
            at,
            line,
            cap,
            LineMatch::default(),
        ));
        at = end + 1;
    }
    Scanned {
        hits,
        newlines,
        nul,
        head,
        window_left: window,
        len: buf.len(),
    }
}

/// Where the chunk that nominally starts at `x` really starts: just after the first newline
/// at or after `x` (0 and the end stay). Each chunk finds its own bounds, so that splitting a
/// mapped file touches no page before a worker scans it.
fn line_start_at(buf: &[u8], x: usize) -> usize {
    if x == 0 || x >= buf.len() {
        return x.min(buf.len());
    }
    memchr(b'\n', &buf[x..]).map_or(buf.len(), |i| x + i + 1)
}

/// The number of chunks of about `size` bytes in `buf`, and the bounds of chunk `i` (each
/// ends just after a newline; one may be empty when a line is longer than `size`).
fn chunk_count(buf: &[u8], size: usize) -> usize {
    buf.len().div_ceil(size.max(1))
}

fn chunk_bound(buf: &[u8], size: usize, i: usize) -> (usize, usize) {
    chunk_bound_examined(buf, size, i).0
}

/// [`chunk_bound`], with the number of bytes it looked at. A chunk in which no line starts
/// is empty and looks no further than its own stretch: only the chunk where a long line
/// starts searches for that line's end, so finding every bound reads each byte at most about
/// twice, however long the lines (searching from each chunk's nominal start instead read a
/// 10 GiB line once per chunk).
fn chunk_bound_examined(buf: &[u8], size: usize, i: usize) -> ((usize, usize), usize) {
    let size = size.max(1);
    let x = i.saturating_mul(size);
    let mut examined = 0;
    let start = if x == 0 || x >= buf.len() {
        x.min(buf.len())
    } else {
        let limit = x.saturating_add(size).min(buf.len());
        match memchr(b'\n', &buf[x..limit]) {
            Some(k) => {
                examined += k + 1;
                x + k + 1
            }
            None => return ((limit, limit), limit - x),
        }
    };
    let next = (i + 1).saturating_mul(size);
    let end = line_start_at(buf, next);
    examined += end.saturating_sub(next);
    ((start, end.max(start)), examined)
}

fn line_count(buf: &[u8], newlines: u64) -> u64 {
    newlines + u64::from(buf.last().is_some_and(|&b| b != b'\n'))
}

/// Scans a whole buffer, on `opts.threads` threads when it is large, calling `sink` for
/// every hit in input order. The result is the same whatever the thread count.
pub fn scan_slice(
    db: &Database,
    buf: &[u8],
    opts: &ScanOptions,
    sink: &mut dyn FnMut(Hit),
) -> ScanStats {
    scan_slice_releasing(db, buf, opts, sink, None, None)
}

/// Called with each chunk of a parallel scan once it is scanned (its hits hold copies of their
/// lines): a memory-mapped input gives its pages back there, on the worker, instead of in one
/// unmap on the calling thread at the end.
pub(crate) type Release<'a> = &'a (dyn Fn(&[u8]) + Sync);

/// [`scan_slice`], with `release` called for each scanned chunk (its pages may go back), and
/// `end` asked where the input ends (a mapped file truncated while it is read): no chunk
/// past that end is scanned, and the hits, lines, NUL bytes and tail are the input's up to it.
///
/// Memory: chunks are at most [`MAX_CHUNK`] bytes and at most [`in_flight`]`(threads)` of
/// them are scanned ahead of the sink, so the hits held at once are bounded by the thread
/// count, not by the input's size or its number of matches.
pub(crate) fn scan_slice_releasing(
    db: &Database,
    buf: &[u8],
    opts: &ScanOptions,
    sink: &mut dyn FnMut(Hit),
    release: Option<Release<'_>>,
    end: Option<End<'_>>,
) -> ScanStats {
    let threads = opts.threads.clamp(1, MAX_THREADS);
    let tail = tail_of(
        &buf[buf.len().saturating_sub(TAIL_BYTES + 1)..],
        buf.len() as u64,
    );
    // Many chunks per thread, so that the threads finish close together; none over
    // MAX_CHUNK, so that one chunk's hits stay small.
    let chunk = (buf.len() / threads.saturating_mul(32).max(1))
        .max(opts.min_chunk.max(1))
        .min(MAX_CHUNK.max(opts.min_chunk));
    // NUL anywhere counts (as in a stream scan), looked for chunk by chunk on the workers.
    let cap = opts.max_line_bytes;
    let mut merged = Merge::default();
    if threads == 1 || buf.len() <= chunk {
        for i in 0..chunk_count(buf, chunk) {
            let (start, done) = scan_nth(db, buf, chunk, i, cap, release, end);
            merged.push_clipped(buf, start, done, input_len(buf, end), sink);
        }
    } else if rayon::current_thread_index().is_none() {
        let bounds = (release, end);
        scan_parallel(db, buf, chunk, threads, cap, sink, bounds, &mut merged);
    } else {
        // On a pool thread (many files scanned at once): blocking it on a channel while
        // the pool runs the chunks could starve the pool, so the chunks run as parallel
        // jobs that this thread helps with, a bounded batch at a time, and their hits follow.
        let n = chunk_count(buf, chunk);
        let ahead = in_flight(threads);
        for first in (0..n).step_by(ahead) {
            let results: Vec<(usize, Scanned)> = (first..(first + ahead).min(n))
                .into_par_iter()
                .map(|i| scan_nth(db, buf, chunk, i, cap, release, end))
                .collect();
            for (s, done) in results {
                merged.push_clipped(buf, s, done, input_len(buf, end), sink);
            }
        }
    }
    let len = input_len(buf, end);
    let tail = if len == buf.len() {
        tail
    } else {
        tail_of(&buf[len.saturating_sub(TAIL_BYTES + 1)..len], len as u64)
    };
    ScanStats {
        bytes: len as u64,
        lines: line_count(&buf[..len], merged.newlines),
        binary: merged.binary,
        tail,
    }
}

/// Chunk results passed to the sink in input order, and the totals so far.
#[derive(Default)]
struct Merge {
    /// Newlines in the chunks passed so far.
    newlines: u64,
    binary: bool,
    /// Lines still in the last context window, reaching into the next chunk.
    window: usize,
}

impl Merge {
    /// Passes the hits of the chunk at input offset `start`, the next one in input order,
    /// with the lines of its head that a previous chunk's window reaches.
    fn push(&mut self, start: u64, done: Scanned, sink: &mut dyn FnMut(Hit)) {
        let carried = self.window.min(done.head.len());
        let mut head = done.head.into_iter().take(carried).peekable();
        for h in done.hits {
            while let Some(c) = head.next_if(|c| c.newlines <= h.newlines) {
                if c.newlines < h.newlines {
                    emit(start, self.newlines, c, sink);
                }
            }
            emit(start, self.newlines, h, sink);
        }
        for c in head {
            emit(start, self.newlines, c, sink);
        }
        let lines_here = usize::try_from(done.newlines).unwrap_or(usize::MAX);
        self.window = done.window_left.max(self.window.saturating_sub(lines_here));
        self.newlines += done.newlines;
        self.binary |= done.nul;
    }

    /// [`Merge::push`] of the chunk at `start` of `buf`, cut to an input of `len` bytes (see
    /// [`clip`]).
    fn push_clipped(
        &mut self,
        buf: &[u8],
        start: usize,
        done: Scanned,
        len: usize,
        sink: &mut dyn FnMut(Hit),
    ) {
        if let Some(done) = clip(buf, start, done, len) {
            self.push(start as u64, done, sink);
        }
    }

    /// A line outside any chunk (a streamed line over the cap) passed on its own;
    /// `terminated` when a newline ends it.
    fn push_long(&mut self, hit: Option<Hit>, terminated: bool, sink: &mut dyn FnMut(Hit)) {
        match hit {
            Some(h) => {
                self.window = if triggers(&h.matched) {
                    CONTEXT_LINES
                } else {
                    self.window.saturating_sub(1)
                };
                sink(h);
            }
            None => self.window = self.window.saturating_sub(1),
        }
        self.newlines += u64::from(terminated);
    }
}

/// Finds chunk `i`'s bounds (chunks of `size` bytes), scans it, then hands it to `release`:
/// the chunk's start and its scan. Past the input's end (see [`End`]) nothing is read, and a
/// chunk the end falls in is scanned up to it, when it is known by then.
#[allow(clippy::too_many_arguments)]
fn scan_nth(
    db: &Database,
    buf: &[u8],
    size: usize,
    i: usize,
    cap: usize,
    release: Option<Release<'_>>,
    input_end: Option<End<'_>>,
) -> (usize, Scanned) {
    let nominal = i.saturating_mul(size.max(1)).min(buf.len());
    if input_len(buf, input_end) <= nominal {
        return (nominal, Scanned::nothing());
    }
    let (start, end) = chunk_bound(buf, size, i);
    // Finding the bound may have read past a truncated file's end: ask again.
    let end = end.min(input_len(buf, input_end)).max(start);
    let done = scan_chunk(db, &buf[start..end], cap);
    if let Some(release) = release {
        release(&buf[start..end]);
    }
    (start, done)
}

/// Scans the chunks of `buf` on `threads` workers, which take chunks in input order, while
/// the calling thread passes each finished chunk's hits to `sink` (through `merged`) as soon
/// as every chunk before it is done: the sink's work overlaps the scan instead of following it.
/// A worker takes chunk `i` only once chunk `i - in_flight(threads)` has been passed on, so
/// the finished chunks waiting for the sink stay few.
#[allow(clippy::too_many_arguments)]
fn scan_parallel(
    db: &Database,
    buf: &[u8],
    chunk: usize,
    threads: usize,
    cap: usize,
    sink: &mut dyn FnMut(Hit),
    (release, end): (Option<Release<'_>>, Option<End<'_>>),
    merged: &mut Merge,
) {
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    use std::sync::{Condvar, Mutex};
    let count = chunk_count(buf, chunk);
    let next = AtomicUsize::new(0);
    let ahead = in_flight(threads);
    // Chunks passed to the sink so far; workers wait on it to stay within `ahead`.
    let passed = Mutex::new(0usize);
    let moved = Condvar::new();
    let stop = AtomicBool::new(false);
    let (tx, rx) = std::sync::mpsc::channel::<(usize, usize, Scanned)>();
    std::thread::scope(|scope| {
        let next = &next;
        let (passed, moved, stop) = (&passed, &moved, &stop);
        scope.spawn(move || {
            (0..threads.min(count))
                .into_par_iter()
                .for_each_with(tx, |tx, _| loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= count {
                        break;
                    }
                    {
                        let mut done = passed.lock().unwrap_or_else(|e| e.into_inner());
                        while i >= *done + ahead && !stop.load(Ordering::Relaxed) {
                            done = moved.wait(done).unwrap_or_else(|e| e.into_inner());
                        }
                    }
                    if stop.load(Ordering::Relaxed) {
                        break;
                    }
                    let (start, done) = scan_nth(db, buf, chunk, i, cap, release, end);
                    // A closed channel means the receiver is gone: nothing left to do.
                    if tx.send((i, start, done)).is_err() {
                        break;
                    }
                });
        });
        // Wakes the workers however this thread leaves (a panicking sink included).
        struct Wake<'a>(&'a AtomicBool, &'a Condvar, &'a Mutex<usize>);
        impl Drop for Wake<'_> {
            fn drop(&mut self) {
                self.0.store(true, Ordering::Relaxed);
                let _guard = self.2.lock();
                self.1.notify_all();
            }
        }
        let _wake = Wake(stop, moved, passed);
        let mut pending = std::collections::BTreeMap::new();
        let mut want = 0;
        for (i, start, result) in rx {
            pending.insert(i, (start, result));
            while let Some((start, done)) = pending.remove(&want) {
                merged.push_clipped(buf, start, done, input_len(buf, end), sink);
                want += 1;
                *passed.lock().unwrap_or_else(|e| e.into_inner()) = want;
                moved.notify_all();
            }
        }
    });
}

/// Turns a chunk hit into a hit; the chunk starts at input offset `offset`, after
/// `lines_before` newlines.
fn emit(offset: u64, lines_before: u64, h: ChunkHit, sink: &mut dyn FnMut(Hit)) {
    sink(Hit {
        line: lines_before + h.newlines + 1,
        offset: offset + h.start as u64,
        text: h.text,
        text_truncated: h.truncated,
        matched: h.matched,
    });
}

/// Bytes of a too-long line kept from one window to the next, so that a match straddling
/// two windows is still seen (when it is shorter than this).
pub const WINDOW_OVERLAP: usize = 4096;

/// A line longer than the cap, being scanned in windows.
struct LongLine {
    line: u64,
    offset: u64,
    /// The line's first bytes (at least the cap), kept for the hit's text.
    text: Vec<u8>,
    /// Bytes of the line seen so far, and whether the last of them was `\r`.
    len: u64,
    last_cr: bool,
    /// The last [`WINDOW_OVERLAP`] bytes of the previous window.
    tail: Vec<u8>,
    matched: LineMatch,
}

/// Scans a stream in blocks of `opts.block_size`, carrying the partial last line over.
/// Memory stays within about `block_size + max_line_bytes` (plus a few windows of
/// [`WINDOW_OVERLAP`]) whatever the input: a line longer than the cap keeps only its first
/// `max_line_bytes` for the hit's text and is scanned block by block. Hits reach `sink` as
/// they are found; a read error ends the scan and is returned with the stats so far.
pub fn scan_reader(
    db: &Database,
    reader: &mut dyn Read,
    opts: &ScanOptions,
    sink: &mut dyn FnMut(Hit),
) -> (ScanStats, Option<std::io::Error>) {
    let block = opts.block_size.max(1);
    // Reads start small and double while they fill, so a sweep of many small compressed
    // logs does not allocate and zero a full block per input.
    let mut want = block.min(64 << 10);
    let cap = opts.max_line_bytes.max(1);
    let mut buf: Vec<u8> = Vec::new();
    let mut stats = ScanStats::default();
    // Absolute offset of buf[0], and newlines seen before it.
    let mut offset = 0u64;
    let mut merged = Merge::default();
    let mut last_byte = b'\n';
    let mut long: Option<LongLine> = None;
    let mut scratch = Scratch::default();
    let mut error = None;
    let mut eof = false;
    let mut tail = TailKeeper::default();
    while !eof {
        let filled = buf.len();
        buf.resize(filled + want, 0);
        let mut got = filled;
        while got < buf.len() {
            match reader.read(&mut buf[got..]) {
                Ok(0) => {
                    eof = true;
                    break;
                }
                Ok(n) => got += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => {
                    error = Some(e);
                    eof = true;
                    break;
                }
            }
        }
        if got == buf.len() {
            want = (want * 2).min(block);
        }
        buf.truncate(got);
        if got > filled {
            tail.push(&buf[filled..got]);
            stats.bytes += (got - filled) as u64;
            last_byte = buf[got - 1];
        }
        if let Some(mut l) = long.take() {
            match memchr(b'\n', &buf) {
                Some(i) => {
                    scan_window(db, &mut l, &buf[..i], &mut scratch, &mut stats.binary);
                    merged.push_long(finish_long(l, cap), true, sink);
                    offset += (i + 1) as u64;
                    buf.drain(..=i);
                }
                None => {
                    scan_window(db, &mut l, &buf, &mut scratch, &mut stats.binary);
                    offset += buf.len() as u64;
                    buf.clear();
                    if eof {
                        merged.push_long(finish_long(l, cap), false, sink);
                    } else {
                        long = Some(l);
                    }
                    continue;
                }
            }
        }
        // The carried-over part holds no newline: only the new bytes need a look.
        let whole = if eof {
            buf.len()
        } else {
            memrchr(b'\n', &buf[filled.min(buf.len())..])
                .map_or(0, |i| filled.min(buf.len()) + i + 1)
        };
        // Every byte is scanned once, here or in a long line's window: that is where NUL
        // bytes are looked for.
        let done = scan_chunk(db, &buf[..whole], cap);
        stats.binary |= done.nul;
        merged.push(offset, done, sink);
        offset += whole as u64;
        buf.drain(..whole);
        if buf.len() > cap && !eof {
            let mut l = LongLine {
                line: merged.newlines + 1,
                offset,
                text: Vec::new(),
                len: 0,
                last_cr: false,
                tail: Vec::new(),
                matched: LineMatch::default(),
            };
            scan_window(db, &mut l, &buf, &mut scratch, &mut stats.binary);
            offset += buf.len() as u64;
            // The buffer becomes the text (no copy); the next blocks go to a fresh one.
            buf.truncate(cap);
            l.text = std::mem::take(&mut buf);
            long = Some(l);
        }
    }
    stats.lines = merged.newlines + u64::from(stats.bytes > 0 && last_byte != b'\n');
    stats.tail = tail_of(&tail.0, stats.bytes);
    (stats, error)
}

/// Scans one window of a long line: first the seam with the previous window (so a match of
/// up to [`WINDOW_OVERLAP`] bytes across the boundary is seen), then the window itself.
/// Sets `binary` if the window holds a NUL byte.
fn scan_window(
    db: &Database,
    l: &mut LongLine,
    window: &[u8],
    scratch: &mut Scratch,
    binary: &mut bool,
) {
    if window.is_empty() {
        return;
    }
    *binary = *binary || memchr(0, window).is_some();
    l.len += window.len() as u64;
    l.last_cr = window.last() == Some(&b'\r');
    let mut seam = std::mem::take(&mut l.tail);
    let had_tail = !seam.is_empty();
    seam.extend_from_slice(&window[..window.len().min(WINDOW_OVERLAP)]);
    if had_tail {
        confirm_into(db, l, &seam, scratch);
    }
    confirm_into(db, l, window, scratch);
    let keep = if window.len() >= WINDOW_OVERLAP {
        &window[window.len() - WINDOW_OVERLAP..]
    } else {
        &seam[seam.len().saturating_sub(WINDOW_OVERLAP)..]
    };
    l.tail = keep.to_vec();
}

fn confirm_into(db: &Database, l: &mut LongLine, bytes: &[u8], scratch: &mut Scratch) {
    if db.find_candidate(bytes, 0).is_some() {
        let mut found = LineMatch::default();
        db.confirm_from(trim_cr(bytes), 0, scratch, &mut found);
        l.matched.signatures.extend(found.signatures);
        l.matched.signatures.sort_unstable();
        l.matched.signatures.dedup();
        l.matched.markers |= found.markers;
    }
}

/// A long line's hit, if it matched; its text is its first `cap` bytes (without a final `\r`).
fn finish_long(mut l: LongLine, cap: usize) -> Option<Hit> {
    if l.matched.is_empty() {
        return None;
    }
    let len = l.len - u64::from(l.last_cr);
    let shown = (cap as u64).min(len) as usize;
    l.text.truncate(shown);
    Some(Hit {
        line: l.line,
        offset: l.offset,
        text: l.text,
        text_truncated: len > cap as u64,
        matched: l.matched,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::EmbeddedDatabase;
    use faultline_db::{LogGen, SynthOptions};

    /// Chunk bounds partition the buffer in order, and finding all of them reads each byte
    /// a bounded number of times, however long the lines (a complexity test by counting).
    #[test]
    fn chunk_bounds_partition_and_read_each_byte_boundedly() {
        let mut long = vec![b'x'; 1 << 20];
        long.extend_from_slice(b"\nshort\n");
        long.extend(std::iter::repeat_n(0u8, 300_000));
        long.extend_from_slice(b"\nend");
        let cases: Vec<Vec<u8>> = vec![
            long,
            vec![b'y'; 100_000],
            b"a\nbb\nccc\n".repeat(5000),
            vec![b'\n'; 10_000],
            Vec::new(),
        ];
        for buf in &cases {
            for size in [1usize, 7, 4096, 65_536] {
                if buf.len() / size > 200_000 {
                    continue;
                }
                let mut at = 0;
                let mut examined = 0;
                for i in 0..chunk_count(buf, size) {
                    let ((s, e), n) = chunk_bound_examined(buf, size, i);
                    examined += n;
                    if s == e {
                        continue;
                    }
                    assert_eq!(
                        s, at,
                        "chunk {i} of size {size} starts where the last ended"
                    );
                    assert!(s == 0 || buf[s - 1] == b'\n', "a chunk starts a line");
                    at = e;
                }
                assert_eq!(at, buf.len(), "the chunks cover the buffer (size {size})");
                assert!(
                    examined <= 2 * buf.len() + size,
                    "{examined} bytes examined for {} (size {size})",
                    buf.len()
                );
            }
        }
    }

    /// A generated log with failure lines at known places; returns the log and, per
    /// inserted line, its 1-based line number.
    fn log_with_failures(failures: &[&str]) -> (Vec<u8>, Vec<u64>) {
        let mut buf = Vec::new();
        let mut gen = LogGen::new(SynthOptions {
            seed: 11,
            non_ascii: 0.05,
            long_line_rate: 2e-3,
            ..SynthOptions::default()
        });
        let mut at = Vec::new();
        for f in failures {
            let want = buf.len() + 150_000;
            gen.fill(&mut buf, want);
            at.push(bytecount::count(&buf, b'\n') as u64 + 1);
            buf.extend_from_slice(f.as_bytes());
            buf.extend_from_slice(b"\r\n");
        }
        let want = buf.len() + 50_000;
        gen.fill(&mut buf, want);
        (buf, at)
    }

    /// A mapped file truncated while it is read: its map shows zeros past the new end. Told
    /// where the input ends, the scan passes over no chunk past it (counted in the bytes the
    /// chunks scanned cover), and its hits and totals are those of the bytes before the end:
    /// no line of zeros, no NUL byte (`binary`), the tail ending at the cut.
    #[test]
    fn a_scan_told_its_input_ended_stops_there_and_counts_only_what_came_before() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        let db = Database::embedded();
        let (log, _) = log_with_failures(&[
            "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB",
            "RuntimeError: NCCL error in: ProcessGroupNCCL.cpp:1, unhandled system error",
        ]);
        let end = 200_000 + 17;
        let mut map = log[..end].to_vec();
        map.resize(40 << 20, 0);
        for threads in [1, 2, 4] {
            let opts = ScanOptions {
                threads,
                min_chunk: 64 << 10,
                ..ScanOptions::default()
            };
            let scanned = AtomicUsize::new(0);
            let release = |chunk: &[u8]| {
                scanned.fetch_add(chunk.len(), Ordering::Relaxed);
            };
            let input_end = || Some(end as u64);
            let (hits, stats) = hits_of(|sink| {
                scan_slice_releasing(db, &map, &opts, sink, Some(&release), Some(&input_end))
            });
            let (want_hits, want) = hits_of(|sink| scan_slice(db, &log[..end], &opts, sink));
            assert_eq!((&hits, &stats), (&want_hits, &want), "threads {threads}");
            assert!(!stats.binary && stats.bytes == end as u64);
            let chunk = MAX_CHUNK.max(opts.min_chunk);
            let work = scanned.load(Ordering::Relaxed);
            assert!(
                work <= end + chunk,
                "threads {threads}: {work} bytes scanned for an input of {end}"
            );
        }
    }

    fn hits_of(run: impl FnOnce(&mut dyn FnMut(Hit)) -> ScanStats) -> (Vec<Hit>, ScanStats) {
        let mut hits = Vec::new();
        let stats = run(&mut |h| hits.push(h));
        (hits, stats)
    }

    #[test]
    fn every_mode_finds_the_same_lines() {
        let db = Database::embedded();
        let failures = [
            "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 3 has a total capacity of 79.19 GiB of which 1.01 GiB is free.",
            "(Worker_TP1 pid=3312) ERROR 11-02 04:12:55 [multiproc_executor.py:671] torch.AcceleratorError: CUDA error: an illegal memory access was encountered",
            "[3] include/shm.h:28 NCCL WARN Call to posix_fallocate failed : No space left on device",
        ];
        let (buf, at) = log_with_failures(&failures);
        let one = ScanOptions {
            threads: 1,
            ..ScanOptions::default()
        };
        let (base, stats) = hits_of(|s| scan_slice(db, &buf, &one, s));
        assert_eq!(stats.lines, bytecount::count(&buf, b'\n') as u64);
        for (line, text) in at.iter().zip(failures) {
            let hit = base.iter().find(|h| h.line == *line);
            let hit = hit.unwrap_or_else(|| panic!("line {line} not found"));
            assert_eq!(hit.text, text.as_bytes());
            assert!(!hit.matched.signatures.is_empty(), "{text}");
        }
        let parallel = ScanOptions {
            threads: 3,
            min_chunk: 10_000,
            ..ScanOptions::default()
        };
        let (hits, s) = hits_of(|sink| scan_slice(db, &buf, &parallel, sink));
        assert_eq!((&hits, &s), (&base, &stats));
        // From inside a pool whose threads all scan at once (as a bulk scan of many files
        // does), each scan still completes and finds the same lines.
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(2)
            .build()
            .unwrap();
        let inner: Vec<(Vec<Hit>, ScanStats)> = pool.install(|| {
            (0..4)
                .into_par_iter()
                .map(|_| hits_of(|sink| scan_slice(db, &buf, &parallel, sink)))
                .collect()
        });
        for (hits, s) in &inner {
            assert_eq!((hits, s), (&base, &stats));
        }
        // Any thread count is clamped to 1..=MAX_THREADS, without overflow.
        for threads in [0, usize::MAX] {
            let opts = ScanOptions {
                threads,
                min_chunk: 10_000,
                ..ScanOptions::default()
            };
            let (hits, s) = hits_of(|sink| scan_slice(db, &buf, &opts, sink));
            assert_eq!((&hits, &s), (&base, &stats), "threads {threads}");
        }
        for block in [4096, 65_537] {
            let opts = ScanOptions {
                block_size: block,
                ..ScanOptions::default()
            };
            let (hits, s) = hits_of(|sink| scan_reader(db, &mut buf.as_slice(), &opts, sink).0);
            assert_eq!((&hits, &s), (&base, &stats), "block {block}");
        }
    }
}
