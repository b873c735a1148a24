//! Opening inputs: regular files are memory-mapped, `.gz` and `.zst` (detected by their
//! magic bytes) are decompressed on a thread of their own, anything else is streamed.

use std::fs::File;
use std::io::{self, Cursor, Read};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};

use memmap2::Mmap;

use super::{scan_reader, scan_slice, scan_slice_releasing, Hit, ScanOptions, ScanStats};
use crate::compile::Database;
use crate::error::Error;

/// How an input's bytes are encoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InputKind {
    Plain,
    Gzip,
    Zstd,
}

impl InputKind {
    /// Recognises gzip (`1f 8b`) and zstd (`28 b5 2f fd`) by their first bytes.
    pub fn sniff(head: &[u8]) -> InputKind {
        if head.starts_with(&[0x1f, 0x8b]) {
            InputKind::Gzip
        } else if head.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]) {
            InputKind::Zstd
        } else {
            InputKind::Plain
        }
    }
}

enum Source {
    Mapped(Mmap),
    Bytes(Vec<u8>),
    Stream(Box<dyn Read + Send>),
}

/// An opened input, ready to scan.
pub struct Input {
    path: PathBuf,
    kind: InputKind,
    source: Source,
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
            // SAFETY: the map is read-only. A file truncated while mapped can raise SIGBUS,
            // the same trade ripgrep makes for speed on logs that are no longer written.
            if let Ok(map) = unsafe { options.map(&file) } {
                return Ok(Input {
                    path: path.to_path_buf(),
                    kind: InputKind::Plain,
                    source: Source::Mapped(map),
                });
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
            InputKind::Gzip => Source::Stream(decode_on_thread(Box::new(
                flate2::read::MultiGzDecoder::new(raw),
            ))),
            InputKind::Zstd => Source::Stream(decode_on_thread(Box::new(
                zstd::stream::read::Decoder::new(raw)?,
            ))),
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
            Source::Mapped(map) => {
                let release = |chunk: &[u8]| release_pages(&map, chunk);
                let stats = scan_slice_releasing(db, &map, opts, sink, Some(&release));
                (stats, None)
            }
            Source::Bytes(bytes) => (scan_slice(db, &bytes, opts, sink), None),
            Source::Stream(mut reader) => {
                let (stats, err) = scan_reader(db, &mut reader, opts, sink);
                let err = err.map(|source| Error::Input {
                    path: self.path.clone(),
                    offset: stats.bytes,
                    source: match self.kind {
                        InputKind::Plain => source,
                        k => io::Error::new(
                            source.kind(),
                            format!(
                                "{} stream: {source}",
                                if k == InputKind::Gzip { "gzip" } else { "zstd" }
                            ),
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
    use crate::synth::{LogGen, SynthOptions};

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
            assert!(matches!(input.source, Source::Mapped(_)));
            assert_eq!(scan(input, &many), expected);
        }
        // The pages dropped from the maps are still the file's bytes.
        assert_eq!(std::fs::read(&path).unwrap(), log);
    }
}
