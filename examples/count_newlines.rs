//! Counts newlines in a memory-mapped file with SIMD (bytecount): the practical single-core
//! throughput limit a log scanner is compared against in BENCHMARKS.md. A gzip file is
//! decompressed (flate2, zlib-rs, the decoder faultline uses) and counted as it streams:
//! that is "decompression alone".
//!
//! `cargo run --release --example count_newlines -- FILE`

use std::process::ExitCode;

fn main() -> ExitCode {
    let Some(path) = std::env::args_os().nth(1) else {
        eprintln!("usage: count_newlines FILE");
        return ExitCode::from(2);
    };
    let file = match std::fs::File::open(&path) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("count_newlines: {}: {e}", path.to_string_lossy());
            return ExitCode::from(2);
        }
    };
    let mut head = [0u8; 2];
    if std::io::Read::read_exact(&mut &file, &mut head).is_ok() && head == [0x1f, 0x8b] {
        return count_gzip(&path);
    }
    // SAFETY: read-only map of a file nobody writes during the measurement.
    let map = match unsafe { memmap2::Mmap::map(&file) } {
        Ok(m) => m,
        Err(e) => {
            eprintln!("count_newlines: {}: {e}", path.to_string_lossy());
            return ExitCode::from(2);
        }
    };
    println!("{}", bytecount::count(&map, b'\n'));
    ExitCode::SUCCESS
}

fn count_gzip(path: &std::ffi::OsStr) -> ExitCode {
    use std::io::Read;
    let file = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("count_newlines: {}: {e}", path.to_string_lossy());
            return ExitCode::from(2);
        }
    };
    let mut decoder = flate2::read::MultiGzDecoder::new(std::io::BufReader::new(file));
    let mut buf = vec![0u8; 4 << 20];
    let mut lines = 0usize;
    loop {
        match decoder.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => lines += bytecount::count(&buf[..n], b'\n'),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => {
                eprintln!("count_newlines: {}: {e}", path.to_string_lossy());
                return ExitCode::from(2);
            }
        }
    }
    println!("{lines}");
    ExitCode::SUCCESS
}
