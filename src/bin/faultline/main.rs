//! The `faultline` command line: scan logs, check and inspect signature databases.

use std::io::{self, IsTerminal, Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Args, CommandFactory, FromArgMatches, Parser, Subcommand, ValueEnum};
use indicatif::{ProgressBar, ProgressStyle};
use rayon::prelude::*;

use faultline::{analyze_path, failed_input_report, AnalyzeOptions};
use faultline::{
    diff_corpus, diff_sets, profile_corpus_sets, Database, EmbeddedDatabase, Error, SetBench, Usage,
};
use faultline::{load_dir, SignatureSet};
use faultline::{render_human_with_hints, HumanHints, Report};
use faultline::{walk, Entry, Shard, SkipReason, WalkOptions};
use faultline::{Archive, ARCHIVE_FORMAT as FORMAT, MAX_CONFIRM_STATES, MAX_DFA_BYTES};
use faultline::{BenchOptions, Corpus};
use faultline::{ScanOptions, MAX_THREADS};
use faultline::{Summary, SummaryBuilder};

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

mod cli;
mod output;

/// The human report's hints name this binary's flags.
const FLAG_HINTS: HumanHints = HumanHints {
    max_findings: "--max-findings",
    all: "--all",
};

/// Exit status: at least one input diagnosed.
const EXIT_DIAGNOSED: u8 = 0;
/// Exit status: every input scanned clean.
const EXIT_CLEAN: u8 = 1;
/// Exit status: an error happened (bad signatures, unreadable or corrupt input).
const EXIT_ERROR: u8 = 2;

/// The exit-status rule of `scan` and `summary`, shown in `--help`.
const EXIT_STATUS_HELP: &str = "\
Exit status (grep's rule):
  0  at least one input failed: a fatal (not survivable) cause or unclassified finding
  1  every input is clean: noise only, nothing matched, or only survivable failures
  2  an error: bad flags or signatures, an unreadable or corrupt input, no input selected
     (the other inputs are still scanned and reported)";

#[derive(Parser)]
#[command(
    name = "faultline",
    about = "Names the root cause of a failure in ML-serving and GPU logs.",
    after_help = EXIT_STATUS_HELP
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Scan logs (files, directories, .gz, .zst; none or `-` reads stdin) and name the root cause.
    #[command(after_help = EXIT_STATUS_HELP)]
    Scan(ScanArgs),
    /// Check, list, compare and export signature databases.
    #[command(subcommand)]
    Db(DbCommand),
    /// Merge the JSON lines of `scan --format json` runs (e.g. shards) into one summary.
    #[command(after_help = EXIT_STATUS_HELP)]
    Summary(SummaryArgs),
    /// Measure a signature set over a corpus: throughput, per-signature cost, accuracy.
    #[command(after_help = "\
Exit status: 0 measured; 2 an error (a set that does not load or compile, an unreadable log:
named on stderr and left out of every number).")]
    Bench(BenchArgs),
}

/// The output formats of `scan` and `summary`.
#[derive(Clone, Copy, ValueEnum, PartialEq, Eq)]
enum Format {
    /// Text for people.
    Human,
    /// JSON (for `scan`: one object per input, one per line).
    Json,
    /// One CSV table (summaries only: `scan --summary`, `summary`).
    Csv,
}

/// The output formats of `bench`, `db list` and `db diff`.
#[derive(Clone, Copy, ValueEnum, PartialEq, Eq)]
enum TextOrJson {
    /// Text for people.
    Human,
    /// One JSON object (`db list`: one per signature, one per line).
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
    /// Use the compiled database archive FILE (from `faultline db compile`).
    #[arg(long, value_name = "FILE", conflicts_with_all = ["signatures", "add_signatures", "disable"])]
    db: Option<PathBuf>,
}

#[derive(Args)]
struct ScanArgs {
    /// Inputs: files, directories (recursive), `-` for stdin.
    paths: Vec<PathBuf>,
    /// Output format (csv needs --summary).
    #[arg(long, value_enum, default_value = "human")]
    format: Format,
    /// List every matched line, its role and why it ranks where it does.
    #[arg(long)]
    all: bool,
    #[command(flatten)]
    set: SetArgs,
    /// Worker threads, 1..=1024 (default: all cores).
    #[arg(long, short = 'j', value_name = "N", value_parser = parse_threads)]
    threads: Option<usize>,
    /// Longest line a stream keeps whole, and a finding's text; longer lines are scanned in
    /// windows and cut. A size: 65536, 64K, 64M, 2G (or KiB, MiB, GiB: powers of 1024); at
    /// least 4 KiB.
    #[arg(long, value_name = "SIZE", default_value = "64MiB", value_parser = cli::parse_line_bytes)]
    max_line_bytes: usize,
    /// Most findings per report (0: no limit); past it the lowest-ranked are left out and
    /// counted in `findings_omitted`, never a fatal cause for a lower finding.
    #[arg(long, value_name = "N", default_value_t = faultline::DEFAULT_MAX_FINDINGS)]
    max_findings: usize,
    /// In directories, scan only files matching GLOB (repeatable; without `/` it matches the
    /// file name, with `/` the path below the directory).
    #[arg(long, value_name = "GLOB")]
    glob: Vec<String>,
    /// In directories, skip files and directories matching GLOB (repeatable).
    #[arg(long, value_name = "GLOB")]
    exclude: Vec<String>,
    /// Follow symlinked directories (loops are detected and skipped).
    #[arg(long, short = 'L')]
    follow: bool,
    /// Scan only shard I of N: inputs whose relative path hashes (xxh3-64) to I-1 mod N.
    #[arg(long, value_name = "I/N")]
    shard: Option<String>,
    /// Print one summary table of the sweep instead of a report per input.
    #[arg(long)]
    summary: bool,
}

#[derive(Args)]
struct SummaryArgs {
    /// JSON-lines files written by `scan --format json` (`-` reads stdin).
    #[arg(required = true)]
    files: Vec<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value = "human")]
    format: Format,
    /// Merge reports made with different signature databases (an error otherwise: their
    /// diagnoses are not comparable).
    #[arg(long)]
    allow_mixed_databases: bool,
}

#[derive(Args)]
struct BenchArgs {
    /// A directory of logs, with `NAME.expect.toml` sidecars where answers are known.
    #[arg(long, value_name = "DIR")]
    corpus: PathBuf,
    #[command(flatten)]
    set: SetArgs,
    /// A second signature set to run on the same corpus, shown side by side: a signature
    /// directory or a compiled archive (`faultline db compile`).
    #[arg(long, value_name = "DIR|FILE")]
    against: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value = "human")]
    format: TextOrJson,
    /// Show every per-signature row, also those with no candidate line on this corpus.
    #[arg(long)]
    all_rows: bool,
    /// Repeat the timed pass over the corpus for at least this many seconds.
    #[arg(long, value_name = "SECONDS", default_value_t = 1.0)]
    min_time: f64,
}

#[derive(Subcommand)]
enum DbCommand {
    /// Validate a signature directory: run every example and counterexample, through the
    /// compiled regexes and through the archive `db compile` would write.
    Check {
        /// The directory (default: the embedded set).
        dir: Option<PathBuf>,
        /// The precision lint: fail when a cause or symptom signature with `survivable =
        /// false` (and no `healthy_ok`) matches any line of this corpus's healthy logs
        /// (`expect = "clean"`).
        #[arg(long, value_name = "CORPUS")]
        corpus: Option<PathBuf>,
    },
    /// Compile a signature directory into a database archive for `scan --db FILE`.
    Compile {
        /// The directory (default: the embedded set).
        dir: Option<PathBuf>,
        /// The archive file to write (replaced through a fresh temporary file and a rename;
        /// `-` writes the archive to standard output).
        #[arg(short = 'o', long = "output", value_name = "FILE")]
        output: PathBuf,
    },
    /// List the signatures.
    List {
        /// Output format.
        #[arg(long, value_enum, default_value = "human")]
        format: TextOrJson,
        #[command(flatten)]
        set: SetArgs,
    },
    /// Compare two signature directories: added, removed and changed ids; with --corpus,
    /// the inputs whose first finding changes.
    #[command(after_help = "\
Exit status: 0 the sets were compared (whatever differs); 2 an error (a set that does not load
or compile, an unreadable log).")]
    Diff {
        /// The old signature directory (e.g. the released set).
        old: PathBuf,
        /// The new signature directory, compared against OLD.
        new: PathBuf,
        /// Run every log of DIR under both sets and list the first findings that differ.
        #[arg(long, value_name = "DIR")]
        corpus: Option<PathBuf>,
        /// Output format.
        #[arg(long, value_enum, default_value = "human")]
        format: TextOrJson,
    },
    /// Export the database in another tool's terms.
    Export {
        /// What to export.
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
    /// One regex per line with capture group names dropped (rg -f joins the lines into one
    /// regex, where a name used twice is an error); the matching is unchanged.
    PatternsUnnamed,
}

/// `-j N`: a thread count in `1..=MAX_THREADS`; anything else is a usage error naming the range.
fn parse_threads(s: &str) -> Result<usize, String> {
    let range = format!("-j takes 1..={MAX_THREADS}");
    match s.trim().parse::<usize>() {
        Ok(n) if (1..=MAX_THREADS).contains(&n) => Ok(n),
        Ok(n) => Err(format!("{n} threads is out of range: {range}")),
        Err(_) => Err(format!("not a thread count: {range}")),
    }
}

/// Standard output was closed by its reader (`| head`).
struct Closed;

/// Writes to stdout; `Err(Closed)` when the reader has gone. Any other write error is
/// reported and ends the run with status 2.
fn try_out(text: &str) -> Result<(), Closed> {
    try_write(&mut |w| w.write_all(text.as_bytes()))
}

/// [`try_out`] for output that `write` produces piece by piece, through a buffer.
fn try_write(write: &mut dyn FnMut(&mut dyn Write) -> io::Result<()>) -> Result<(), Closed> {
    let mut stdout = io::BufWriter::with_capacity(64 << 10, io::stdout().lock());
    if let Err(e) = write(&mut stdout).and_then(|_| stdout.flush()) {
        if e.kind() == io::ErrorKind::BrokenPipe {
            return Err(Closed);
        }
        note(&format!("faultline: writing output: {e}"));
        std::process::exit(i32::from(EXIT_ERROR));
    }
    Ok(())
}

/// Writes to stdout; a closed stdout (`| head`) ends the run quietly with status 0.
fn out(text: &str) {
    if try_out(text).is_err() {
        std::process::exit(0);
    }
}

/// [`out`] for a human-readable table or account whose cells come from outside (titles,
/// paths, literals, log lines): every character a terminal would obey is shown escaped.
fn out_human(text: &str) {
    out(&faultline::terminal_safe_lines(text));
}

/// Writes one line to stderr, every character a terminal would obey shown escaped (paths and
/// messages carry bytes from outside: a newline cannot start a line of its own). A closed or
/// failing stderr (`2>&1 | head -1`) is ignored: the run goes on and its exit status is
/// unchanged.
fn note(line: &str) {
    let line = faultline::terminal_safe(line);
    let mut stderr = io::stderr().lock();
    let _ = stderr
        .write_all(line.as_bytes())
        .and_then(|_| stderr.write_all(b"\n"));
}

fn error_line(e: &Error) {
    note(&format!("faultline: {e}"));
    if let Error::Signatures { problems } | Error::Corpus { problems } = e {
        for p in problems.iter().skip(1) {
            note(&format!("faultline: {p}"));
        }
    }
}

/// The exit status of a command, printing its error.
fn status(result: Result<u8, Error>) -> u8 {
    result.unwrap_or_else(|e| {
        error_line(&e);
        EXIT_ERROR
    })
}

fn load_set(args: &SetArgs) -> Result<SignatureSet, Error> {
    let mut set = set_or_embedded(args.signatures.as_deref())?;
    for dir in &args.add_signatures {
        set.extend(load_dir(dir)?)?;
    }
    set.disable(&args.disable)
        .map_err(|e| Error::Usage(Usage::Caller(format!("--disable {e}"))))?;
    Ok(set)
}

fn database(args: &SetArgs) -> Result<&'static Database, Error> {
    if let Some(file) = &args.db {
        let db = Box::leak(Box::new(Database::open(file)?));
        warn_skipped(db);
        return Ok(db);
    }
    if args.signatures.is_none() && args.add_signatures.is_empty() && args.disable.is_empty() {
        return Ok(Database::embedded());
    }
    let set = load_set(args)?;
    let db = Box::leak(Box::new(Database::compile(&set)?));
    warn_skipped(db);
    Ok(db)
}

/// Warns of each pattern the database skips because confirming it would cost more than the
/// confirmation budget allows, naming its signature (issue 30).
fn warn_skipped(db: &Database) {
    for (sig, source, states) in db.skipped_patterns() {
        let shown: String = source.chars().take(80).collect();
        let more = if shown.len() < source.len() {
            "…"
        } else {
            ""
        };
        note(&format!(
            "faultline: warning: signature {}: pattern {shown}{more} is skipped: confirming it would exceed the budget ({states} NFA states, at most {MAX_CONFIRM_STATES}; counted repetitions such as (?:a{{99}}){{999}} multiply them)",
            db.signature(sig).id
        ));
    }
}

/// `--max-findings` values above this mean the same (no practical limit) and are clamped to
/// it, so that the analysis's `max + 16` and `2 * max` cannot overflow (issue 30 item 8).
const MAX_FINDINGS_CAP: usize = usize::MAX >> 2;

/// Inputs analysed per batch: enough to keep every core busy, few enough that reports
/// stream out in input order without holding a whole sweep in memory.
const BATCH: usize = 256;

/// A progress bar on stderr when it is a terminal (files, bytes, rate, ETA); hidden otherwise.
fn progress(entries: &[Entry]) -> ProgressBar {
    if !io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let total: u64 = entries.iter().map(size_on_disk).sum();
    let pb = ProgressBar::new(total);
    if let Ok(style) = ProgressStyle::with_template(
        "{msg} files [{wide_bar}] {binary_bytes}/{binary_total_bytes} {binary_bytes_per_sec} ETA {eta}",
    ) {
        pb.set_style(style);
    }
    pb
}

fn size_on_disk(e: &Entry) -> u64 {
    match e {
        Entry::Input { path, .. } => path.metadata().map_or(0, |m| m.len()),
        _ => 0,
    }
}

fn render_summary(s: &Summary, format: Format) -> String {
    match format {
        Format::Human => s.render_human(),
        Format::Json => s.to_json() + "\n",
        Format::Csv => s.render_csv(),
    }
}

/// grep's rule for a set of inputs: 2 if any failed, else 0 if any was diagnosed, else 1.
fn sweep_status(errored: bool, diagnosed: bool) -> u8 {
    if errored {
        EXIT_ERROR
    } else if diagnosed {
        EXIT_DIAGNOSED
    } else {
        EXIT_CLEAN
    }
}

fn run_scan(args: ScanArgs) -> Result<u8, Error> {
    let db = database(&args.set)?;
    if args.format == Format::Csv && !args.summary {
        return Err(Usage::Caller("--format csv is for summaries: add --summary".into()).into());
    }
    let shard = args
        .shard
        .as_deref()
        .map(str::parse::<Shard>)
        .transpose()
        .map_err(|e| Error::Usage(Usage::Caller(format!("--{e}"))))?;
    let walk_opts = WalkOptions {
        globs: args.glob.clone(),
        excludes: args.exclude.clone(),
        follow: args.follow,
        shard: None,
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
    let mut entries = walk(&paths, &walk_opts)?;
    let is_input = |e: &Entry| matches!(e, Entry::Input { .. });
    let found = entries.iter().filter(|e| is_input(e)).count();
    let none_selected = found == 0 && !entries.iter().any(|e| matches!(e, Entry::Failed(_)));
    if let Some(shard) = shard {
        entries.retain(|e| shard.keeps(e));
    }
    let pb = progress(&entries);
    let counter = cli::Counter::new(&entries);
    let mut summary: Option<SummaryBuilder> = args.summary.then(Summary::builder);
    let (mut errored, mut diagnosed) = (false, false);
    let many = entries.len() > 1;
    for batch in entries.chunks(BATCH) {
        let run = |entry: &Entry| {
            let report = match entry {
                Entry::Input { path, .. } => Some(analyze_path(
                    db,
                    path,
                    &opts,
                    AnalyzeOptions {
                        all: args.all,
                        max_findings: args.max_findings.min(MAX_FINDINGS_CAP),
                    },
                )),
                Entry::Skipped { .. } => None,
                Entry::Failed(e) => Some(failed_input_report(db, e)),
            };
            if !pb.is_hidden() {
                pb.set_message(counter.tick(entry));
                pb.inc(size_on_disk(entry));
            }
            report
        };
        let results: Vec<Option<Report>> = if batch.len() == 1 {
            batch.iter().map(run).collect()
        } else {
            batch.par_iter().map(run).collect()
        };
        for (entry, report) in batch.iter().zip(results) {
            let Some(report) = report else {
                if let Entry::Skipped { path, reason } = entry {
                    let reason = match reason {
                        SkipReason::DirectorySymlink => {
                            "symlink to a directory (not followed without --follow)".to_string()
                        }
                        r => r.to_string(),
                    };
                    pb.suspend(|| {
                        note(&format!("faultline: {}: skipped: {reason}", path.display()))
                    });
                }
                continue;
            };
            if let Some(e) = &report.error {
                errored = true;
                pb.suspend(|| note(&format!("faultline: {e}")));
            }
            diagnosed |= report.diagnosed();
            let written = match (&mut summary, args.format) {
                (Some(b), _) => {
                    b.add(&report);
                    continue;
                }
                (None, Format::Human) => {
                    if report.error.is_some() && report.findings.is_empty() && report.bytes == 0 {
                        continue;
                    }
                    let mut text = render_human_with_hints(&report, args.all, FLAG_HINTS);
                    if many {
                        text.push('\n');
                    }
                    pb.suspend(|| try_out(&text))
                }
                // Written as it is serialised: no whole line held (its texts can be long).
                (None, _) => pb.suspend(|| try_write(&mut |w| report.write_json_line(w))),
            };
            // A closed stdout ends the sweep. The status covers the inputs taken so far in
            // output order (this one included): the same answer whatever the pipe's timing.
            if written.is_err() {
                pb.finish_and_clear();
                return Ok(sweep_status(errored, diagnosed));
            }
        }
    }
    pb.finish_and_clear();
    if let Some(b) = summary {
        let s = b.finish();
        warn_repeated(&s);
        refuse_ambiguous(&s)?;
        // The summary covers every input: so does the status, written or not.
        let _ = try_out(&render_summary(&s, args.format));
    }
    if none_selected {
        note(&format!(
            "faultline: no input was selected from {}",
            cli::selection(&paths, &args.glob, &args.exclude)
        ));
        return Ok(EXIT_ERROR);
    }
    if let Some(shard) = shard {
        if found > 0 && !entries.iter().any(is_input) {
            note(&format!(
                "faultline: note: shard {shard} selected none of the {found} input{} found in {}",
                if found == 1 { "" } else { "s" },
                cli::selection(&paths, &args.glob, &args.exclude)
            ));
        }
    }
    Ok(sweep_status(errored, diagnosed))
}

/// A summary in which two distinct inputs share one name is an error: its rows could not be
/// traced back to their files (issue 30 item 4).
fn refuse_ambiguous(s: &Summary) -> Result<(), Error> {
    if s.ambiguous.is_empty() {
        return Ok(());
    }
    Err(Error::Usage(Usage::Caller(format!(
        "{} input name{} shared by distinct inputs: {} (a UTF-8 file name holding a literal backslash escape reads like a name that is not UTF-8); the summary would not tell them apart: rename one, or summarise them separately",
        s.ambiguous.len(),
        if s.ambiguous.len() == 1 { " is" } else { "s are" },
        s.ambiguous.join(", ")
    ))))
}

/// Warns of inputs a summary was given more than once (each is counted once).
fn warn_repeated(s: &Summary) {
    for r in &s.repeated {
        note(&format!(
            "faultline: warning: {}: given {} times ({}); counted once",
            r.input,
            r.from.len(),
            r.from.join(", ")
        ));
    }
}

fn run_summary(args: SummaryArgs) -> Result<u8, Error> {
    let mut b = Summary::builder();
    for file in &args.files {
        let io_err = |source| Error::Io {
            path: file.clone(),
            source,
        };
        let text = if file.as_os_str() == "-" {
            let mut t = String::new();
            io::stdin().read_to_string(&mut t).map_err(io_err)?;
            t
        } else {
            std::fs::read_to_string(file).map_err(io_err)?
        };
        b.add_json_lines(&file.display().to_string(), &text)?;
    }
    let s = b.finish();
    warn_repeated(&s);
    refuse_ambiguous(&s)?;
    if s.databases.len() > 1 && !args.allow_mixed_databases {
        let dbs: Vec<String> = s
            .databases
            .iter()
            .map(|d| format!("{} {} (hash {})", d.name, d.version, d.hash))
            .collect();
        return Err(Error::Usage(Usage::Caller(format!(
            "the reports were made with {} different databases: {}; their diagnoses are not comparable (pass --allow-mixed-databases to merge them anyway)",
            dbs.len(),
            dbs.join(", ")
        ))));
    }
    out(&render_summary(&s, args.format));
    Ok(sweep_status(!s.errors.is_empty(), s.diagnosed > 0))
}

fn run_bench(args: BenchArgs) -> Result<u8, Error> {
    let min_time = Duration::try_from_secs_f64(args.min_time)
        .map_err(|e| Error::Usage(Usage::Caller(format!("--min-time {}: {e}", args.min_time))))?;
    let corpus = Corpus::load(&args.corpus)?;
    let mut dbs = vec![database(&args.set)?];
    if let Some(dir) = &args.against {
        let db = if dir.is_file() {
            Database::open(dir)?
        } else {
            Database::compile(&load_dir(dir)?)?
        };
        dbs.push(Box::leak(Box::new(db)));
    }
    let opts = BenchOptions {
        min_time,
        scan: ScanOptions::default(),
    };
    // The sets' timed passes alternate, so that both see the same load.
    let sets: Vec<SetBench> = profile_corpus_sets(&dbs, &corpus, &opts);
    let mut labels = vec![cli::set_label(
        args.set.db.as_deref(),
        args.set.signatures.as_deref(),
        &args.set.add_signatures,
        &args.set.disable,
    )];
    if let Some(against) = &args.against {
        labels.push(against.display().to_string());
    }
    if labels.len() == 2 && labels[0] == labels[1] {
        labels = vec![format!("A: {}", labels[0]), format!("B: {}", labels[1])];
    }
    // The path says which set is which, the database name and version what it holds.
    let labels: Vec<String> = labels
        .iter()
        .zip(&sets)
        .map(|(l, s)| format!("{l} ({} {})", s.database.name, s.database.version))
        .collect();
    let mut reported: Vec<&String> = Vec::new();
    for e in sets.iter().flat_map(|s| &s.errors) {
        if !reported.contains(&e) {
            note(&format!("faultline: {e}"));
            reported.push(e);
        }
    }
    match args.format {
        TextOrJson::Json => out(&(output::bench_json(&sets) + "\n")),
        TextOrJson::Human => out_human(&output::bench_labeled(&sets, &labels, args.all_rows)),
    }
    Ok(sweep_status(
        sets.iter().any(|s| !s.errors.is_empty()),
        true,
    ))
}

fn run_diff(
    old: &std::path::Path,
    new: &std::path::Path,
    corpus: Option<&std::path::Path>,
    format: TextOrJson,
) -> Result<u8, Error> {
    let (a, b) = (load_dir(old)?, load_dir(new)?);
    let d = diff_sets(&a, &b);
    let mut corpus_part = None;
    if let Some(dir) = corpus {
        let c = Corpus::load(dir)?;
        let (da, db) = (Database::compile(&a)?, Database::compile(&b)?);
        let (changes, errors) = diff_corpus(&da, &db, &c.logs, &c.cases, &ScanOptions::default());
        corpus_part = Some((c.logs.len(), changes, errors));
    }
    let errored = corpus_part.as_ref().is_some_and(|(_, _, e)| !e.is_empty());
    match format {
        TextOrJson::Json => {
            let corpus = corpus_part.map(|(inputs, changes, errors)| {
                serde_json::json!({"inputs": inputs, "changes": changes, "errors": errors})
            });
            out(&(serde_json::json!({"diff": d, "corpus": corpus}).to_string() + "\n"));
        }
        TextOrJson::Human => {
            let mut text = output::set_diff_human(&d);
            if let Some((inputs, changes, errors)) = &corpus_part {
                text.push_str(&output::corpus_changes_human(changes, *inputs, errors));
            }
            out_human(&text);
        }
    }
    Ok(if errored { EXIT_ERROR } else { EXIT_DIAGNOSED })
}

/// Anchors expected more often than this per MiB of ordinary log make `db check` name
/// their pattern: at ~200-byte lines that is one candidate line in ~5000.
const COMMON_PER_MIB: f64 = 1.0;

/// The signature directory `dir`, or the embedded set.
fn set_or_embedded(dir: Option<&std::path::Path>) -> Result<SignatureSet, Error> {
    match dir {
        Some(d) => load_dir(d),
        None => faultline::embedded_signature_set(),
    }
}

/// `db check --corpus`: the precision lint over the corpus's healthy logs; exit 2 when a
/// signature fails it.
fn precision(db: &Database, set: &SignatureSet, corpus: &std::path::Path) -> Result<u8, Error> {
    let cases = faultline::load_corpus(corpus)?;
    let ok: std::collections::HashSet<String> = set
        .signatures
        .iter()
        .filter(|s| s.healthy_ok.is_some())
        .map(|s| s.info.id.clone())
        .collect();
    let found = faultline::precision_lint(db, &ok, &cases)?;
    let healthy = cases.iter().filter(|c| c.expect.clean).count();
    for f in &found {
        note(&format!(
            "faultline: precision: {} (not survivable) matches line {} of the healthy log {}: {}",
            f.signature,
            f.line,
            f.case,
            faultline::terminal_safe(&f.text)
        ));
    }
    let mut ids: Vec<&str> = found.iter().map(|f| f.signature.as_str()).collect();
    ids.sort_unstable();
    ids.dedup();
    out(&format!(
        "precision lint: {} healthy logs of {}: {} lines matched by {} signatures that are not survivable ({} with healthy_ok exempt)\n",
        healthy,
        corpus.display(),
        found.len(),
        ids.len(),
        ok.len()
    ));
    Ok(if found.is_empty() {
        EXIT_DIAGNOSED
    } else {
        EXIT_ERROR
    })
}

fn run_db(cmd: DbCommand) -> Result<u8, Error> {
    match cmd {
        DbCommand::Check { dir, corpus } => {
            let set = set_or_embedded(dir.as_deref())?;
            let db = Database::compile(&set)?;
            warn_skipped(&db);
            let archive = db.to_archive(MAX_DFA_BYTES)?;
            Database::from_archive_bytes(&archive.bytes)?.check_examples(&set)?;
            let examples: usize = set.signatures.iter().map(|s| s.examples.len()).sum();
            let counter: usize = set.signatures.iter().map(|s| s.counterexamples.len()).sum();
            let (anchors, _) = db.anchors();
            for w in set.warnings() {
                note(&format!("faultline: warning: {w}"));
            }
            // The name, the version and the patterns come from the signature directory:
            // shown with every character a terminal would obey escaped (issue 30).
            out_human(&format!(
                        "{} {}: {} signatures under {} vendors, {} patterns, {} examples ({} constructed) and {} counterexamples checked; prefilter: {} anchors ({})\n",
                        db.name(),
                        db.version(),
                        db.signatures().len(),
                        set.vendors().len(),
                        db.pattern_sources().len(),
                        examples,
                        set.constructed_examples(),
                        counter,
                        anchors.len(),
                        db.prefilter_kind(),
                    ));
            out_human(&archive_summary(&db, &archive));
            let load = db.prefilter_load(COMMON_PER_MIB);
            let mut text = format!(
                        "prefilter: {:.1} candidate lines per MiB ({:.2}% of lines), measured on a generated healthy vLLM serving log\n",
                        load.candidate_lines_per_mib,
                        load.candidate_line_share * 100.0
                    );
            for (a, r) in &load.anchors {
                text.push_str(&format!(
                    "common anchor: {a:?} ({r:.1} per MiB): each line holding it is confirmed\n"
                ));
            }
            for c in &load.common {
                text.push_str(&format!(
                            "slow signature: {} has only common literals {:?} ({:.1} per MiB): each such line is confirmed\n",
                            c.owner, c.literals, c.per_mib
                        ));
            }
            out_human(&text);
            match corpus {
                Some(c) => precision(&db, &set, &c),
                None => Ok(EXIT_DIAGNOSED),
            }
        }
        DbCommand::Compile { dir, output } => {
            let db = Database::compile(&set_or_embedded(dir.as_deref())?)?;
            let to_stdout = output.as_os_str() == "-";
            let archive = if to_stdout {
                let archive = db.to_archive(MAX_DFA_BYTES)?;
                let mut stdout = io::stdout().lock();
                stdout
                    .write_all(&archive.bytes)
                    .and_then(|()| stdout.flush())
                    .map_err(|source| Error::Io {
                        path: "standard output".into(),
                        source,
                    })?;
                archive
            } else {
                db.write_archive(&output, MAX_DFA_BYTES)?
            };
            let text = format!(
                "{}: {} {} (hash {}), {} signatures, {} bytes\n{}",
                output.display(),
                db.name(),
                db.version(),
                db.hash(),
                db.signatures().len(),
                archive.bytes.len(),
                archive_summary(&db, &archive),
            );
            // With `-o -` the archive is standard output: the account goes to stderr.
            if to_stdout {
                text.lines().for_each(note);
            } else {
                out_human(&text);
            }
            Ok(EXIT_DIAGNOSED)
        }
        DbCommand::Diff {
            old,
            new,
            corpus,
            format,
        } => run_diff(&old, &new, corpus.as_deref(), format),
        DbCommand::List { format, set } => {
            let db = database(&set)?;
            let mut text = String::new();
            for s in db.signatures() {
                match format {
                    TextOrJson::Json => text.push_str(&output::signature_json(s)),
                    TextOrJson::Human => text.push_str(&format!(
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
            // Human rows hold the signature directory's text: shown escaped (issue 30);
            // JSON keeps the exact text.
            match format {
                TextOrJson::Json => out(&text),
                TextOrJson::Human => out_human(&text),
            }
            Ok(EXIT_DIAGNOSED)
        }
        DbCommand::Export { format, set } => {
            let db = database(&set)?;
            let mut text = String::new();
            for p in db.pattern_sources() {
                match format {
                    ExportFormat::Patterns => text.push_str(p),
                    ExportFormat::PatternsUnnamed => text.push_str(&faultline::unnamed(p)),
                }
                text.push('\n');
            }
            out(&text);
            Ok(EXIT_DIAGNOSED)
        }
    }
}

/// How an archive confirms lines: stored DFAs, and the patterns left to compile at first use.
fn archive_summary(db: &Database, archive: &Archive) -> String {
    let mut text = format!(
        "archive format {FORMAT}: {} of {} patterns confirmed by stored DFAs ({} KiB with the structural markers'), {} by their literals alone (no DFA stored), {} compiled at first use (DFA over {} KiB)\n",
        archive.dfas,
        db.pattern_sources().len(),
        archive.dfa_bytes / 1024,
        archive.literal,
        archive.lazy.len(),
        MAX_DFA_BYTES / 1024,
    );
    for (p, reason) in &archive.lazy {
        let owner = (0..db.signatures().len() as u32)
            .find(|&s| db.signature_patterns(s).contains(p))
            .map_or("?", |s| db.signature(s).id.as_str());
        text.push_str(&format!(
            "  {owner}: pattern {:?} has no stored DFA: {reason}\n",
            db.pattern_sources()[*p as usize]
        ));
    }
    text
}

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
        Command::Scan(args) => status(run_scan(args)),
        Command::Db(cmd) => status(run_db(cmd)),
        Command::Summary(args) => status(run_summary(args)),
        Command::Bench(args) => status(run_bench(args)),
    })
}
