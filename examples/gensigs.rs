//! Writes N synthetic signatures (one pattern each, made-up words no generated log holds)
//! as a signature directory, for the signature-count scale bench (`benches/scale.sh`).
//!
//! `cargo run --release --example gensigs -- --count 5000 [--seed 1] [--base signatures] --out DIR`
//!
//! `--base DIR` copies that set's `*.toml` files (its `db.toml` included) into the output
//! first, so the output is the base set plus the synthetic signatures. `--check LOG` instead
//! counts the literals of the same set in LOG and fails (exit 1) when any occurs.

use std::path::PathBuf;
use std::process::ExitCode;

use faultline_db::synthetic_set;

fn usage(msg: &str) -> ExitCode {
    eprintln!("gensigs: {msg}");
    eprintln!("usage: gensigs --count N [--seed S] [--base DIR] (--out DIR | --check LOG)");
    ExitCode::from(2)
}

fn main() -> ExitCode {
    let (mut count, mut seed) = (None, 1u64);
    let (mut base, mut out, mut check) = (None::<PathBuf>, None::<PathBuf>, None::<PathBuf>);
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let value = args.next();
        match (a.as_str(), value) {
            ("--count", Some(v)) => match v.parse::<usize>() {
                Ok(n) => count = Some(n),
                Err(_) => return usage("--count needs a number"),
            },
            ("--seed", Some(v)) => match v.parse() {
                Ok(n) => seed = n,
                Err(_) => return usage("--seed needs an integer"),
            },
            ("--base", Some(v)) => base = Some(v.into()),
            ("--out", Some(v)) => out = Some(v.into()),
            ("--check", Some(v)) => check = Some(v.into()),
            _ => return usage(&format!("bad argument {a:?}")),
        }
    }
    let Some(count) = count else {
        return usage("--count is required");
    };
    let set = synthetic_set(count, seed);
    if let Some(log) = check {
        let hay = match std::fs::read(&log) {
            Ok(h) => h,
            Err(e) => return usage(&format!("{}: {e}", log.display())),
        };
        let found: Vec<_> = set
            .literals
            .iter()
            .zip(set.occurrences(&hay))
            .filter(|(_, n)| *n > 0)
            .collect();
        println!(
            "{} literals of {count} synthetic signatures (seed {seed}): {} occur in {} ({} bytes)",
            set.literals.len(),
            found.len(),
            log.display(),
            hay.len()
        );
        for (lit, n) in &found {
            println!("  {lit:?}: {n}");
        }
        return if found.is_empty() {
            ExitCode::SUCCESS
        } else {
            ExitCode::from(1)
        };
    }
    let Some(out) = out else {
        return usage("--out or --check is required");
    };
    if let Some(base) = base {
        let entries = match std::fs::read_dir(&base) {
            Ok(e) => e,
            Err(e) => return usage(&format!("{}: {e}", base.display())),
        };
        if let Err(e) = std::fs::create_dir_all(&out) {
            return usage(&format!("{}: {e}", out.display()));
        }
        for e in entries.flatten() {
            let p = e.path();
            if p.extension().is_some_and(|x| x == "toml") {
                if let Err(err) = std::fs::copy(&p, out.join(e.file_name())) {
                    return usage(&format!("{}: {err}", p.display()));
                }
            }
        }
    }
    if let Err(e) = set.write_dir(&out) {
        return usage(&format!("{}: {e}", out.display()));
    }
    println!(
        "{}: {count} synthetic signatures (seed {seed}) in {} files",
        out.display(),
        set.files.len()
    );
    ExitCode::SUCCESS
}
