//! Opening inputs: regular files are memory-mapped, `.gz` and `.zst` (detected by their
//! magic bytes) are decompressed on a thread of their own, anything else is streamed.

use std::fs::File;
use std::io::{self, Cursor, Read};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};

use memmap2::Mmap;

use super::{scan_reader, scan_slice, scan_slice_releasing, Hit, ScanOptions, ScanStats};
use crate::error::Error;
use faultline_db::Database;

/// How an input's bytes are encoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum InputKind {
    /// Uncompressed bytes.
    Plain,
    /// A gzip stream (by its magic bytes).
    Gzip,
    /// A zstd frame (by its magic bytes).
    Zstd,
    /// UTF-16 with a little-endian byte order mark (`ff fe`), decoded to UTF-8 as it is read.
    Utf16Le,
    /// UTF-16 with a big-endian byte order mark (`fe ff`), decoded to UTF-8 as it is read.
    Utf16Be,
}

impl InputKind {
    /// Recognises gzip (`1f 8b`), zstd (`28 b5 2f fd`) and the UTF-16 byte order marks by
    /// their first bytes.
    pub fn sniff(head: &[u8]) -> InputKind {
        if head.starts_with(&[0x1f, 0x8b]) {
            InputKind::Gzip
        } else if head.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]) {
            InputKind::Zstd
        } else if head.starts_with(&[0xff, 0xfe]) {
            InputKind::Utf16Le
        } else if head.starts_with(&[0xfe, 0xff]) {
            InputKind::Utf16Be
        } else {
            InputKind::Plain
        }
    }

    /// The name used in error messages (`gzip stream: ...`).
    fn stream_name(self) -> &'static str {
        match self {
            InputKind::Plain => "plain",
            InputKind::Gzip => "gzip",
            InputKind::Zstd => "zstd",
            InputKind::Utf16Le | InputKind::Utf16Be => "UTF-16",
        }
    }
}

/// `raw` (which starts with its magic bytes) decoded as `kind` says: gzip members one after
/// another (zero padding after the last one ignored, as `gzip -t` does), zstd frames, UTF-16
/// as UTF-8. Runs on the calling thread.
pub fn decode(kind: InputKind, raw: Box<dyn Read + Send>) -> io::Result<Box<dyn Read + Send>> {
    Ok(match kind {
        InputKind::Plain => raw,
        InputKind::Gzip => Box::new(GzMembers::new(raw)),
        InputKind::Zstd => Box::new(zstd::stream::read::Decoder::new(raw)?),
        InputKind::Utf16Le | InputKind::Utf16Be => {
            Box::new(Utf16::new(raw, kind == InputKind::Utf16Be))
        }
    })
}

/// Gzip members one after another, like `MultiGzDecoder`, except that zero bytes after the
/// last member end the stream quietly (tape and block-device padding; `gzip -t` accepts it).
/// Any other byte after a member must start a new one.
struct GzMembers {
    member: Option<flate2::bufread::GzDecoder<io::BufReader<Box<dyn Read + Send>>>>,
}

impl GzMembers {
    fn new(raw: Box<dyn Read + Send>) -> GzMembers {
        GzMembers {
            member: Some(flate2::bufread::GzDecoder::new(io::BufReader::new(raw))),
        }
    }
}

impl Read for GzMembers {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        use io::BufRead;
        loop {
            let Some(member) = self.member.as_mut() else {
                return Ok(0);
            };
            let n = member.read(out)?;
            if n > 0 || out.is_empty() {
                return Ok(n);
            }
            // The member ended: what follows is another member, zero padding, or nothing.
            let Some(member) = self.member.take() else {
                return Ok(0);
            };
            let mut rest = member.into_inner();
            let head = rest.fill_buf()?;
            if head.is_empty() {
                return Ok(0);
            }
            if head[0] != 0 {
                self.member = Some(flate2::bufread::GzDecoder::new(rest));
                continue;
            }
            loop {
                let buf = rest.fill_buf()?;
                if buf.is_empty() {
                    return Ok(0);
                }
                if buf.iter().any(|&b| b != 0) {
                    return Err(io::Error::new(
                        io::ErrorKind::InvalidData,
                        "bytes other than zero padding after the last gzip member",
                    ));
                }
                let k = buf.len();
                rest.consume(k);
            }
        }
    }
}

/// UTF-16 (after its byte order mark) decoded to UTF-8; an unpaired surrogate or a final odd
/// byte becomes U+FFFD. Offsets and sizes of such an input are those of the UTF-8 text.
struct Utf16 {
    inner: Box<dyn Read + Send>,
    big_endian: bool,
    raw: Vec<u8>,
    /// A byte of a unit split between two reads.
    odd: Option<u8>,
    /// A high surrogate waiting for its low half.
    high: Option<u16>,
    /// Whether the first unit (the byte order mark) is still to come.
    first: bool,
    out: Vec<u8>,
    pos: usize,
    eof: bool,
}

impl Utf16 {
    fn new(inner: Box<dyn Read + Send>, big_endian: bool) -> Utf16 {
        Utf16 {
            inner,
            big_endian,
            raw: vec![0; 64 << 10],
            odd: None,
            high: None,
            first: true,
            out: Vec::new(),
            pos: 0,
            eof: false,
        }
    }

    fn push(&mut self, c: char) {
        let mut b = [0u8; 4];
        self.out.extend_from_slice(c.encode_utf8(&mut b).as_bytes());
    }

    fn unit(&mut self, u: u16) {
        if std::mem::take(&mut self.first) && u == 0xfeff {
            return;
        }
        if let Some(h) = self.high.take() {
            if (0xdc00..=0xdfff).contains(&u) {
                let c = 0x10000 + ((u32::from(h) - 0xd800) << 10) + (u32::from(u) - 0xdc00);
                self.push(char::from_u32(c).unwrap_or(char::REPLACEMENT_CHARACTER));
                return;
            }
            self.push(char::REPLACEMENT_CHARACTER);
        }
        match u {
            0xd800..=0xdbff => self.high = Some(u),
            0xdc00..=0xdfff => self.push(char::REPLACEMENT_CHARACTER),
            _ => self.push(char::from_u32(u32::from(u)).unwrap_or(char::REPLACEMENT_CHARACTER)),
        }
    }
}

impl Read for Utf16 {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        while self.pos == self.out.len() {
            if self.eof {
                return Ok(0);
            }
            self.out.clear();
            self.pos = 0;
            let n = loop {
                match self.inner.read(&mut self.raw) {
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    r => break r?,
                }
            };
            if n == 0 {
                self.eof = true;
                if self.odd.take().is_some() | self.high.take().is_some() {
                    self.push(char::REPLACEMENT_CHARACTER);
                }
                continue;
            }
            let raw = std::mem::take(&mut self.raw);
            let mut bytes = raw[..n].iter().copied();
            loop {
                let a = match self.odd.take() {
                    Some(a) => a,
                    None => match bytes.next() {
                        Some(a) => a,
                        None => break,
                    },
                };
                let Some(b) = bytes.next() else {
                    self.odd = Some(a);
                    break;
                };
                let u = if self.big_endian {
                    u16::from_be_bytes([a, b])
                } else {
                    u16::from_le_bytes([a, b])
                };
                self.unit(u);
            }
            self.raw = raw;
        }
        let n = out.len().min(self.out.len() - self.pos);
        out[..n].copy_from_slice(&self.out[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
}

enum Source {
    /// A mapped file, its truncation guard (Linux) and the file itself (to read its size again).
    Mapped(Mmap, Option<truncation::Guard>, File),
    Bytes(Vec<u8>),
    /// Bytes owned elsewhere, scanned in place (a Python `bytes` object or buffer).
    Shared(Box<dyn AsRef<[u8]> + Send>),
    Stream(Box<dyn Read + Send>),
}

/// An opened input, ready to scan.
pub struct Input {
    path: PathBuf,
    kind: InputKind,
    source: Source,
}

impl std::fmt::Debug for Input {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Input")
            .field("path", &self.path)
            .field("kind", &self.kind)
            .finish_non_exhaustive()
    }
}

/// Opens `path` (`-` is standard input).
pub fn open(path: &Path) -> Result<Input, Error> {
    let io_err = |source| Error::Io {
        path: path.to_path_buf(),
        source,
    };
    if path == Path::new("-") {
        return Input::from_reader(path, Box::new(io::stdin())).map_err(io_err);
    }
    let mut file = File::open(path).map_err(io_err)?;
    let meta = file.metadata().map_err(io_err)?;
    if meta.is_dir() {
        return Err(io_err(io::Error::other("is a directory")));
    }
    if meta.is_file() {
        let mut head = [0u8; 4];
        let n = read_head(&mut file, &mut head).map_err(io_err)?;
        if InputKind::sniff(&head[..n]) == InputKind::Plain {
            if meta.len() == 0 {
                return Ok(Input {
                    path: path.to_path_buf(),
                    kind: InputKind::Plain,
                    source: Source::Bytes(Vec::new()),
                });
            }
            // Not prefaulted (MAP_POPULATE): that runs on the calling thread before any
            // worker starts, while faults taken by the workers (the kernel maps a run of
            // cached pages per fault) overlap the scan. Measured on a 1 GiB log in page
            // cache: 0.69 -> 0.65 s on one thread, 0.39 -> 0.37 s on two (BENCHMARKS.md).
            let options = memmap2::MmapOptions::new();
            // SAFETY: the map is read-only. A file truncated while mapped (logrotate's
            // copytruncate) raises SIGBUS on a page past its new end: the guard registered
            // here turns that into zero pages and an error for this input (Linux). Where
            // no guard can be had, the file is read as a stream instead.
            if let Ok(map) = unsafe { options.map(&file) } {
                let guard = truncation::Guard::register(&map);
                if guard.is_some() || !truncation::GUARDED {
                    return Ok(Input {
                        path: path.to_path_buf(),
                        kind: InputKind::Plain,
                        source: Source::Mapped(map, guard, file),
                    });
                }
            }
        }
        let rest: Box<dyn Read + Send> = Box::new(Cursor::new(head[..n].to_vec()).chain(file));
        return Input::from_reader(path, rest).map_err(io_err);
    }
    Input::from_reader(path, Box::new(file)).map_err(io_err)
}

fn read_head(r: &mut dyn Read, head: &mut [u8]) -> io::Result<usize> {
    let mut n = 0;
    while n < head.len() {
        match r.read(&mut head[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

impl Input {
    /// Wraps any reader; compression is detected from its first bytes.
    pub fn from_reader(path: &Path, mut reader: Box<dyn Read + Send>) -> io::Result<Input> {
        let mut head = [0u8; 4];
        let n = read_head(&mut reader, &mut head)?;
        let kind = InputKind::sniff(&head[..n]);
        let raw: Box<dyn Read + Send> = Box::new(Cursor::new(head[..n].to_vec()).chain(reader));
        let source = match kind {
            InputKind::Plain => Source::Stream(raw),
            k => Source::Stream(decode_on_thread(decode(k, raw)?)),
        };
        Ok(Input {
            path: path.to_path_buf(),
            kind,
            source,
        })
    }

    /// Wraps bytes already in memory.
    pub fn from_bytes(path: &Path, bytes: Vec<u8>) -> Input {
        Input {
            path: path.to_path_buf(),
            kind: InputKind::Plain,
            source: Source::Bytes(bytes),
        }
    }

    /// Wraps bytes owned by someone else (a Python `bytes` object, a buffer export), scanned
    /// in place without a copy; `bytes` is dropped when the scan ends.
    pub fn from_shared(path: &Path, bytes: Box<dyn AsRef<[u8]> + Send>) -> Input {
        Input {
            path: path.to_path_buf(),
            kind: InputKind::Plain,
            source: Source::Shared(bytes),
        }
    }

    /// The path the input was opened with.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The input's encoding.
    pub fn kind(&self) -> InputKind {
        self.kind
    }

    /// Scans the input, calling `sink` for each hit in order. A read or decompression error
    /// ends the scan; the hits before it have been delivered and the error names the path
    /// and byte offset (of the decompressed stream, for compressed inputs).
    pub fn scan(
        self,
        db: &Database,
        opts: &ScanOptions,
        sink: &mut dyn FnMut(Hit),
    ) -> (ScanStats, Option<Error>) {
        match self.source {
            Source::Mapped(map, guard, file) => {
                let release = |chunk: &[u8]| release_pages(&map, chunk);
                // Once a page past the file's end faulted, the input ends where the file now
                // does: the bytes past it read as zeros, and are not the input's.
                let end = || {
                    let fault = guard.as_ref().and_then(truncation::Guard::fault)?;
                    Some(fault.min(file.metadata().map_or(u64::MAX, |m| m.len())))
                };
                let stats = scan_slice_releasing(db, &map, opts, sink, Some(&release), Some(&end));
                if guard.as_ref().and_then(truncation::Guard::fault).is_none() {
                    return (stats, None);
                }
                let offset = stats.bytes;
                let err = Error::Input {
                    path: self.path.clone(),
                    offset,
                    source: io::Error::new(
                        io::ErrorKind::UnexpectedEof,
                        format!(
                            "the file was truncated while it was read (it had {} bytes when opened; \
                             logrotate copytruncate?)",
                            map.len()
                        ),
                    ),
                };
                drop(guard);
                (stats, Some(err))
            }
            Source::Bytes(bytes) => (scan_slice(db, &bytes, opts, sink), None),
            Source::Shared(bytes) => (scan_slice(db, (*bytes).as_ref(), opts, sink), None),
            Source::Stream(mut reader) => {
                let (stats, err) = scan_reader(db, &mut reader, opts, sink);
                let err = err.map(|source| Error::Input {
                    path: self.path.clone(),
                    offset: stats.bytes,
                    source: match self.kind {
                        InputKind::Plain => source,
                        k => io::Error::new(
                            source.kind(),
                            format!("{} stream: {source}", k.stream_name()),
                        ),
                    },
                });
                (stats, err)
            }
        }
    }
}

/// Drops the map's page-table entries for the whole pages inside `chunk` (a part of `map`
/// already scanned), so that unmapping a large file is spread over the workers instead of
/// running on one thread at the end (about 30 ms per GiB here). The pages stay in the page
/// cache; a later read of them faults them in again with the same bytes.
fn release_pages(map: &Mmap, chunk: &[u8]) {
    #[cfg(unix)]
    {
        const PAGE: usize = 4096;
        let base = map.as_ptr() as usize;
        let start = (chunk.as_ptr() as usize - base).next_multiple_of(PAGE);
        let end = (chunk.as_ptr() as usize - base + chunk.len()) / PAGE * PAGE;
        if end > start {
            // SAFETY: the map is a read-only, private map of a file that is never written
            // through it, so MADV_DONTNEED discards no data: the range reads back the file's
            // bytes, now or later. The range lies inside the map.
            let _ = unsafe {
                map.unchecked_advise_range(memmap2::UncheckedAdvice::DontNeed, start, end - start)
            };
        }
    }
    #[cfg(not(unix))]
    let _ = (map, chunk);
}

/// Surviving a mapped file that shrinks while it is read. A read of a mapped page past a
/// file's end raises SIGBUS, which would kill a whole sweep. Each map is registered here; a
/// process-wide SIGBUS handler that finds the faulting address inside a registered map maps
/// anonymous zero pages over the rest of that map (one `mmap(MAP_FIXED)`, an
/// async-signal-safe system call) and records the offset, so the read resumes, reads zeros,
/// and the input ends with an error naming the offset. A fault anywhere else goes to the
/// handler that was there before (the default: the process dies as it would have).
/// Nothing is added to the scan loop: the cost is one registration per mapped file.
#[cfg(target_os = "linux")]
mod truncation {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::OnceLock;

    /// Whether maps are guarded on this platform.
    pub const GUARDED: bool = true;

    /// Maps guarded at once; a file opened while all are taken is read as a stream.
    const SLOTS: usize = 1024;
    const FREE: usize = 0;
    /// A slot being filled in: no address is at or above START and below END = 0.
    const CLAIMED: usize = 1;
    const NO_FAULT: usize = usize::MAX;

    #[allow(clippy::declare_interior_mutable_const)]
    const ZERO: AtomicUsize = AtomicUsize::new(0);
    static START: [AtomicUsize; SLOTS] = [ZERO; SLOTS];
    static END: [AtomicUsize; SLOTS] = [ZERO; SLOTS];
    /// The lowest faulting offset in the map, or NO_FAULT.
    static FAULT: [AtomicUsize; SLOTS] = [ZERO; SLOTS];
    static PAGE: AtomicUsize = AtomicUsize::new(4096);
    /// The SIGBUS action before ours (Rust's stack-overflow handler, or the default);
    /// `None` while ours is not installed.
    static PREVIOUS: OnceLock<Option<Previous>> = OnceLock::new();

    struct Previous(libc::sigaction);
    // SAFETY: plain data (a handler address, flags and a signal mask), only read.
    unsafe impl Send for Previous {}
    unsafe impl Sync for Previous {}

    /// A registered map; unregisters on drop (before the map itself is unmapped).
    pub struct Guard {
        slot: usize,
        start: usize,
    }

    impl Guard {
        /// Registers `map`, installing the handler on first use; `None` when every slot is
        /// taken or the handler could not be installed.
        pub fn register(map: &[u8]) -> Option<Guard> {
            if map.is_empty() || install().is_none() {
                return None;
            }
            let start = map.as_ptr() as usize;
            for slot in 0..SLOTS {
                if START[slot]
                    .compare_exchange(FREE, CLAIMED, Ordering::AcqRel, Ordering::Relaxed)
                    .is_ok()
                {
                    FAULT[slot].store(NO_FAULT, Ordering::Release);
                    END[slot].store(start + map.len(), Ordering::Release);
                    START[slot].store(start, Ordering::Release);
                    return Some(Guard { slot, start });
                }
            }
            None
        }

        /// The offset in the map of the first page that faulted, if one did.
        pub fn fault(&self) -> Option<u64> {
            match FAULT[self.slot].load(Ordering::Acquire) {
                NO_FAULT => None,
                addr => Some(addr.saturating_sub(self.start) as u64),
            }
        }
    }

    impl Drop for Guard {
        fn drop(&mut self) {
            START[self.slot].store(CLAIMED, Ordering::Release);
            END[self.slot].store(0, Ordering::Release);
            START[self.slot].store(FREE, Ordering::Release);
        }
    }

    fn install() -> Option<()> {
        PREVIOUS
            .get_or_init(|| {
                // SAFETY: sysconf, sigaction with a zeroed (valid) struct and our handler.
                unsafe {
                    let page = libc::sysconf(libc::_SC_PAGESIZE);
                    if page > 0 {
                        PAGE.store(page as usize, Ordering::Relaxed);
                    }
                    let mut old: libc::sigaction = std::mem::zeroed();
                    let mut new: libc::sigaction = std::mem::zeroed();
                    new.sa_sigaction = on_sigbus as *const () as usize;
                    new.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK;
                    libc::sigemptyset(&mut new.sa_mask);
                    // The previous action is read by the handler: fetch it first.
                    if libc::sigaction(libc::SIGBUS, std::ptr::null(), &mut old) != 0 {
                        return None;
                    }
                    let previous = Previous(old);
                    if libc::sigaction(libc::SIGBUS, &new, std::ptr::null_mut()) != 0 {
                        return None;
                    }
                    Some(previous)
                }
            })
            .as_ref()
            .map(|_| ())
    }

    extern "C" fn on_sigbus(
        _sig: libc::c_int,
        info: *mut libc::siginfo_t,
        _ctx: *mut libc::c_void,
    ) {
        // Only atomics and system calls below: this runs inside a signal handler.
        // SAFETY: the kernel passes a valid siginfo_t for an SA_SIGINFO handler.
        let addr = unsafe { (*info).si_addr() } as usize;
        let page = PAGE.load(Ordering::Relaxed);
        for slot in 0..SLOTS {
            let start = START[slot].load(Ordering::Acquire);
            if start <= CLAIMED || addr < start || addr >= END[slot].load(Ordering::Acquire) {
                continue;
            }
            let from = addr & !(page - 1);
            let end = END[slot].load(Ordering::Acquire);
            let len = (end - from).next_multiple_of(page);
            // SAFETY: [from, from + len) lies within this registered, live map (the map
            // cannot be unmapped while a thread faults reading it): replacing its pages
            // with anonymous zero pages changes what the remaining reads see, nothing else.
            let p = unsafe {
                libc::mmap(
                    from as *mut libc::c_void,
                    len,
                    libc::PROT_READ,
                    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED,
                    -1,
                    0,
                )
            };
            if p != libc::MAP_FAILED {
                FAULT[slot].fetch_min(from, Ordering::AcqRel);
                return;
            }
        }
        // Not a guarded map: the previous action handles the repeated fault.
        if let Some(Some(Previous(old))) = PREVIOUS.get() {
            // SAFETY: restoring an action the kernel gave us.
            unsafe { libc::sigaction(libc::SIGBUS, old, std::ptr::null_mut()) };
        }
    }
}

/// Without a guard, maps are used as they are (a truncated file can raise SIGBUS).
#[cfg(not(target_os = "linux"))]
mod truncation {
    pub const GUARDED: bool = false;
    pub struct Guard;
    impl Guard {
        pub fn register(_: &[u8]) -> Option<Guard> {
            None
        }
        pub fn fault(&self) -> Option<u64> {
            None
        }
    }
}

/// Block size the decompression thread hands over.
const DECODE_BLOCK: usize = 1 << 20;

/// Runs a decoder on its own thread, so decompression and scanning overlap.
fn decode_on_thread(mut decoder: Box<dyn Read + Send>) -> Box<dyn Read + Send> {
    let (tx, rx) = sync_channel::<io::Result<Vec<u8>>>(4);
    // Consumed blocks come back for reuse: no fresh (page-faulting) allocation per block.
    let (back, returned) = sync_channel::<Vec<u8>>(8);
    std::thread::spawn(move || loop {
        let mut block = returned.try_recv().unwrap_or_default();
        block.resize(DECODE_BLOCK, 0);
        let mut n = 0;
        let mut failed = None;
        while n < block.len() {
            match decoder.read(&mut block[n..]) {
                Ok(0) => break,
                Ok(k) => n += k,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    failed = Some(e);
                    break;
                }
            }
        }
        block.truncate(n);
        let done = n == 0 || failed.is_some();
        if n > 0 && tx.send(Ok(block)).is_err() {
            return;
        }
        if let Some(e) = failed {
            let _ = tx.send(Err(e));
            return;
        }
        if done {
            return;
        }
    });
    Box::new(Pipe {
        rx,
        back,
        current: Vec::new(),
        pos: 0,
    })
}

struct Pipe {
    rx: Receiver<io::Result<Vec<u8>>>,
    back: SyncSender<Vec<u8>>,
    current: Vec<u8>,
    pos: usize,
}

impl Read for Pipe {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        while self.pos == self.current.len() {
            match self.rx.recv() {
                Ok(Ok(block)) => {
                    let used = std::mem::replace(&mut self.current, block);
                    // A full return channel or a finished decoder just drops the block.
                    let _ = self.back.try_send(used);
                    self.pos = 0;
                }
                Ok(Err(e)) => return Err(e),
                Err(_) => return Ok(0),
            }
        }
        let n = out.len().min(self.current.len() - self.pos);
        out[..n].copy_from_slice(&self.current[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::EmbeddedDatabase;
    use faultline_db::{LogGen, SynthOptions};

    /// A mapped file scanned on several threads gives its pages back chunk by chunk; the
    /// hits are those of the same bytes scanned from memory on one thread.
    #[test]
    fn a_mapped_file_scans_like_its_bytes_while_pages_are_released() {
        let mut log = Vec::new();
        LogGen::new(SynthOptions {
            seed: 3,
            non_ascii: 0.05,
            failures: vec![
                "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB".into(),
            ],
            failure_rate: 1e-3,
            ..SynthOptions::default()
        })
        .fill(&mut log, 3 << 20);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.log");
        std::fs::write(&path, &log).unwrap();
        let db = Database::embedded();
        let scan = |input: Input, opts: &ScanOptions| {
            let mut hits = Vec::new();
            let (stats, err) = input.scan(db, opts, &mut |h| hits.push(h));
            assert!(err.is_none());
            (hits, stats)
        };
        let one = ScanOptions {
            threads: 1,
            ..ScanOptions::default()
        };
        let expected = scan(Input::from_bytes(&path, log.clone()), &one);
        assert!(expected.0.len() > 100);
        let many = ScanOptions {
            threads: 3,
            min_chunk: 10_000,
            ..ScanOptions::default()
        };
        for _ in 0..2 {
            let input = open(&path).unwrap();
            assert!(matches!(input.source, Source::Mapped(..)));
            assert_eq!(scan(input, &many), expected);
        }
        // The pages dropped from the maps are still the file's bytes.
        assert_eq!(std::fs::read(&path).unwrap(), log);
    }

    fn scan_bytes(bytes: Vec<u8>) -> (Vec<Hit>, ScanStats, Option<String>) {
        let input = Input::from_reader(Path::new("x"), Box::new(Cursor::new(bytes))).unwrap();
        let mut hits = Vec::new();
        let (stats, err) = input.scan(Database::embedded(), &ScanOptions::default(), &mut |h| {
            hits.push(h)
        });
        (hits, stats, err.map(|e| e.to_string()))
    }

    const OOM: &str = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 3 has a total capacity of 79.19 GiB of which 1.01 GiB is free.";

    /// A log written as UTF-16 (with its byte order mark) is decoded, not taken for binary.
    #[test]
    fn utf16_logs_are_decoded() {
        let text = format!("INFO starting ünïcode 𝄞\n{OOM}\r\nINFO done\n");
        let units: Vec<u16> = std::iter::once(0xfeff).chain(text.encode_utf16()).collect();
        for big in [false, true] {
            let bytes: Vec<u8> = units
                .iter()
                .flat_map(|u| {
                    if big {
                        u.to_be_bytes()
                    } else {
                        u.to_le_bytes()
                    }
                })
                .collect();
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("w.log");
            std::fs::write(&path, &bytes).unwrap();
            let input = open(&path).unwrap();
            let want = if big {
                InputKind::Utf16Be
            } else {
                InputKind::Utf16Le
            };
            assert_eq!(input.kind(), want);
            let (hits, stats, err) = scan_bytes(bytes);
            assert_eq!(err, None);
            assert_eq!((stats.lines, stats.binary), (3, false));
            assert_eq!(stats.bytes, text.len() as u64);
            let oom: Vec<&Hit> = hits.iter().filter(|h| h.line == 2).collect();
            assert_eq!(oom.len(), 1, "big endian {big}");
            assert_eq!(oom[0].text, OOM.as_bytes());
        }
        // A lone surrogate and a final odd byte are U+FFFD, never an error.
        let (_, stats, err) = scan_bytes(vec![0xff, 0xfe, 0x00, 0xd8, b'a', 0, b'b']);
        assert_eq!(err, None);
        assert_eq!(stats.bytes, "\u{fffd}a\u{fffd}".len() as u64);
    }

    /// Zero bytes after the last gzip member are padding (`gzip -t` accepts them); other
    /// bytes after a member are still an error; members one after another all count.
    #[test]
    fn gzip_zero_padding_is_accepted_and_garbage_is_not() {
        use std::io::Write;
        let gz = |text: &str| {
            let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            e.write_all(text.as_bytes()).unwrap();
            e.finish().unwrap()
        };
        let mut two = gz("INFO one\n");
        two.extend(gz(&format!("{OOM}\n")));
        let mut padded = two.clone();
        padded.extend(std::iter::repeat_n(0u8, 100_000));
        let (hits, stats, err) = scan_bytes(padded);
        assert_eq!(err, None);
        assert_eq!((stats.lines, hits.len()), (2, 1));
        assert_eq!(hits[0].line, 2);
        let mut garbage = two.clone();
        garbage.extend_from_slice(&[0, 0, b'x']);
        let (hits, _, err) = scan_bytes(garbage);
        assert_eq!(hits.len(), 1);
        let err = err.expect("garbage after the last member is an error");
        assert!(
            err.contains("gzip stream: bytes other than zero padding"),
            "{err}"
        );
        let mut cut = two;
        cut.truncate(cut.len() - 3);
        let (_, _, err) = scan_bytes(cut);
        assert!(err.expect("a cut member").contains("gzip stream"));
    }

    /// A file truncated after it was mapped (logrotate's copytruncate) does not kill the
    /// process with SIGBUS: the scan reports the hits before the cut and an error naming the
    /// file and the offset where it now ends; the next input scans as usual.
    #[test]
    fn a_file_truncated_while_mapped_is_an_error_at_its_new_end() {
        let line = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n";
        let mut log = Vec::new();
        let mut gen = LogGen::new(SynthOptions {
            seed: 5,
            ..SynthOptions::default()
        });
        let mut at = Vec::new();
        for _ in 0..8 {
            let want = log.len() + (1 << 20);
            gen.fill(&mut log, want);
            at.push(log.len() as u64);
            log.extend_from_slice(line.as_bytes());
        }
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("live.log");
        let db = Database::embedded();
        let cut = (3 << 20) + 12_345;
        for threads in [1, 3] {
            std::fs::write(&path, &log).unwrap();
            let input = open(&path).unwrap();
            assert!(matches!(input.source, Source::Mapped(..)));
            // The writer's log is cut under the map, and grows again.
            let f = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
            f.set_len(cut).unwrap();
            let opts = ScanOptions {
                threads,
                min_chunk: 100_000,
                ..ScanOptions::default()
            };
            let mut hits = Vec::new();
            let (stats, err) = input.scan(db, &opts, &mut |h| hits.push(h.offset));
            let err = err.expect("an error for the truncated file").to_string();
            assert!(
                err.starts_with(&format!("{}: at byte offset {cut}: ", path.display())),
                "{err}"
            );
            assert!(err.contains("truncated"), "{err}");
            assert_eq!(stats.bytes, cut);
            // What the map showed past the new end (zero pages) is not the input's: no NUL
            // byte, no line of zeros; the lines are those of the file's first `cut` bytes,
            // and the tail ends at the cut.
            let kept = &log[..cut as usize];
            assert!(!stats.binary, "threads {threads}");
            let lines = memchr::memchr_iter(b'\n', kept).count() as u64
                + u64::from(kept.last() != Some(&b'\n'));
            assert_eq!(stats.lines, lines, "threads {threads}");
            assert!(kept.ends_with(&stats.tail) && !stats.tail.is_empty());
            assert!(hits.iter().all(|&o| o < cut), "threads {threads}");
            let before: Vec<u64> = at.iter().copied().filter(|&o| o < cut).collect();
            assert_eq!(before.len(), 3);
            assert!(before.iter().all(|o| hits.contains(o)), "threads {threads}");
            // Another input, mapped after the fault, scans whole.
            std::fs::write(&path, &log).unwrap();
            let mut all = Vec::new();
            let (stats, err) = open(&path)
                .unwrap()
                .scan(db, &opts, &mut |h| all.push(h.offset));
            assert!(err.is_none());
            assert_eq!(stats.bytes, log.len() as u64);
            assert!(at.iter().all(|o| all.contains(o)));
        }
    }
}
