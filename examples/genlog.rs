//! Writes a deterministic, realistic vLLM v1 serving log to stdout, for benchmarks.
//!
//! `cargo run --release --example genlog -- --bytes 2G --seed 1 [--non-ascii [FRACTION]] [--ascii-twin] > x.log`
//!
//! `--ascii-twin` writes the same log with each run of non-ASCII bytes replaced by as many
//! bytes of ordinary ASCII words: same lines, same lengths, nothing but the bytes differ.
//!
//! Rare failure lines are the embedded signatures' examples.

use std::io::Write;
use std::process::ExitCode;

use faultline::{LogGen, SynthOptions};

fn parse_size(s: &str) -> Option<u64> {
    let (num, mul) = match s.as_bytes().last()? {
        b'K' | b'k' => (&s[..s.len() - 1], 1u64 << 10),
        b'M' | b'm' => (&s[..s.len() - 1], 1 << 20),
        b'G' | b'g' => (&s[..s.len() - 1], 1 << 30),
        _ => (s, 1),
    };
    num.parse::<u64>().ok().map(|n| n * mul)
}

fn main() -> ExitCode {
    let mut bytes = 64u64 << 20;
    let mut opts = SynthOptions::default();
    let mut args = std::env::args().skip(1).peekable();
    while let Some(a) = args.next() {
        match a.as_str() {
            "--bytes" => match args.next().as_deref().and_then(parse_size) {
                Some(n) => bytes = n,
                None => return usage("--bytes needs a size like 64M or 2G"),
            },
            "--seed" => match args.next().and_then(|s| s.parse().ok()) {
                Some(n) => opts.seed = n,
                None => return usage("--seed needs an integer"),
            },
            "--non-ascii" => {
                opts.non_ascii = match args.peek().and_then(|s| s.parse::<f64>().ok()) {
                    Some(f) => {
                        args.next();
                        f
                    }
                    None => 0.05,
                }
            }
            "--ascii-twin" => opts.ascii_twin = true,
            _ => return usage(&format!("unknown argument {a:?}")),
        }
    }
    opts.failures = match faultline::embedded_signature_set() {
        Ok(set) => set
            .signatures
            .iter()
            .flat_map(|s| s.examples.iter().map(|e| e.value.trim_end().to_string()))
            .collect(),
        Err(e) => {
            eprintln!("genlog: {e}");
            return ExitCode::from(2);
        }
    };
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::with_capacity(1 << 20, stdout.lock());
    match LogGen::new(opts)
        .write_to(&mut out, bytes)
        .and_then(|_| out.flush())
    {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("genlog: {e}");
            ExitCode::from(2)
        }
    }
}

fn usage(msg: &str) -> ExitCode {
    eprintln!("genlog: {msg}\nusage: genlog [--bytes SIZE] [--seed N] [--non-ascii [FRACTION]] [--ascii-twin]");
    ExitCode::from(2)
}
