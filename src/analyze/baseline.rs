//! A baseline: the line templates of good runs of the same job (`--baseline GOOD`). A finding
//! whose first line's template is in it is `in_baseline`: the good run printed it too, so it
//! ranks after the new ones of its kind (never above a failure, never changing the exit status).

use std::collections::HashSet;
use std::fmt;
use std::path::PathBuf;

use super::template::template_hash;
use super::{AnalyzeOptions, Analyzer};
use crate::error::{Error, Result};
use crate::report::{BaselineInfo, Report};
use crate::scan::walk::{stdin_named_once, walk, Entry, WalkOptions};
use crate::scan::{open, Input, ScanOptions};
use faultline_db::Database;

/// The default of [`Baseline::new`]'s bound (and of the CLI's `--baseline-max-templates`).
pub const DEFAULT_BASELINE_MAX_TEMPLATES: usize = 1_000_000;

/// The templates of good runs' lines, as 64-bit hashes, at most a fixed number (the first
/// seen are kept; the rest are counted as dropped).
///
/// ```
/// use faultline::{analyze_input, AnalyzeOptions, Baseline, Database, EmbeddedDatabase, Input, ScanOptions};
/// use std::{path::Path, sync::Arc};
///
/// let db = Database::embedded();
/// let good = "INFO 10-10 10:00:00 worker.py:1] WARNING: slow disk at /data/a (12 ms)\n";
/// let bad = "INFO 10-10 11:00:00 worker.py:1] WARNING: slow disk at /data/b (99 ms)\n\
///            RuntimeError: CUDA error: an illegal memory access was encountered\n";
/// let mut baseline = Baseline::new(1000);
/// let good_run = baseline.add_input(db, Input::from_bytes(Path::new("good.log"), good.into()), &ScanOptions::default());
/// assert!(!good_run.failed);
/// let opts = AnalyzeOptions { baseline: Some(Arc::new(baseline)), ..AnalyzeOptions::default() };
/// let report = analyze_input(db, Input::from_bytes(Path::new("bad.log"), bad.into()), &ScanOptions::default(), opts);
/// assert_eq!(report.findings[0].in_baseline, Some(false));
/// ```
#[derive(Clone, Debug)]
pub struct Baseline {
    templates: HashSet<u64>,
    inputs: Vec<String>,
    max: usize,
    dropped: u64,
}

impl Baseline {
    /// An empty baseline that keeps at most `max_templates` templates.
    pub fn new(max_templates: usize) -> Baseline {
        Baseline {
            templates: HashSet::new(),
            inputs: Vec::new(),
            max: max_templates,
            dropped: 0,
        }
    }

    /// Adds the templates of every line of `input` that the scan delivers (every line that
    /// could be a finding) and returns the good run's own report, so that a caller can warn
    /// when the "good" run failed.
    pub fn add_input(&mut self, db: &Database, input: Input, scan: &ScanOptions) -> Report {
        self.add_scanned(db, input, scan).0
    }

    /// [`Baseline::add_input`], with the read error (also in the report's `error`).
    fn add_scanned(
        &mut self,
        db: &Database,
        input: Input,
        scan: &ScanOptions,
    ) -> (Report, Option<Error>) {
        let name = input.path().display().to_string();
        let raw = crate::report::raw_path(input.path());
        let mut analyzer = Analyzer::new(db, AnalyzeOptions::default());
        let (stats, err) = input.scan(db, scan, &mut |hit| {
            self.add_line(&hit.text);
            analyzer.push(&hit);
        });
        let mut report = analyzer.finish(&name, &stats, err.as_ref().map(|e| e.to_string()));
        report.input_raw = raw;
        self.inputs.push(name);
        (report, err)
    }

    /// Loads the good runs `goods` (files, or directories walked with the default rules, each
    /// file in path order; `-` is standard input) into a baseline of at most `max_templates`
    /// templates: what `faultline scan --baseline GOOD...` and the Python package's
    /// `baseline=` do before any input is scanned.
    ///
    /// `inputs` are the paths the caller will scan after: standard input named among the
    /// baselines and the inputs together more than once is [`crate::Usage::StdinTwice`]. A
    /// baseline that cannot be read (a walk error, an unreadable file, a corrupt stream
    /// part-way) is [`Error::Baseline`] around the error that names its path (and byte
    /// offset), so that nothing is scanned against half a baseline. A good run that itself
    /// failed, and a baseline that holds no template, are used all the same, each with a
    /// [`BaselineWarning`] for the caller to show.
    ///
    /// ```
    /// use faultline::{Baseline, BaselineWarning, Database, EmbeddedDatabase, ScanOptions};
    ///
    /// let dir = tempfile::tempdir()?;
    /// let good = dir.path().join("good.log");
    /// std::fs::write(&good, "INFO 10-10 10:00:00 worker.py:1] step 1\n\
    ///     ERROR 10-10 10:00:01 worker.py:1] request 17 failed: upstream closed after 30 s\n\
    ///     INFO 10-10 10:00:02 worker.py:1] step 2\n")?;
    /// let loaded = Baseline::load(Database::embedded(), &[good], &[], 1000, &ScanOptions::default())?;
    /// assert_eq!(loaded.baseline.len(), 1);
    /// assert!(loaded.warnings.is_empty());
    ///
    /// let empty = dir.path().join("empty.log");
    /// std::fs::write(&empty, "")?;
    /// let loaded = Baseline::load(Database::embedded(), &[empty], &[], 1000, &ScanOptions::default())?;
    /// assert!(matches!(loaded.warnings[..], [BaselineWarning::Empty { .. }]));
    /// assert!(loaded.warnings[0].to_string().ends_with("the baseline holds 0 templates"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn load(
        db: &Database,
        goods: &[PathBuf],
        inputs: &[PathBuf],
        max_templates: usize,
        scan: &ScanOptions,
    ) -> Result<LoadedBaseline> {
        stdin_named_once(&[goods, inputs].concat())?;
        let wrap = |e: Error| Error::Baseline(Box::new(e));
        let mut baseline = Baseline::new(max_templates);
        let mut warnings = Vec::new();
        for entry in walk(goods, &WalkOptions::default()).map_err(wrap)? {
            let path = match entry {
                Entry::Input { path, .. } => path,
                Entry::Skipped { .. } => continue,
                Entry::Failed(e) => return Err(wrap(e)),
            };
            let input = open(&path).map_err(wrap)?;
            let (good, err) = baseline.add_scanned(db, input, scan);
            if let Some(e) = err {
                return Err(wrap(e));
            }
            if let Some(f) = good.findings.first().filter(|_| good.failed) {
                warnings.push(BaselineWarning::GoodRunFailed {
                    input: good.input.clone(),
                    title: f.title.clone(),
                    line: f.line,
                });
            }
        }
        if baseline.is_empty() {
            warnings.push(BaselineWarning::Empty {
                goods: goods.iter().map(|p| p.display().to_string()).collect(),
            });
        }
        Ok(LoadedBaseline { baseline, warnings })
    }

    /// Adds the template of one raw line (its prefix is parsed off first).
    pub fn add_line(&mut self, raw: &[u8]) {
        let info = super::line::parse_line(raw);
        self.add_message(&info.message);
    }

    fn add_message(&mut self, message: &str) {
        let h = template_hash(message);
        if self.templates.len() < self.max || self.templates.contains(&h) {
            self.templates.insert(h);
        } else {
            self.dropped += 1;
        }
    }

    /// Whether a message (a line after its prefix) has a template of the baseline.
    pub fn knows(&self, message: &str) -> bool {
        !self.templates.is_empty() && self.templates.contains(&template_hash(message))
    }

    /// How many templates it holds.
    pub fn len(&self) -> usize {
        self.templates.len()
    }

    /// Whether it holds no template.
    pub fn is_empty(&self) -> bool {
        self.templates.is_empty()
    }

    /// What a report says of it.
    pub fn info(&self) -> BaselineInfo {
        BaselineInfo {
            inputs: self.inputs.clone(),
            templates: self.templates.len() as u64,
            templates_dropped: self.dropped,
        }
    }
}

/// A baseline [`Baseline::load`] made, and what was odd about it.
#[derive(Clone, Debug)]
pub struct LoadedBaseline {
    /// The templates of every good run.
    pub baseline: Baseline,
    /// What the caller should warn of, in the order found.
    pub warnings: Vec<BaselineWarning>,
}

/// Something odd about a baseline that is used all the same. Its text is the command line's
/// warning after `faultline: warning: `; the Python package warns with the whole line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BaselineWarning {
    /// A "good" run that failed: its name, and its first finding's title and line.
    GoodRunFailed {
        /// The good run's input name.
        input: String,
        /// Its first finding's title.
        title: String,
        /// Its first finding's line.
        line: u64,
    },
    /// No line of any good run was learnt from: the baseline holds no template.
    Empty {
        /// The baselines as given.
        goods: Vec<String>,
    },
}

impl fmt::Display for BaselineWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BaselineWarning::GoodRunFailed { input, title, line } => write!(
                f,
                "{input}: the good run failed ({title}, line {line}); used as a baseline all the same"
            ),
            BaselineWarning::Empty { goods } => write!(
                f,
                "--baseline {}: no line to learn from; the baseline holds 0 templates",
                goods.join(", ")
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_first_templates_and_counts_the_rest() {
        let mut b = Baseline::new(2);
        for line in ["a 1", "b 2", "a 3", "c 4", "d 5"] {
            b.add_line(line.as_bytes());
        }
        assert_eq!(b.len(), 2);
        assert_eq!(b.info().templates_dropped, 2);
        assert!(b.knows("a 99") && b.knows("b 0") && !b.knows("c 4"));
    }

    #[test]
    fn the_prefix_is_not_part_of_the_template() {
        let mut b = Baseline::new(10);
        b.add_line(b"(WorkerDict pid=626895) INFO 04-03 07:06:46 [x.py:1] Saved to /data/a/x.pt");
        let info = crate::analyze::line::parse_line(
            b"(WorkerDict pid=7) INFO 05-09 01:00:00 [x.py:9] Saved to /tmp/b.pt",
        );
        assert!(b.knows(&info.message), "{:?}", info.message);
    }
}
