//! The command line's arguments (clap): the subcommands and their flags, the values they
//! parse (thread counts, byte sizes), and the signature set a command's flags select.

use std::path::{Path, PathBuf};

use clap::{Args, Parser, Subcommand, ValueEnum};

use faultline::{
    load_dir, Database, EmbeddedDatabase, Error, SignatureSet, Usage, MAX_CONFIRM_STATES,
    MAX_THREADS,
};

/// The exit-status rule of `scan` and `summary`, shown in `--help`.
pub const EXIT_STATUS_HELP: &str = "\
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
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand)]
pub enum Command {
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
pub enum Format {
    /// Text for people.
    Human,
    /// JSON (for `scan`: one object per input, one per line).
    Json,
    /// One CSV table (summaries only: `scan --summary`, `summary`).
    Csv,
}

/// When `scan`'s human report is coloured.
#[derive(Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum ColorWhen {
    /// When standard output is a terminal and `NO_COLOR` is unset or empty.
    Auto,
    /// Always (also into a pipe or a file).
    Always,
    /// Never.
    Never,
}

/// The output formats of `bench`, `db list` and `db diff`.
#[derive(Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum TextOrJson {
    /// Text for people.
    Human,
    /// One JSON object (`db list`: one per signature, one per line).
    Json,
}

#[derive(Args, Clone)]
pub struct SetArgs {
    /// Use the signatures in DIR instead of the embedded set.
    #[arg(long, value_name = "DIR")]
    pub signatures: Option<PathBuf>,
    /// Add the signatures in DIR to the set (repeatable).
    #[arg(long = "add-signatures", value_name = "DIR")]
    pub add_signatures: Vec<PathBuf>,
    /// Switch off the signature with this id (repeatable).
    #[arg(long, value_name = "ID")]
    pub disable: Vec<String>,
    /// Use the compiled database archive FILE (from `faultline db compile`).
    #[arg(long, value_name = "FILE", conflicts_with_all = ["signatures", "add_signatures", "disable"])]
    pub db: Option<PathBuf>,
}

#[derive(Args)]
pub struct ScanArgs {
    /// Inputs: files, directories (recursive), `-` for stdin.
    pub paths: Vec<PathBuf>,
    /// Output format (csv needs --summary).
    #[arg(long, value_enum, default_value = "human")]
    pub format: Format,
    /// List every matched line, its role and why it ranks where it does.
    #[arg(long)]
    pub all: bool,
    #[command(flatten)]
    pub set: SetArgs,
    /// Worker threads, 1..=1024 (default: all cores).
    #[arg(long, short = 'j', value_name = "N", value_parser = parse_threads)]
    pub threads: Option<usize>,
    /// Longest line a stream keeps whole, and a finding's text; longer lines are scanned in
    /// windows and cut. A size: 65536, 64K, 64M, 2G (or KiB, MiB, GiB: powers of 1024); at
    /// least 4 KiB.
    #[arg(long, value_name = "SIZE", default_value = "64MiB", value_parser = parse_line_bytes)]
    pub max_line_bytes: usize,
    /// Most findings per report (0: no limit); past it the lowest-ranked are left out and
    /// counted in `findings_omitted`, never a fatal cause for a lower finding.
    #[arg(long, value_name = "N", default_value_t = faultline::DEFAULT_MAX_FINDINGS)]
    pub max_findings: usize,
    /// A good run of the same job (a file or a directory; repeatable): findings whose first
    /// line it printed too (numbers, ids, paths and times masked) rank after the new ones of
    /// their kind and say "also in the good run". Never changes the exit status.
    #[arg(long, value_name = "GOOD")]
    pub baseline: Vec<PathBuf>,
    /// Most distinct line templates kept from the baselines (the first seen are kept).
    #[arg(long, value_name = "N", default_value_t = faultline::DEFAULT_BASELINE_MAX_TEMPLATES)]
    pub baseline_max_templates: usize,
    /// In directories, scan only files matching GLOB (repeatable; without `/` it matches the
    /// file name, with `/` the path below the directory).
    #[arg(long, value_name = "GLOB")]
    pub glob: Vec<String>,
    /// In directories, skip files and directories matching GLOB (repeatable).
    #[arg(long, value_name = "GLOB")]
    pub exclude: Vec<String>,
    /// In directories, scan also the files skipped by name without --glob (.md, .rst, .yaml,
    /// .yml, .json, .toml, .py, .sh, images, archives other than .gz and .zst).
    #[arg(long)]
    pub all_files: bool,
    /// Follow symlinked directories (loops are detected and skipped).
    #[arg(long, short = 'L')]
    pub follow: bool,
    /// Scan only shard I of N: inputs whose relative path hashes (xxh3-64) to I-1 mod N.
    #[arg(long, value_name = "I/N")]
    pub shard: Option<String>,
    /// Print one summary table of the sweep instead of a report per input.
    #[arg(long)]
    pub summary: bool,
    /// Colour the human report (the root cause's title, the Fix labels); JSON and CSV are
    /// never coloured.
    #[arg(long, value_enum, value_name = "WHEN", default_value = "auto")]
    pub color: ColorWhen,
    /// Print nothing on standard output: the exit status answers. Every input is still
    /// scanned, errors still go to standard error.
    #[arg(long, short = 'q', conflicts_with_all = ["summary", "format"])]
    pub quiet: bool,
    /// The inputs (files, and the files of directories) are one distributed job: one report,
    /// whose root cause is the first failure in time that does not wait on a peer (a
    /// collective timeout, a closed connection) and which says which rank or node failed
    /// first. Not with --shard.
    #[arg(long)]
    pub job: bool,
    /// Failures of different ranks or nodes this close in time are simultaneous (their clocks
    /// may differ by this much): 2s, 500ms, 1m.
    #[arg(long, value_name = "DURATION", default_value = "2s", value_parser = parse_duration)]
    pub clock_skew: std::time::Duration,
}

#[derive(Args)]
pub struct SummaryArgs {
    /// JSON-lines files written by `scan --format json` (`-` reads stdin).
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value = "human")]
    pub format: Format,
    /// Merge reports made with different signature databases (an error otherwise: their
    /// diagnoses are not comparable).
    #[arg(long)]
    pub allow_mixed_databases: bool,
}

#[derive(Args)]
pub struct BenchArgs {
    /// A directory of logs, with `NAME.expect.toml` sidecars where answers are known.
    #[arg(long, value_name = "DIR")]
    pub corpus: PathBuf,
    #[command(flatten)]
    pub set: SetArgs,
    /// A second signature set to run on the same corpus, shown side by side: a signature
    /// directory or a compiled archive (`faultline db compile`).
    #[arg(long, value_name = "DIR|FILE")]
    pub against: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value = "human")]
    pub format: TextOrJson,
    /// Show every per-signature row, also those with no candidate line on this corpus.
    #[arg(long)]
    pub all_rows: bool,
    /// Repeat the timed pass over the corpus for at least this many seconds.
    #[arg(long, value_name = "SECONDS", default_value_t = 1.0)]
    pub min_time: f64,
}

#[derive(Subcommand)]
pub enum DbCommand {
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
pub enum ExportFormat {
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

/// `--clock-skew`: a duration such as `2s`, `500ms`, `1m 30s` (jiff's friendly format, or
/// ISO 8601 `PT2S`), not negative.
fn parse_duration(s: &str) -> Result<std::time::Duration, String> {
    let d: jiff::SignedDuration = s
        .trim()
        .parse()
        .map_err(|e| format!("{s:?} is not a duration (2s, 500ms, 1m): {e}"))?;
    std::time::Duration::try_from(d).map_err(|_| format!("{s:?}: a duration must not be negative"))
}

/// The smallest `--max-line-bytes`: the scanner's window seam is 4 KiB, and a finding's text
/// must hold at least one whole ordinary line.
const MIN_LINE_BYTES: u64 = 4 << 10;

/// Parses a byte size: a plain number, or a number with `K`/`M`/`G` or `KiB`/`MiB`/`GiB`
/// (powers of 1024; `KB`/`MB`/`GB` are taken the same way), at least [`MIN_LINE_BYTES`].
fn parse_line_bytes(s: &str) -> Result<usize, String> {
    let t = s.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    if num.is_empty() {
        return Err(format!(
            "{s:?} is not a size: a number with an optional unit K, M, G, KiB, MiB or GiB"
        ));
    }
    let shift = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "k" | "kb" | "kib" => 10,
        "m" | "mb" | "mib" => 20,
        "g" | "gb" | "gib" => 30,
        other => {
            return Err(format!(
                "unknown unit {other:?} in {s:?}: use K, M, G, KiB, MiB or GiB (powers of 1024)"
            ))
        }
    };
    let n: u64 = num.parse().map_err(|e| format!("{s:?}: {e}"))?;
    let bytes = n
        .checked_mul(1u64 << shift)
        .filter(|&b| b <= usize::MAX as u64)
        .ok_or_else(|| format!("{s:?} is too large"))?;
    if bytes < MIN_LINE_BYTES {
        return Err(format!(
            "{s:?} is below the minimum of 4 KiB ({MIN_LINE_BYTES} bytes)"
        ));
    }
    usize::try_from(bytes).map_err(|_| format!("{s:?} is too large"))
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

pub fn database(args: &SetArgs) -> Result<&'static Database, Error> {
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
pub fn warn_skipped(db: &Database) {
    for (sig, source, states) in db.skipped_patterns() {
        let shown: String = source.chars().take(80).collect();
        let more = if shown.len() < source.len() {
            "…"
        } else {
            ""
        };
        crate::output::note(&format!(
            "faultline: warning: signature {}: pattern {shown}{more} is skipped: confirming it would exceed the budget ({states} NFA states, at most {MAX_CONFIRM_STATES}; counted repetitions such as (?:a{{99}}){{999}} multiply them)",
            db.signature(sig).id
        ));
    }
}

/// The signature directory `dir`, or the embedded set.
pub fn set_or_embedded(dir: Option<&std::path::Path>) -> Result<SignatureSet, Error> {
    match dir {
        Some(d) => Ok(load_dir(d)?),
        None => Ok(faultline::embedded_signature_set()?),
    }
}

/// What a set of `bench` is called: the archive or directory it came from, or `embedded`,
/// with its additions and switched-off ids.
pub fn set_label(
    db: Option<&Path>,
    signatures: Option<&Path>,
    add: &[PathBuf],
    disable: &[String],
) -> String {
    let mut label = match (db, signatures) {
        (Some(f), _) | (None, Some(f)) => f.display().to_string(),
        (None, None) => "embedded".to_string(),
    };
    for a in add {
        label.push_str(&format!(" + {}", a.display()));
    }
    for d in disable {
        label.push_str(&format!(" - {d}"));
    }
    label
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_take_units_and_a_minimum() {
        for (s, n) in [
            ("4096", 4096usize),
            ("64M", 64 << 20),
            ("64MiB", 64 << 20),
            ("64mib", 64 << 20),
            ("8K", 8 << 10),
            ("8KiB", 8 << 10),
            ("2G", 2 << 30),
            ("2GiB", 2 << 30),
            (" 1 M ", 1 << 20),
        ] {
            assert_eq!(parse_line_bytes(s), Ok(n), "{s}");
        }
        for s in ["0", "4095", "1K", "3KiB"] {
            let e = parse_line_bytes(s).unwrap_err();
            assert!(e.contains("minimum of 4 KiB"), "{s}: {e}");
        }
        for s in ["", "M", "64X", "-1", "1.5M", "99999999999999999999G"] {
            assert!(parse_line_bytes(s).is_err(), "{s}");
        }
    }

    /// Every argument of every subcommand, walked down clap's command tree.
    fn arguments(cmd: &clap::Command, path: &str, out: &mut Vec<(String, clap::Arg)>) {
        for a in cmd.get_arguments() {
            out.push((path.to_string(), a.clone()));
        }
        for sub in cmd.get_subcommands() {
            arguments(sub, &format!("{path} {}", sub.get_name()), out);
        }
    }

    #[test]
    fn every_flag_has_help_and_formats_are_offered_where_they_work() {
        use clap::CommandFactory;
        let mut cmd = crate::Cli::command();
        cmd.build();
        let mut all = Vec::new();
        arguments(&cmd, "faultline", &mut all);
        let missing: Vec<String> = all
            .iter()
            .filter(|(_, a)| a.get_help().is_none() && a.get_long_help().is_none())
            .map(|(p, a)| format!("{p} {}", a.get_id()))
            .collect();
        assert!(missing.is_empty(), "arguments without help: {missing:?}");
        // csv is offered where it works: summaries only.
        for (path, a) in &all {
            if a.get_id() != "format" {
                continue;
            }
            let values: Vec<String> = a
                .get_possible_values()
                .iter()
                .map(|v| v.get_name().to_string())
                .collect();
            let csv = values.iter().any(|v| v == "csv");
            let summaries = path == "faultline scan" || path == "faultline summary";
            assert_eq!(csv, summaries, "{path} --format offers {values:?}");
        }
    }
}
