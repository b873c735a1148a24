//! The `faultline` command line: scan logs, check and inspect signature databases.

use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Args, CommandFactory, FromArgMatches, Parser, Subcommand, ValueEnum};
use rayon::prelude::*;

use faultline::analyze::{AnalyzeOptions, Analyzer};
use faultline::report::{render_human, Report};
use faultline::scan::{self, ScanOptions};
use faultline::signature::{load_dir, SignatureSet};
use faultline::{Database, Error};

/// Exit status: at least one input diagnosed.
const EXIT_DIAGNOSED: u8 = 0;
/// Exit status: every input scanned clean.
const EXIT_CLEAN: u8 = 1;
/// Exit status: an error happened (bad signatures, unreadable or corrupt input).
const EXIT_ERROR: u8 = 2;

#[derive(Parser)]
#[command(
    name = "faultline",
    about = "Names the root cause of a failure in ML-serving and GPU logs."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Scan logs (files, directories, .gz, .zst; none or `-` reads stdin) and name the root cause.
    Scan(ScanArgs),
    /// Check, list and export signature databases.
    #[command(subcommand)]
    Db(DbCommand),
}

#[derive(Clone, Copy, ValueEnum, PartialEq, Eq)]
enum Format {
    Human,
    Json,
}

#[derive(Args, Clone)]
struct SetArgs {
    /// Use the signatures in DIR instead of the embedded set.
    #[arg(long, value_name = "DIR")]
    signatures: Option<PathBuf>,
    /// Add the signatures in DIR to the set (repeatable).
    #[arg(long = "add-signatures", value_name = "DIR")]
    add_signatures: Vec<PathBuf>,
    /// Switch off the signature with this id (repeatable).
    #[arg(long, value_name = "ID")]
    disable: Vec<String>,
}

#[derive(Args)]
struct ScanArgs {
    /// Inputs: files, directories (recursive), `-` for stdin.
    paths: Vec<PathBuf>,
    #[arg(long, value_enum, default_value = "human")]
    format: Format,
    /// List every matched line, its role and why it ranks where it does.
    #[arg(long)]
    all: bool,
    #[command(flatten)]
    set: SetArgs,
    /// Worker threads (default: all cores).
    #[arg(long, short = 'j', value_name = "N")]
    threads: Option<usize>,
    /// Longest line a stream keeps whole; longer lines are scanned in windows and cut.
    #[arg(long, value_name = "BYTES", default_value_t = 64 << 20)]
    max_line_bytes: usize,
}

#[derive(Subcommand)]
enum DbCommand {
    /// Validate a signature directory: run every example and counterexample.
    Check {
        /// The directory (default: the embedded set).
        dir: Option<PathBuf>,
    },
    /// List the signatures.
    List {
        #[arg(long, value_enum, default_value = "human")]
        format: Format,
        #[command(flatten)]
        set: SetArgs,
    },
    /// Export the database in another tool's terms.
    Export {
        #[arg(long, value_enum, default_value = "patterns")]
        format: ExportFormat,
        #[command(flatten)]
        set: SetArgs,
    },
}

#[derive(Clone, Copy, ValueEnum)]
enum ExportFormat {
    /// One regex per line (for grep -E -f, rg -f, Hyperscan).
    Patterns,
}

/// Writes to stdout; a closed stdout (`| head`) ends the run quietly.
fn out(text: &str) {
    let mut stdout = io::stdout().lock();
    if let Err(e) = stdout
        .write_all(text.as_bytes())
        .and_then(|_| stdout.flush())
    {
        if e.kind() == io::ErrorKind::BrokenPipe {
            std::process::exit(0);
        }
        eprintln!("faultline: writing output: {e}");
        std::process::exit(i32::from(EXIT_ERROR));
    }
}

fn error_line(e: &Error) {
    eprintln!("faultline: {e}");
    if let Error::Signatures { problems } | Error::Corpus { problems } = e {
        for p in problems.iter().skip(1) {
            eprintln!("faultline: {p}");
        }
    }
}

fn load_set(args: &SetArgs) -> Result<SignatureSet, Error> {
    let mut set = match &args.signatures {
        Some(dir) => load_dir(dir)?,
        None => faultline::compile::embedded_set()?,
    };
    for dir in &args.add_signatures {
        set.extend(load_dir(dir)?)?;
    }
    set.disable(&args.disable)?;
    Ok(set)
}

fn database(args: &SetArgs) -> Result<&'static Database, Error> {
    if args.signatures.is_none() && args.add_signatures.is_empty() && args.disable.is_empty() {
        return Ok(Database::embedded());
    }
    let set = load_set(args)?;
    Ok(Box::leak(Box::new(Database::compile(&set)?)))
}

/// Expands directories into the files below them (sorted, symlinked directories not followed).
fn expand(paths: &[PathBuf]) -> Vec<Result<PathBuf, Error>> {
    let mut out = Vec::new();
    for p in paths {
        if p != Path::new("-") && p.is_dir() {
            let mut files = Vec::new();
            for entry in walkdir::WalkDir::new(p)
                .follow_links(false)
                .sort_by_file_name()
            {
                match entry {
                    Ok(e) => {
                        let ft = e.file_type();
                        let is_file = ft.is_file()
                            || (ft.is_symlink() && e.path().metadata().is_ok_and(|m| m.is_file()));
                        if is_file {
                            files.push(Ok(e.into_path()));
                        }
                    }
                    Err(err) => {
                        let path = err
                            .path()
                            .map(Path::to_path_buf)
                            .unwrap_or_else(|| p.clone());
                        let source = err
                            .into_io_error()
                            .unwrap_or_else(|| io::Error::other("walk error"));
                        files.push(Err(Error::Io { path, source }));
                    }
                }
            }
            out.extend(files);
        } else {
            out.push(Ok(p.clone()));
        }
    }
    out
}

fn scan_one(db: &Database, path: &Path, opts: &ScanOptions, all: bool) -> (Report, bool) {
    let name = path.display().to_string();
    let mut analyzer = Analyzer::new(db, AnalyzeOptions { all });
    match scan::open(path) {
        Ok(input) => {
            let (stats, err) = input.scan(db, opts, &mut |hit| analyzer.push(&hit));
            let failed = err.is_some();
            (
                analyzer.finish(&name, &stats, err.map(|e| e.to_string())),
                failed,
            )
        }
        Err(e) => (
            analyzer.finish(&name, &Default::default(), Some(e.to_string())),
            true,
        ),
    }
}

fn run_scan(args: ScanArgs) -> u8 {
    let db = match database(&args.set) {
        Ok(db) => db,
        Err(e) => {
            error_line(&e);
            return EXIT_ERROR;
        }
    };
    let opts = ScanOptions {
        threads: args.threads.unwrap_or_else(rayon::current_num_threads),
        max_line_bytes: args.max_line_bytes,
        ..ScanOptions::default()
    };
    let paths = if args.paths.is_empty() {
        vec![PathBuf::from("-")]
    } else {
        args.paths.clone()
    };
    let inputs = expand(&paths);
    let results: Vec<(Report, bool)> = inputs
        .par_iter()
        .map(|input| match input {
            Ok(path) => scan_one(db, path, &opts, args.all),
            Err(e) => {
                let name = match e {
                    Error::Io { path, .. } => path.display().to_string(),
                    other => other.to_string(),
                };
                let r = Analyzer::new(db, AnalyzeOptions::default()).finish(
                    &name,
                    &Default::default(),
                    Some(e.to_string()),
                );
                (r, true)
            }
        })
        .collect();
    let mut status = EXIT_CLEAN;
    let mut errored = false;
    for (report, failed) in &results {
        if *failed {
            errored = true;
            if let Some(e) = &report.error {
                eprintln!("faultline: {e}");
            }
        }
        if report.diagnosed() {
            status = EXIT_DIAGNOSED;
        }
        match args.format {
            Format::Json => out(&(report.to_json_line() + "\n")),
            Format::Human => {
                if *failed && report.findings.is_empty() && report.bytes == 0 {
                    continue;
                }
                let mut text = render_human(report, args.all);
                if results.len() > 1 {
                    text.push('\n');
                }
                out(&text);
            }
        }
    }
    if errored {
        EXIT_ERROR
    } else {
        status
    }
}

fn run_db(cmd: DbCommand) -> u8 {
    match cmd {
        DbCommand::Check { dir } => {
            let set = match &dir {
                Some(d) => load_dir(d),
                None => faultline::compile::embedded_set(),
            };
            match set.and_then(|s| Database::compile(&s).map(|db| (s, db))) {
                Ok((set, db)) => {
                    let examples: usize = set.signatures.iter().map(|s| s.examples.len()).sum();
                    let counter: usize =
                        set.signatures.iter().map(|s| s.counterexamples.len()).sum();
                    let (anchors, packed) = db.anchors();
                    out(&format!(
                        "{} {}: {} signatures, {} patterns, {} examples and {} counterexamples checked; prefilter: {} anchors ({})\n",
                        db.name(),
                        db.version(),
                        db.signatures().len(),
                        db.pattern_sources().len(),
                        examples,
                        counter,
                        anchors.len(),
                        if packed { "SIMD packed searcher" } else { "general automaton" },
                    ));
                    EXIT_DIAGNOSED
                }
                Err(e) => {
                    error_line(&e);
                    EXIT_ERROR
                }
            }
        }
        DbCommand::List { format, set } => match database(&set) {
            Ok(db) => {
                let mut text = String::new();
                for s in db.signatures() {
                    match format {
                        Format::Json => {
                            let v = serde_json::json!({
                                "id": s.id, "revision": s.revision, "role": s.role.as_str(),
                                "severity": s.severity.as_str(), "category": s.category,
                                "tags": s.tags, "title": s.title, "priority": s.priority,
                                "source": s.source,
                            });
                            text.push_str(&v.to_string());
                        }
                        Format::Human => text.push_str(&format!(
                            "{:<48} r{:<2} {:<8} {:<8} {:<24} {}",
                            s.id,
                            s.revision,
                            s.role.as_str(),
                            s.severity.as_str(),
                            s.category,
                            s.title
                        )),
                    }
                    text.push('\n');
                }
                out(&text);
                EXIT_DIAGNOSED
            }
            Err(e) => {
                error_line(&e);
                EXIT_ERROR
            }
        },
        DbCommand::Export {
            format: ExportFormat::Patterns,
            set,
        } => match database(&set) {
            Ok(db) => {
                let mut text = String::new();
                for p in db.pattern_sources() {
                    text.push_str(p);
                    text.push('\n');
                }
                out(&text);
                EXIT_DIAGNOSED
            }
            Err(e) => {
                error_line(&e);
                EXIT_ERROR
            }
        },
    }
}

fn main() -> ExitCode {
    let version = format!(
        "{} (database {} {}, hash {})",
        env!("CARGO_PKG_VERSION"),
        Database::embedded().name(),
        Database::embedded().version(),
        Database::embedded().hash()
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
        Command::Scan(args) => run_scan(args),
        Command::Db(cmd) => run_db(cmd),
    })
}
