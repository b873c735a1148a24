//! Corpora of logs with expected answers: `NAME.log` (or `.log.gz`, `.log.zst`, `.gz`, `.zst`)
//! beside a sidecar `NAME.expect.toml` that says what the first finding must be. Used by
//! `faultline bench --corpus`, `faultline db diff --corpus` and the accuracy tests.
//!
//! ```
//! use faultline::tools::{Case, Expectation};
//! use faultline::{analyze_input, AnalyzeOptions, Database, EmbeddedDatabase, Input, ScanOptions};
//! use std::path::Path;
//!
//! let case = Case::from_sidecar_text(
//!     Path::new("oom.log"),
//!     Path::new("oom.expect.toml"),
//!     "root_cause = \"CUDA out of memory. Tried to allocate 2.00 GiB\"\n\
//!      signature = \"pytorch.cuda.oom\"\ncategory = \"cuda-oom\"\nsource = \"doc example\"\n",
//! )?;
//! let log = b"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.19 GiB of which 1.01 GiB is free.\n";
//! let input = Input::from_bytes(Path::new("oom.log"), log.to_vec());
//! let report = analyze_input(Database::embedded(), input, &ScanOptions::default(), AnalyzeOptions::default());
//! assert!(case.check(&report).is_pass(), "{:?}", case.check(&report));
//! # Ok::<(), faultline::Error>(())
//! ```

use std::fmt;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use toml::Spanned;

use crate::error::{Error, Result};
use crate::report::{FindingRole, Report};
use faultline_db::{location, toml_problem};
use faultline_db::{Location, Problem};

/// The suffix of a sidecar file.
pub const SIDECAR_SUFFIX: &str = ".expect.toml";

/// The suffixes a corpus log may have, most specific first.
pub const LOG_SUFFIXES: &[&str] = &[".log.gz", ".log.zst", ".log", ".gz", ".zst"];

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawExpectation {
    #[serde(default)]
    root_cause: Option<Spanned<String>>,
    /// `"clean"` for a healthy log.
    #[serde(default)]
    expect: Option<Spanned<String>>,
    #[serde(default)]
    decoys: Vec<String>,
    #[serde(default)]
    run: Option<u32>,
    #[serde(default)]
    survivable: bool,
    #[serde(default)]
    signature: Option<String>,
    category: String,
    source: String,
    #[serde(default)]
    fragment: bool,
    #[serde(default)]
    notes: String,
    #[serde(default)]
    whole: bool,
    #[serde(default)]
    lines: Option<u64>,
    #[serde(default)]
    outcomes: Option<Spanned<Vec<String>>>,
    #[serde(default)]
    baseline: Option<String>,
    #[serde(default)]
    signatures_added: Vec<String>,
}

/// The words a sidecar's `outcomes` may use, one per run of the log.
pub const RUN_OUTCOMES: &[&str] = &["completed", "stopped", "running", "failed", "unknown"];

/// What a sidecar says the analysis of its log must report.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Expectation {
    /// A substring of the first finding's line (its first occurrence); empty for a healthy
    /// log.
    pub root_cause: String,
    /// A healthy log (`expect = "clean"`): no finding may be a failure (a fatal cause or
    /// unclassified finding), so the scan exits 1.
    pub clean: bool,
    /// Substrings of lines that look like the cause but are not: the first finding holds none.
    pub decoys: Vec<String>,
    /// The 1-based run of the root cause, when the log holds several runs.
    pub run: Option<u32>,
    /// Whether the expected first finding is a survivable one.
    pub survivable: bool,
    /// The expected signature id of the first finding, when one is named.
    pub signature: Option<String>,
    /// The failure category (per-category accuracy is reported by this).
    pub category: String,
    /// Where the log came from.
    pub source: String,
    /// Whether the log is an excerpt of a longer output.
    pub fragment: bool,
    /// Why the expected line is the root cause.
    pub notes: String,
    /// Whether the log is a whole file as committed or attached (cut only at its start), not a
    /// pasted excerpt. Whole logs are gated in release mode (they are large).
    pub whole: bool,
    /// The log's line count as the sidecar states it (required for whole logs; a test checks it).
    pub lines: Option<u64>,
    /// The outcome of each run of the log, in order (one of [`RUN_OUTCOMES`]), written before the
    /// log was first scored; empty when the sidecar does not say.
    pub outcomes: Vec<String>,
    /// The name of a healthy log of the same job or script (a case name in the same directory),
    /// for baseline comparisons.
    pub baseline: Option<String>,
    /// Signature ids that this log's repository caused to be added or changed (switched off for
    /// its logs in leave-one-repository-out measurements).
    pub signatures_added: Vec<String>,
}

impl Expectation {
    /// The `owner/name` of the GitHub repository in `source`, if it names one; the runs that
    /// `tools/reallogs` made on a machine of this project count as one repository of their own.
    pub fn repository(&self) -> Option<String> {
        if self.source.contains("tools/reallogs") {
            return Some("tools/reallogs".into());
        }
        let rest = self.source.split("github.com/").nth(1)?;
        let mut parts = rest.split(['/', '#', '?', ' ']);
        let owner = parts.next().filter(|p| !p.is_empty())?;
        let name = parts.next().filter(|p| !p.is_empty())?;
        Some(format!("{}/{}", owner, name.trim_end_matches(".git")).to_ascii_lowercase())
    }
}

/// What a corpus holds: fragments and whole logs, by size and by expectation.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Composition {
    /// Cases whose sidecar does not say `whole = true` (pasted excerpts and short outputs).
    pub fragments: u64,
    /// Cases with `whole = true`.
    pub whole: u64,
    /// Whole logs of at least 500 lines.
    pub whole_500_lines: u64,
    /// Whole logs of at least 3,000 lines.
    pub whole_3000_lines: u64,
    /// Whole logs of healthy runs (`expect = "clean"`).
    pub whole_healthy: u64,
    /// Whole logs of failing runs.
    pub whole_failing: u64,
    /// Distinct GitHub repositories the whole logs come from (a source that names none counts
    /// as one repository of its own).
    pub whole_repositories: u64,
    /// Failing whole logs that name a healthy `baseline` of the same job.
    pub whole_pairs: u64,
}

impl Composition {
    /// Counts `cases`.
    pub fn of(cases: &[Case]) -> Composition {
        let mut c = Composition::default();
        let mut repos = std::collections::BTreeSet::new();
        for case in cases {
            let e = &case.expect;
            if !e.whole {
                c.fragments += 1;
                continue;
            }
            c.whole += 1;
            let lines = e.lines.unwrap_or(0);
            c.whole_500_lines += u64::from(lines >= 500);
            c.whole_3000_lines += u64::from(lines >= 3000);
            if e.clean {
                c.whole_healthy += 1;
            } else {
                c.whole_failing += 1;
                c.whole_pairs += u64::from(e.baseline.is_some());
            }
            repos.insert(e.repository().unwrap_or_else(|| e.source.clone()));
        }
        c.whole_repositories = repos.len() as u64;
        c
    }
}

impl fmt::Display for Composition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} fragments; {} whole logs ({} of >= 500 lines, {} of >= 3,000 lines; {} healthy, {} failing; {} repositories; {} failing logs paired with a healthy baseline)",
            self.fragments,
            self.whole,
            self.whole_500_lines,
            self.whole_3000_lines,
            self.whole_healthy,
            self.whole_failing,
            self.whole_repositories,
            self.whole_pairs
        )
    }
}

/// One log of a corpus together with its expectation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Case {
    /// The log's path relative to the corpus directory, without its log suffix.
    pub name: String,
    /// The log file.
    pub log: PathBuf,
    /// The sidecar file.
    pub sidecar: PathBuf,
    /// What the sidecar expects.
    pub expect: Expectation,
}

/// Whether a report meets a case's expectation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The report meets the expectation.
    Pass,
    /// The reason says what was expected and what was found instead.
    Fail(String),
}

impl Outcome {
    /// Whether the case passed.
    pub fn is_pass(&self) -> bool {
        matches!(self, Outcome::Pass)
    }
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Outcome::Pass => f.write_str("pass"),
            Outcome::Fail(reason) => write!(f, "fail: {reason}"),
        }
    }
}

/// The log suffix of `name`, if it is a corpus log name (sidecars are not).
fn log_suffix(name: &str) -> Option<&'static str> {
    if name.ends_with(SIDECAR_SUFFIX) {
        return None;
    }
    LOG_SUFFIXES
        .iter()
        .copied()
        .find(|s| name.len() > s.len() && name.ends_with(s))
}

fn io_error(path: &Path, source: std::io::Error) -> Error {
    Error::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// Every file under `dir` (recursively, symlinked directories not followed), sorted by path.
fn files(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for entry in walkdir::WalkDir::new(dir)
        .follow_links(false)
        .sort_by_file_name()
    {
        let entry = entry.map_err(|e| {
            let path = e.path().unwrap_or(dir).to_path_buf();
            let source = e
                .into_io_error()
                .unwrap_or_else(|| std::io::Error::other("directory walk failed"));
            io_error(&path, source)
        })?;
        if entry.file_type().is_file() || (entry.file_type().is_symlink() && entry.path().is_file())
        {
            out.push(entry.into_path());
        }
    }
    out.sort();
    Ok(out)
}

/// Every log under `dir` (`*.log`, `*.log.gz`, `*.log.zst`, `*.gz`, `*.zst`), with or without
/// a sidecar, sorted by path.
pub fn corpus_logs(dir: &Path) -> Result<Vec<PathBuf>> {
    Ok(files(dir)?
        .into_iter()
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| log_suffix(n).is_some())
        })
        .collect())
}

/// Loads every sidecar under `dir` (recursively) with the log beside it, sorted by path.
/// Logs without a sidecar are not cases (see [`corpus_logs`]). All problems are collected: a
/// sidecar that does not parse (with `file:line:column`), a sidecar without a log or with
/// more than one, an empty `root_cause`.
pub fn load_corpus(dir: &Path) -> Result<Vec<Case>> {
    let all = files(dir)?;
    let mut cases = Vec::new();
    let mut problems = Vec::new();
    for sidecar in &all {
        let Some(stem) = sidecar
            .to_str()
            .and_then(|s| s.strip_suffix(SIDECAR_SUFFIX))
        else {
            continue;
        };
        let logs: Vec<&PathBuf> = LOG_SUFFIXES
            .iter()
            .map(|suffix| PathBuf::from(format!("{stem}{suffix}")))
            .filter_map(|candidate| all.iter().find(|p| **p == candidate))
            .collect();
        let log = match logs.as_slice() {
            [log] => (*log).clone(),
            [] => {
                problems.push(Problem {
                    location: start_of(sidecar),
                    message: format!(
                        "no log beside this sidecar (looked for {stem}.log, .log.gz, .log.zst, .gz, .zst)"
                    ),
                });
                continue;
            }
            many => {
                problems.push(Problem {
                    location: start_of(sidecar),
                    message: format!(
                        "more than one log for this sidecar: {}",
                        many.iter()
                            .map(|p| p.display().to_string())
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                });
                continue;
            }
        };
        let text = std::fs::read_to_string(sidecar).map_err(|e| io_error(sidecar, e))?;
        match Case::parse(&log, sidecar, &text, dir) {
            Ok(case) => cases.push(case),
            Err(p) => problems.push(p),
        }
    }
    if problems.is_empty() {
        Ok(cases)
    } else {
        Err(Error::Corpus { problems })
    }
}

fn start_of(path: &Path) -> Location {
    Location {
        file: path.to_path_buf(),
        line: 1,
        column: 1,
    }
}

/// The case name of `log` relative to `dir`: its relative path without the log suffix.
fn case_name(log: &Path, dir: &Path) -> String {
    let rel = log.strip_prefix(dir).unwrap_or(log).to_string_lossy();
    let rel = rel.replace('\\', "/");
    let name = rel.rsplit('/').next().unwrap_or(&rel);
    match log_suffix(name) {
        Some(suffix) => rel[..rel.len() - suffix.len()].to_string(),
        None => rel.to_string(),
    }
}

impl Case {
    /// Builds a case from a sidecar's text (already read); problems name `sidecar:line:col`.
    pub fn from_sidecar_text(log: &Path, sidecar: &Path, text: &str) -> Result<Case> {
        let dir = log.parent().unwrap_or(Path::new(""));
        Case::parse(log, sidecar, text, dir).map_err(|p| Error::Corpus { problems: vec![p] })
    }

    fn parse(log: &Path, sidecar: &Path, text: &str, dir: &Path) -> Result<Case, Problem> {
        let raw: RawExpectation =
            toml::from_str(text).map_err(|e| toml_problem(sidecar, text, &e))?;
        let clean = match &raw.expect {
            None => false,
            Some(e) if e.get_ref() == "clean" => true,
            Some(e) => {
                return Err(Problem {
                    location: location(sidecar, text, e.span().start),
                    message: "expect must be \"clean\" (or absent for a failing log)".into(),
                })
            }
        };
        let root_cause = match (raw.root_cause, clean) {
            (Some(r), false) => {
                let span = r.span();
                let root_cause = r.into_inner();
                if root_cause.trim().is_empty() || root_cause.contains('\n') {
                    return Err(Problem {
                        location: location(sidecar, text, span.start),
                        message: "root_cause must be a non-empty part of one line".into(),
                    });
                }
                root_cause
            }
            (None, false) => {
                return Err(Problem {
                    location: location(sidecar, text, 0),
                    message: "missing root_cause (or expect = \"clean\" for a healthy log)".into(),
                })
            }
            (Some(r), true) => {
                return Err(Problem {
                    location: location(sidecar, text, r.span().start),
                    message: "a healthy log (expect = \"clean\") has no root_cause".into(),
                })
            }
            (None, true) if raw.signature.is_some() => {
                return Err(Problem {
                    location: location(sidecar, text, 0),
                    message: "a healthy log (expect = \"clean\") has no signature".into(),
                })
            }
            (None, true) => String::new(),
        };
        let outcomes = match raw.outcomes {
            None => Vec::new(),
            Some(o) => {
                let span = o.span();
                let outcomes = o.into_inner();
                let at = || location(sidecar, text, span.start);
                if let Some(bad) = outcomes
                    .iter()
                    .find(|w| !RUN_OUTCOMES.contains(&w.as_str()))
                {
                    return Err(Problem {
                        location: at(),
                        message: format!(
                            "outcomes: {bad:?} is not one of {}",
                            RUN_OUTCOMES.join(", ")
                        ),
                    });
                }
                let failed = outcomes.iter().any(|w| w == "failed");
                if outcomes.is_empty() || clean == failed {
                    return Err(Problem {
                        location: at(),
                        message: if clean {
                            "outcomes: a healthy log (expect = \"clean\") has no failed run, and at least one run".into()
                        } else {
                            "outcomes: a failing log has at least one \"failed\" run".into()
                        },
                    });
                }
                outcomes
            }
        };
        if raw.whole && (raw.lines.is_none() || outcomes.is_empty() || raw.fragment) {
            return Err(Problem {
                location: location(sidecar, text, 0),
                message:
                    "a whole log (whole = true) states `lines` and `outcomes` and is not a fragment"
                        .into(),
            });
        }
        Ok(Case {
            name: case_name(log, dir),
            log: log.to_path_buf(),
            sidecar: sidecar.to_path_buf(),
            expect: Expectation {
                root_cause,
                clean,
                decoys: raw.decoys,
                run: raw.run,
                survivable: raw.survivable,
                signature: raw.signature,
                category: raw.category,
                source: raw.source,
                fragment: raw.fragment,
                notes: raw.notes,
                whole: raw.whole,
                lines: raw.lines,
                outcomes,
                baseline: raw.baseline,
                signatures_added: raw.signatures_added,
            },
        })
    }

    /// Whether `report`'s first finding is the expected one: its line holds `root_cause` and,
    /// when the sidecar names a signature, the finding is that signature's.
    ///
    /// A healthy log passes when no finding is a failure. A failing log also needs the first
    /// finding to hold no decoy, to be in the expected run, and to be survivable exactly when
    /// the sidecar says so.
    pub fn check(&self, report: &Report) -> Outcome {
        if let Some(e) = &report.error {
            return Outcome::Fail(format!("the input could not be read: {e}"));
        }
        if self.expect.clean {
            return match report.findings.iter().find(|f| f.is_failure()) {
                None => Outcome::Pass,
                Some(f) => Outcome::Fail(format!(
                    "false alarm on a healthy log: line {} ({}, {}): {:?}",
                    f.line,
                    f.role.as_str(),
                    f.signature.as_deref().unwrap_or("no signature"),
                    f.text
                )),
            };
        }
        let Some(first) = report.findings.first() else {
            return Outcome::Fail(format!(
                "no finding; expected a line containing {:?}",
                self.expect.root_cause
            ));
        };
        let found = || {
            format!(
                "the first finding is line {} ({}, {}): {:?}",
                first.line,
                first.role.as_str(),
                first.signature.as_deref().unwrap_or("no signature"),
                first.text
            )
        };
        if !matches!(first.role, FindingRole::Cause | FindingRole::Unclassified) {
            return Outcome::Fail(format!(
                "expected a cause; {} (the log has no cause finding)",
                found()
            ));
        }
        if !first.text.contains(&self.expect.root_cause) {
            return Outcome::Fail(format!(
                "expected a line containing {:?}; {}",
                self.expect.root_cause,
                found()
            ));
        }
        if let Some(d) = self
            .expect
            .decoys
            .iter()
            .find(|d| first.text.contains(d.as_str()))
        {
            return Outcome::Fail(format!("the first finding is a decoy ({d:?}); {}", found()));
        }
        if first.survivable != self.expect.survivable {
            return Outcome::Fail(format!(
                "expected a {} finding; {}",
                if self.expect.survivable {
                    "survivable"
                } else {
                    "fatal"
                },
                found()
            ));
        }
        if let Some(run) = self.expect.run {
            if first.run != run {
                return Outcome::Fail(format!(
                    "expected the cause in run {run}, found run {}; {}",
                    first.run,
                    found()
                ));
            }
        }
        match &self.expect.signature {
            Some(id) if first.signature.as_deref() != Some(id.as_str()) => {
                Outcome::Fail(format!("expected signature {id}; {}", found()))
            }
            _ => Outcome::Pass,
        }
    }
}

/// A cause or symptom signature that is not survivable and matched a line of a healthy log
/// (the precision lint: such a signature would call a healthy run failed, or rank a line it
/// survives as a cause).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Imprecision {
    /// The signature id.
    pub signature: String,
    /// The healthy case (its name relative to the corpus).
    pub case: String,
    /// The 1-based line it matched.
    pub line: u64,
    /// The line (lossy UTF-8, cut to 200 bytes).
    pub text: String,
}

/// The precision lint: every line of every healthy case (`expect = "clean"`) that a cause or
/// symptom signature with `survivable = false` matches, unless the signature's id is in
/// `healthy_ok` (signatures that say why they may, format 3's `healthy_ok`). Lines are matched
/// by every signature, not only the one that wins the line.
pub fn precision_lint(
    db: &crate::Database,
    healthy_ok: &std::collections::HashSet<String>,
    cases: &[Case],
) -> Result<Vec<Imprecision>> {
    use faultline_db::Role;
    let mut out = Vec::new();
    for case in cases.iter().filter(|c| c.expect.clean) {
        let buf = read_decoded(&case.log).map_err(|e| io_error(&case.log, e))?;
        let opts = crate::scan::ScanOptions {
            threads: 1,
            ..crate::scan::ScanOptions::default()
        };
        crate::scan::scan_slice(db, &buf, &opts, &mut |hit| {
            for &s in &hit.matched.signatures {
                let sig = db.signature(s);
                if matches!(sig.role, Role::Cause | Role::Symptom)
                    && !sig.survivable
                    && !healthy_ok.contains(&sig.id)
                {
                    let text = String::from_utf8_lossy(&hit.text);
                    let cut = text.char_indices().nth(200).map_or(text.len(), |(i, _)| i);
                    out.push(Imprecision {
                        signature: sig.id.clone(),
                        case: case.name.clone(),
                        line: hit.line,
                        text: text[..cut].to_string(),
                    });
                }
            }
        });
    }
    Ok(out)
}

/// Reads a whole log, decompressing `.gz`/`.zst` (detected by magic bytes).
pub(crate) fn read_decoded(path: &Path) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let raw = std::fs::read(path)?;
    let mut out = Vec::new();
    match crate::scan::InputKind::sniff(&raw) {
        crate::scan::InputKind::Plain => return Ok(raw),
        kind => {
            crate::scan::decode(kind, Box::new(std::io::Cursor::new(raw)))?.read_to_end(&mut out)?
        }
    };
    Ok(out)
}

#[cfg(test)]
mod tests;
