//! The `faultline` command line: scan logs, check and inspect signature databases. One module
//! per command (`scan`, `summary`, `db`, `bench`, `diff`), with the arguments in `args` and
//! what every command writes in `output`.

use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches};

use faultline::{Database, EmbeddedDatabase};

use crate::args::{Cli, Command};
use crate::output::status;

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

mod args;
mod baseline;
mod bench;
mod db;
mod diff;
mod job;
mod output;
mod scan;
mod summary;

fn main() -> ExitCode {
    let (name, db_version, hash) = Database::embedded_identity();
    let version = format!(
        "{} (database {name} {db_version}, hash {hash})",
        env!("CARGO_PKG_VERSION"),
    );
    let matches = Cli::command()
        .version(&*Box::leak(version.into_boxed_str()))
        .get_matches();
    let cli = match Cli::from_arg_matches(&matches) {
        Ok(c) => c,
        Err(e) => e.exit(),
    };
    if let Some(n) = match &cli.command {
        Command::Scan(a) => a.threads,
        _ => None,
    } {
        let _ = rayon::ThreadPoolBuilder::new()
            .num_threads(n.max(1))
            .build_global();
    }
    ExitCode::from(match cli.command {
        Command::Scan(args) => status(scan::run_scan(args)),
        Command::Db(cmd) => status(db::run_db(cmd)),
        Command::Summary(args) => status(summary::run_summary(args)),
        Command::Bench(args) => status(bench::run_bench(args)),
    })
}
