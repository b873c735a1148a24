//! Opening inputs: regular files are memory-mapped, `.gz` and `.zst` (detected by their
//! magic bytes) are decompressed on a thread of their own, anything else is streamed.

use std::fs::File;
use std::io::{self, Cursor, Read};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};

use memmap2::Mmap;

use super::{scan_reader, scan_slice, Hit, ScanOptions, ScanStats};
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
            Source::Mapped(map) => (scan_slice(db, &map, opts, sink), None),
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
