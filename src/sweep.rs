//! The step of a sweep that turns the entries of a walk into reports: an input is analysed,
//! a path that could not be examined becomes an error report, a skipped path none. The
//! command line and the Python package both sweep with it.

use faultline_db::Database;
use rayon::prelude::*;

use crate::analyze::{analyze_path, failed_input_report, AnalyzeOptions};
use crate::report::Report;
use crate::scan::walk::Entry;
use crate::scan::ScanOptions;

impl Entry {
    /// This entry's report: an input's analysis, the error report of a path that could not be
    /// examined, none for a skipped path.
    pub fn report(
        &self,
        db: &Database,
        scan: &ScanOptions,
        opts: AnalyzeOptions,
    ) -> Option<Report> {
        match self {
            Entry::Input { path, .. } => Some(analyze_path(db, path, scan, opts)),
            Entry::Skipped { .. } => None,
            Entry::Failed(e) => Some(failed_input_report(db, e)),
        }
    }
}

/// The reports of `entries` ([`Entry::report`]), in entry order. One entry is analysed on the
/// calling thread (its scan spreads over the workers itself); several side by side on `pool`
/// (the current rayon pool when `None`). `done` is called with each entry as its report is
/// made (a progress counter), from whichever thread made it.
pub fn sweep(
    db: &Database,
    entries: &[Entry],
    scan: &ScanOptions,
    opts: &AnalyzeOptions,
    pool: Option<&rayon::ThreadPool>,
    done: &(dyn Fn(&Entry) + Sync),
) -> Vec<Option<Report>> {
    let run = |entry: &Entry| {
        let report = entry.report(db, scan, opts.clone());
        done(entry);
        report
    };
    if entries.len() == 1 {
        return entries.iter().map(run).collect();
    }
    let many = || entries.par_iter().map(run).collect();
    match pool {
        Some(pool) => pool.install(many),
        None => many(),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;
    use crate::embedded::EmbeddedDatabase;
    use crate::error::Error;

    #[test]
    fn inputs_report_failures_report_skips_do_not() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("a.log");
        std::fs::write(&log, "RuntimeError: CUDA error: out of memory\n").unwrap();
        let missing = dir.path().join("gone.log");
        let entries = vec![
            Entry::Input {
                path: log.clone(),
                relative: "a.log".into(),
            },
            Entry::Skipped {
                path: dir.path().join("fifo"),
                reason: crate::scan::walk::SkipReason::Special("FIFO"),
            },
            Entry::Failed(Error::Io {
                path: missing.clone(),
                source: std::io::Error::from(std::io::ErrorKind::NotFound),
            }),
        ];
        let db = Database::embedded();
        let count = AtomicUsize::new(0);
        let tick = |_: &Entry| {
            count.fetch_add(1, Ordering::Relaxed);
        };
        let reports = sweep(
            db,
            &entries,
            &ScanOptions::default(),
            &AnalyzeOptions::default(),
            None,
            &tick,
        );
        assert_eq!(count.load(Ordering::Relaxed), 3);
        assert_eq!(reports.len(), 3);
        let first = reports[0].as_ref().expect("an input has a report");
        assert_eq!(first.input, log.display().to_string());
        assert!(first.error.is_none());
        assert!(reports[1].is_none(), "a skipped path has no report");
        let failed = reports[2].as_ref().expect("a failed path has a report");
        assert!(failed.error.is_some());
        // One entry is the same report, made on the calling thread.
        let one = sweep(
            db,
            &entries[..1],
            &ScanOptions::default(),
            &AnalyzeOptions::default(),
            None,
            &|_| {},
        );
        assert_eq!(
            one[0].as_ref().map(Report::to_json_line),
            reports[0].as_ref().map(Report::to_json_line)
        );
    }
}
