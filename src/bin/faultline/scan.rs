//! `faultline scan`: the sweep of the inputs a walk selects, each report printed in input
//! order (or added to a summary), with a progress bar on a terminal.

use std::io::{self, IsTerminal};
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};

use indicatif::{ProgressBar, ProgressStyle};

use faultline::{check_selection, walk, Entry, Error, ScanOptions, Shard, SkipReason};
use faultline::{render_human_with_hints, sweep, AnalyzeOptions, Bucket, HumanHints, Report};
use faultline::{skipped_by_name_note, Summary, SummaryBuilder, Usage, WalkOptions};

use crate::args::{database, Format, ScanArgs};
use crate::output::{note, try_out, try_write, Closed, EXIT_ERROR};
use crate::summary::{refuse_ambiguous, render_summary, warn_repeated};

/// The human report's hints name this binary's flags.
const FLAG_HINTS: HumanHints = HumanHints {
    max_findings: "--max-findings",
    all: "--all",
    color: false,
};

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

pub fn run_scan(args: ScanArgs) -> Result<u8, Error> {
    if args.job && args.shard.is_some() {
        return Err(Usage::Caller(
            "--job makes one report of all the inputs; --shard splits the inputs between runs: they do not go together".into(),
        )
        .into());
    }
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
        all_files: args.all_files,
    };
    let opts = ScanOptions {
        threads: args.threads.unwrap_or_else(rayon::current_num_threads),
        max_line_bytes: args.max_line_bytes,
        ..ScanOptions::default()
    };
    let baseline = crate::baseline::load(
        db,
        &args.baseline,
        &args.paths,
        args.baseline_max_templates,
        &opts,
    )?;
    let paths = if args.paths.is_empty() {
        if io::stdin().is_terminal() {
            note("faultline: reading standard input (end it with Ctrl-D; name files or directories to scan them)");
        }
        vec![PathBuf::from("-")]
    } else {
        args.paths.clone()
    };
    let mut entries = walk(&paths, &walk_opts)?;
    let is_input = |e: &Entry| matches!(e, Entry::Input { .. });
    let found = entries.iter().filter(|e| is_input(e)).count();
    let none_selected = check_selection(&paths, &walk_opts, &entries).err();
    if let Some(shard) = shard {
        entries.retain(|e| shard.keeps(e));
    }
    let pb = progress(&entries);
    let counter = Counter::new(&entries);
    let mut summary: Option<SummaryBuilder> = args.summary.then(Summary::builder);
    // The bucket of the inputs taken so far, together: the exit status.
    let mut status = Bucket::Clean;
    let many = entries.len() > 1;
    let hints = HumanHints {
        color: crate::output::use_color(args.color),
        ..FLAG_HINTS
    };
    let analyze = AnalyzeOptions {
        all: args.all,
        max_findings: args.max_findings.min(MAX_FINDINGS_CAP),
        baseline,
        clock_skew: args.clock_skew,
    };
    // A job is one report of all the entries; otherwise each entry is swept to its own.
    if args.job {
        let members = std::mem::take(&mut entries);
        if let Some(report) = crate::job::run(db, &paths, members, &opts, analyze.clone(), &pb) {
            status = status.worst(report.bucket());
            if !args.quiet && emit(&report, &args, &mut summary, false, &pb, hints).is_err() {
                pb.finish_and_clear();
                return Ok(status.exit_status());
            }
        }
    }
    for batch in entries.chunks(BATCH) {
        let tick = |entry: &Entry| {
            if !pb.is_hidden() {
                pb.set_message(counter.tick(entry));
                pb.inc(size_on_disk(entry));
            }
        };
        let results = sweep(db, batch, &opts, &analyze, None, &tick);
        for (entry, report) in batch.iter().zip(results) {
            let Some(report) = report else {
                if let Entry::Skipped { path, reason } = entry {
                    if matches!(reason, SkipReason::ByName(_)) {
                        continue;
                    }
                    pb.suspend(|| note(&skipped(path, reason)));
                }
                continue;
            };
            if let Some(e) = &report.error {
                pb.suspend(|| note(&format!("faultline: {e}")));
            }
            status = status.worst(report.bucket());
            if args.quiet {
                continue;
            }
            let written = emit(&report, &args, &mut summary, many, &pb, hints);
            // A closed stdout ends the sweep. The status covers the inputs taken so far in
            // output order (this one included): the same answer whatever the pipe's timing.
            if written.is_err() {
                pb.finish_and_clear();
                return Ok(status.exit_status());
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
    if let Some(line) = skipped_by_name_note(&entries) {
        note(&format!("faultline: {line}"));
    }
    if let Some(e) = none_selected {
        note(&format!("faultline: {e}"));
        return Ok(EXIT_ERROR);
    }
    if let Some(shard) = shard {
        if found > 0 && !entries.iter().any(is_input) {
            note(&format!(
                "faultline: note: shard {shard} selected none of the {found} input{} found in {}",
                if found == 1 { "" } else { "s" },
                walk_opts.describe(&paths)
            ));
        }
    }
    Ok(status.exit_status())
}

/// The note for a path a walk skipped.
pub(crate) fn skipped(path: &std::path::Path, reason: &SkipReason) -> String {
    let reason = match reason {
        SkipReason::DirectorySymlink => {
            "symlink to a directory (not followed without --follow)".to_string()
        }
        r => r.to_string(),
    };
    format!("faultline: {}: skipped: {reason}", path.display())
}

/// Adds `report` to the summary, or writes it as human text (a blank line after it when
/// `many`) or a JSON line. Err: standard output was closed.
fn emit(
    report: &Report,
    args: &ScanArgs,
    summary: &mut Option<SummaryBuilder>,
    many: bool,
    pb: &ProgressBar,
    hints: HumanHints,
) -> Result<(), Closed> {
    match (summary, args.format) {
        (Some(b), _) => {
            b.add(report);
            Ok(())
        }
        (None, Format::Human) => {
            if report.error.is_some() && report.findings.is_empty() && report.bytes == 0 {
                return Ok(());
            }
            let mut text = render_human_with_hints(report, args.all, hints);
            if many {
                text.push('\n');
            }
            pb.suspend(|| try_out(&text))
        }
        // Written as it is serialised: no whole line held (its texts can be long).
        (None, _) => pb.suspend(|| try_write(&mut |w| report.write_json_line(w))),
    }
}

/// The files counter of a sweep's progress bar: counts the entries that get a report (inputs,
/// and paths that could not be examined), never skipped ones, so `done` never passes `total`.
struct Counter {
    total: usize,
    done: AtomicUsize,
}

impl Counter {
    /// Whether `entry` is counted.
    fn counts(entry: &Entry) -> bool {
        !matches!(entry, Entry::Skipped { .. })
    }

    fn new(entries: &[Entry]) -> Counter {
        Counter {
            total: entries.iter().filter(|e| Counter::counts(e)).count(),
            done: AtomicUsize::new(0),
        }
    }

    /// Records that `entry` is done; the message `done/total`.
    fn tick(&self, entry: &Entry) -> String {
        let n = if Counter::counts(entry) {
            self.done.fetch_add(1, Ordering::Relaxed) + 1
        } else {
            self.done.load(Ordering::Relaxed)
        };
        format!("{n}/{}", self.total)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_progress_counter_never_passes_its_total() {
        let input = |p: &str| Entry::Input {
            path: PathBuf::from(p),
            relative: p.into(),
        };
        let entries = vec![
            input("a.log"),
            Entry::Skipped {
                path: PathBuf::from("pipe"),
                reason: faultline::SkipReason::Special("a FIFO"),
            },
            Entry::Failed(faultline::Usage::Caller("dangling".into()).into()),
            input("b.log"),
        ];
        let c = Counter::new(&entries);
        let shown: Vec<String> = entries.iter().map(|e| c.tick(e)).collect();
        assert_eq!(shown, ["1/3", "1/3", "2/3", "3/3"]);
    }
}
