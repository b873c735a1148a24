//! `scan --job`: the inputs a walk selects, analysed as one distributed job's report.

use std::path::PathBuf;

use indicatif::ProgressBar;

use faultline::{analyze_job, open, AnalyzeOptions, Database, Entry, Report, ScanOptions};

use crate::output::note;

/// The job's report of `entries` (walked from `paths`; the first path names the job), or
/// none when the walk found nothing to open. Skipped entries and each input's error are
/// noted on stderr.
pub(crate) fn run(
    db: &Database,
    paths: &[PathBuf],
    entries: Vec<Entry>,
    scan: &ScanOptions,
    analyze: AnalyzeOptions,
    pb: &ProgressBar,
) -> Option<Report> {
    let mut members = Vec::new();
    for entry in entries {
        match entry {
            Entry::Input { path, .. } => members.push(open(&path)),
            Entry::Failed(e) => members.push(Err(e)),
            Entry::Skipped { path, reason } => {
                pb.suspend(|| note(&crate::scan::skipped(&path, &reason)))
            }
        }
    }
    if members.is_empty() {
        return None;
    }
    let name = paths
        .first()
        .map_or_else(|| "-".to_string(), |p| p.display().to_string());
    let report = analyze_job(db, &name, members, scan, analyze);
    for input in report.inputs.iter().flatten() {
        if let Some(e) = &input.error {
            pb.suspend(|| note(&format!("faultline: {e}")));
        }
    }
    Some(report)
}
