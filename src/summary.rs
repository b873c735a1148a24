//! Sweep summaries: per signature, how many inputs it is the root cause of, its total hits,
//! and the first and last input it was found in; plus the inputs without a diagnosis and the
//! inputs that failed. Built from reports or from the JSON lines of `scan --format json`, in
//! any order and any split (shards), with the same result: inputs are sorted by path first.
//!
//! Every input is in exactly one [`Bucket`], its exit status alone: `diagnosed` (0: some run
//! failed, whether or not the input ended early), `clean` (1: no error, no failure) or
//! `errored` (2: an error, whatever was found; `errored_diagnosed` of them named a root cause).
//! So `diagnosed + clean + errored == inputs`, and `sum(first_findings) == diagnosed +
//! errored_diagnosed`: a signature's `first_findings` counts every input whose root cause it
//! is, as each input's own report says. A JSON line without the report's `failed` (written
//! before it existed) falls back to the first-finding rule: failed when its first finding is
//! a cause or unclassified finding that is not survivable.
//!
//! ```
//! use faultline::Summary;
//!
//! let shard1 = r#"{"input":"b.log","error":null,"binary":false,"bytes":10,"lines":1,"findings":[{"signature":"pytorch.cuda.oom","role":"cause","title":"CUDA out of memory","category":"cuda-oom","count":2}]}"#;
//! let shard2 = r#"{"input":"a.log","error":null,"binary":false,"bytes":5,"lines":1,"findings":[]}"#;
//! let mut s = Summary::builder();
//! s.add_json_lines("shard1.jsonl", shard1)?;
//! s.add_json_lines("shard2.jsonl", shard2)?;
//! let s = s.finish();
//! assert_eq!((s.inputs, s.diagnosed, s.undiagnosed.len()), (2, 1, 1));
//! assert_eq!(s.signatures[0].hits, 2);
//! # Ok::<(), faultline::Error>(())
//! ```

use std::collections::{BTreeMap, HashSet};
use std::fmt::Write;

use crate::sanitize::terminal_safe as safe;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::report::{Bucket, DatabaseRef, FindingRole, Report};
use faultline_db::{Location, Problem};

/// The summary's JSON schema version: 2 since the counts are by exit status (`clean`,
/// `errored`, `errored_diagnosed` added, `diagnosed` counting inputs that ended early too);
/// a summary without `schema_version` is version 1.
pub const SUMMARY_SCHEMA_VERSION: u32 = 2;

/// The row key used for findings without a signature (role `unclassified`).
pub const UNCLASSIFIED: &str = "(unclassified)";

/// One signature's line of the summary.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SignatureRow {
    /// The signature id, or [`UNCLASSIFIED`].
    pub signature: String,
    /// The signature's category.
    pub category: String,
    /// The signature's title.
    pub title: String,
    /// Inputs whose root cause (first finding) this signature is.
    pub first_findings: u64,
    /// Inputs it was found in, in any role.
    pub inputs: u64,
    /// Matched lines over all inputs (the findings' `count`s; saturates at `u64::MAX`).
    pub hits: u64,
    /// The first and last input (by path) it was found in.
    pub first_input: String,
    /// The last input (by path) it was found in.
    pub last_input: String,
}

/// An input that could not be read to its end.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FailedInput {
    /// The input's path.
    pub input: String,
    /// The one-line error.
    pub error: String,
    /// Whether findings before the error still named a root cause.
    pub diagnosed: bool,
}

/// The summary of a sweep.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Summary {
    /// The JSON schema version ([`SUMMARY_SCHEMA_VERSION`]; 1 when absent).
    #[serde(default = "version_1")]
    pub schema_version: u32,
    /// Inputs summarised.
    pub inputs: u64,
    /// Inputs in [`Bucket::Diagnosed`] (exit status 0): some run failed.
    pub diagnosed: u64,
    /// Inputs in [`Bucket::Clean`] (exit status 1), listed in `undiagnosed`.
    #[serde(default)]
    pub clean: u64,
    /// Inputs in [`Bucket::Errored`] (exit status 2), listed in `errors`.
    #[serde(default)]
    pub errored: u64,
    /// Errored inputs whose findings before the error named a root cause.
    #[serde(default)]
    pub errored_diagnosed: u64,
    /// The same as `errored` (the key kept from schema version 1).
    pub failed: u64,
    /// Inputs that held NUL bytes.
    pub binary: u64,
    /// Bytes over all inputs (saturates at `u64::MAX`).
    pub bytes: u64,
    /// Lines over all inputs (saturates at `u64::MAX`).
    pub lines: u64,
    /// The databases the reports were made with (more than one means mixed outputs).
    pub databases: Vec<DatabaseRef>,
    /// Sorted by `first_findings`, then `hits` (both descending), then id.
    pub signatures: Vec<SignatureRow>,
    /// The clean inputs, sorted.
    pub undiagnosed: Vec<String>,
    /// The errored inputs, sorted.
    pub errors: Vec<FailedInput>,
    /// Inputs given more than once (the same shard merged twice, a file named twice): each
    /// is counted once, from its first report.
    #[serde(default)]
    pub repeated: Vec<RepeatedInput>,
    /// Names that two distinct inputs share: a UTF-8 path holding a literal `\xNN` (or `\\`)
    /// shown as `input`, and a path that is not UTF-8 whose `input_raw` reads the same
    /// (`job\xff.log`). Such inputs are never merged (each is counted and listed on its
    /// own), but the summary cannot tell them apart by name: `faultline summary` and
    /// `scan --summary` refuse it (exit 2). Sorted.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ambiguous: Vec<String>,
}

fn version_1() -> u32 {
    1
}

/// An input whose report was given more than once.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RepeatedInput {
    /// The input's path.
    pub input: String,
    /// Where each report came from (`FILE:LINE` for JSON lines), in the order given.
    pub from: Vec<String>,
}

/// The parts of a JSON report a summary needs (other fields are ignored, so newer and older
/// schema versions merge).
#[derive(Deserialize)]
struct SlimReport {
    input: String,
    /// The exact path of a file whose name is not UTF-8 (`\xNN` escapes); it replaces
    /// `input` as the input's name, so two such files never merge.
    #[serde(default)]
    input_raw: Option<String>,
    #[serde(default)]
    database: Option<DatabaseRef>,
    #[serde(default)]
    error: Option<String>,
    #[serde(default)]
    binary: bool,
    #[serde(default)]
    bytes: u64,
    #[serde(default)]
    lines: u64,
    findings: Vec<SlimFinding>,
    /// Whether some run failed; absent from JSON written before the field existed (then the
    /// first finding decides, [`SlimReport::failed`]).
    #[serde(default)]
    failed: Option<bool>,
    /// Where the report came from (`FILE:LINE`), for warnings about repeated inputs.
    #[serde(skip)]
    origin: String,
    /// What identifies the input, unambiguously: `input_raw` for a path that is not UTF-8
    /// (its backslashes already doubled), else `input` with each backslash doubled, so that
    /// no UTF-8 name can read as another path's `\xNN` escapes. `input` (after
    /// [`SummaryBuilder::add_json_lines`], the name shown) is a function of it.
    #[serde(skip)]
    key: String,
}

/// The identity of an input named `input`, with `input_raw` if its path is not UTF-8 (see
/// `SlimReport::key`).
fn input_key(input: &str, input_raw: Option<&str>) -> String {
    match input_raw {
        Some(raw) => raw.to_string(),
        None => input.replace('\\', "\\\\"),
    }
}

#[derive(Deserialize)]
struct SlimFinding {
    signature: Option<String>,
    role: FindingRole,
    #[serde(default)]
    title: String,
    #[serde(default)]
    category: String,
    #[serde(default)]
    count: u64,
    #[serde(default)]
    survivable: bool,
}

impl From<&Report> for SlimReport {
    fn from(r: &Report) -> SlimReport {
        SlimReport {
            input: r.input_name().to_string(),
            key: input_key(&r.input, r.input_raw.as_deref()),
            input_raw: None,
            database: Some(r.database.clone()),
            error: r.error.clone(),
            binary: r.binary,
            bytes: r.bytes,
            lines: r.lines,
            failed: Some(r.failed),
            findings: r
                .findings
                .iter()
                .map(|f| SlimFinding {
                    signature: f.signature.clone(),
                    role: f.role,
                    title: f.title.clone(),
                    category: f.category.clone(),
                    count: f.count,
                    survivable: f.survivable,
                })
                .collect(),
            origin: r.input.clone(),
        }
    }
}

impl SlimFinding {
    /// A cause or unclassified finding that is not survivable.
    fn is_failure(&self) -> bool {
        matches!(self.role, FindingRole::Cause | FindingRole::Unclassified) && !self.survivable
    }
}

impl SlimReport {
    /// Whether some run failed: the report's `failed`, else (older JSON) whether its first
    /// finding is a failure.
    fn failed(&self) -> bool {
        self.failed
            .unwrap_or_else(|| self.findings.first().is_some_and(SlimFinding::is_failure))
    }

    /// Its bucket, by its exit status alone.
    fn bucket(&self) -> Bucket {
        Bucket::of(self.error.is_some(), self.failed())
    }

    /// The root cause: the first finding, when it is a failure.
    fn root(&self) -> Option<&SlimFinding> {
        self.findings.first().filter(|f| f.is_failure())
    }
}

/// Collects reports in any order; [`SummaryBuilder::finish`] sorts and counts.
#[derive(Default)]
pub struct SummaryBuilder {
    reports: Vec<SlimReport>,
}

impl std::fmt::Debug for SummaryBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SummaryBuilder")
            .field("reports", &self.reports.len())
            .finish()
    }
}

impl Summary {
    /// An empty builder.
    pub fn builder() -> SummaryBuilder {
        SummaryBuilder::default()
    }
}

fn key(f: &SlimFinding) -> String {
    f.signature.clone().unwrap_or_else(|| UNCLASSIFIED.into())
}

impl SummaryBuilder {
    /// Adds one report.
    pub fn add(&mut self, report: &Report) {
        self.reports.push(SlimReport::from(report));
    }

    /// Adds the JSON lines of `text` (`scan --format json` output); blank lines are skipped.
    /// A line that is not a report is an error naming `file:line:column`.
    pub fn add_json_lines(&mut self, file: &str, text: &str) -> Result<()> {
        for (i, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let mut r: SlimReport = serde_json::from_str(line).map_err(|e| {
                Error::Report(Problem {
                    location: Location {
                        file: file.into(),
                        line: i + 1,
                        column: e.column(),
                    },
                    message: format!(
                        "not a faultline JSON report: {}",
                        e.to_string()
                            .rsplit_once(" at line ")
                            .map_or(e.to_string(), |(m, _)| m.to_string())
                    ),
                })
            })?;
            r.key = input_key(&r.input, r.input_raw.as_deref());
            if let Some(raw) = r.input_raw.take() {
                r.input = raw;
            }
            r.origin = format!("{file}:{}", i + 1);
            self.reports.push(r);
        }
        Ok(())
    }

    /// Sorts the inputs by path and builds the summary.
    pub fn finish(mut self) -> Summary {
        // Stable: of the reports of one input, the first given is kept. Sorted by the name
        // shown, then by identity: reports of one input are neighbours (one key, one name),
        // and so are distinct inputs that share a name.
        self.reports
            .sort_by(|a, b| a.input.cmp(&b.input).then_with(|| a.key.cmp(&b.key)));
        let mut repeated: Vec<RepeatedInput> = Vec::new();
        // The key of the input `repeated`'s last entry is about.
        let mut last_key: Option<String> = None;
        self.reports.dedup_by(|later, first| {
            if later.key != first.key {
                return false;
            }
            match repeated.last_mut() {
                Some(r) if last_key.as_deref() == Some(first.key.as_str()) => {
                    r.from.push(later.origin.clone())
                }
                _ => {
                    last_key = Some(first.key.clone());
                    repeated.push(RepeatedInput {
                        input: first.input.clone(),
                        from: vec![first.origin.clone(), later.origin.clone()],
                    })
                }
            }
            true
        });
        let mut ambiguous: Vec<String> = Vec::new();
        for pair in self.reports.windows(2) {
            if pair[0].input == pair[1].input && ambiguous.last() != Some(&pair[0].input) {
                ambiguous.push(pair[0].input.clone());
            }
        }
        let mut rows: BTreeMap<String, SignatureRow> = BTreeMap::new();
        let mut s = Summary {
            schema_version: SUMMARY_SCHEMA_VERSION,
            inputs: 0,
            diagnosed: 0,
            clean: 0,
            errored: 0,
            errored_diagnosed: 0,
            failed: 0,
            binary: 0,
            bytes: 0,
            lines: 0,
            databases: Vec::new(),
            signatures: Vec::new(),
            undiagnosed: Vec::new(),
            errors: Vec::new(),
            repeated,
            ambiguous,
        };
        let mut databases_seen: HashSet<&DatabaseRef> = HashSet::new();
        for r in &self.reports {
            // Reports from outside can claim any size: the totals saturate at u64::MAX
            // (never wrap, never panic in a checked build).
            s.inputs += 1;
            s.bytes = s.bytes.saturating_add(r.bytes);
            s.lines = s.lines.saturating_add(r.lines);
            s.binary += u64::from(r.binary);
            // A set beside the list (first seen first): searching the list for each report
            // would be quadratic in distinct databases (80k reports: 29.5 s).
            if let Some(db) = &r.database {
                if databases_seen.insert(db) {
                    s.databases.push(db.clone());
                }
            }
            let root = r.root();
            let mut seen: Vec<String> = Vec::new();
            for f in &r.findings {
                let k = key(f);
                let row = rows.entry(k.clone()).or_insert_with(|| SignatureRow {
                    signature: k.clone(),
                    category: f.category.clone(),
                    title: if f.signature.is_some() {
                        f.title.clone()
                    } else {
                        "no known signature".into()
                    },
                    first_findings: 0,
                    inputs: 0,
                    hits: 0,
                    first_input: r.input.clone(),
                    last_input: String::new(),
                });
                row.hits = row.hits.saturating_add(f.count);
                row.last_input.clone_from(&r.input);
                if !seen.contains(&k) {
                    row.inputs += 1;
                    seen.push(k);
                }
            }
            if let Some(row) = root.and_then(|f| rows.get_mut(&key(f))) {
                row.first_findings += 1;
            }
            match (r.bucket(), &r.error) {
                (Bucket::Errored, Some(e)) => {
                    s.errored += 1;
                    s.errored_diagnosed += u64::from(root.is_some());
                    s.errors.push(FailedInput {
                        input: r.input.clone(),
                        error: e.clone(),
                        diagnosed: root.is_some(),
                    });
                }
                (Bucket::Diagnosed, _) => s.diagnosed += 1,
                _ => {
                    s.clean += 1;
                    s.undiagnosed.push(r.input.clone());
                }
            }
        }
        s.failed = s.errored;
        s.signatures = rows.into_values().collect();
        s.signatures.sort_by(|a, b| {
            b.first_findings
                .cmp(&a.first_findings)
                .then(b.hits.cmp(&a.hits))
                .then_with(|| a.signature.cmp(&b.signature))
        });
        s
    }
}

/// Aligns rows into columns, text left-aligned; with `numbers_right`, numbers right-aligned.
pub fn table(rows: &[Vec<String>], numbers_right: bool) -> String {
    let cols = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..cols)
        .map(|c| {
            rows.iter()
                .filter_map(|r| r.get(c))
                .map(|v| v.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for r in rows {
        let mut line = String::new();
        for (c, v) in r.iter().enumerate() {
            if c > 0 {
                line.push_str("  ");
            }
            let pad = widths[c] - v.chars().count();
            // Counts are right-aligned, text left-aligned.
            if numbers_right && !v.is_empty() && v.parse::<f64>().is_ok() {
                line.push_str(&" ".repeat(pad));
                line.push_str(v);
            } else {
                line.push_str(v);
                line.push_str(&" ".repeat(pad));
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// One CSV cell (RFC 4180 quoting). A cell that could start a spreadsheet formula (`=`, `+`,
/// `-`, `@`, tab, CR: paths, titles and errors come from logs) gets a leading `'` (OWASP).
/// Every character a terminal would obey (escape sequences, other controls but TAB, bidi
/// overrides: a file name can hold them) is shown escaped, as in the human table: CSV is
/// printed on terminals too.
fn csv_field(v: &str) -> String {
    let v = if v.starts_with(['=', '+', '-', '@', '\t', '\r']) {
        std::borrow::Cow::Owned(format!("'{v}"))
    } else {
        std::borrow::Cow::Borrowed(v)
    };
    let v = match safe(&v) {
        std::borrow::Cow::Borrowed(_) => v,
        std::borrow::Cow::Owned(escaped) => std::borrow::Cow::Owned(escaped),
    };
    if v.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", v.replace('"', "\"\""))
    } else {
        v.to_string()
    }
}

impl Summary {
    /// The clean inputs' count.
    pub fn undiagnosed_count(&self) -> u64 {
        self.undiagnosed.len() as u64
    }

    /// The bucket of all its inputs together: the exit status of the sweep.
    pub fn bucket(&self) -> Bucket {
        if self.errored > 0 || !self.errors.is_empty() {
            Bucket::Errored
        } else if self.diagnosed > 0 {
            Bucket::Diagnosed
        } else {
            Bucket::Clean
        }
    }

    /// The summary as a table for people.
    pub fn render_human(&self) -> String {
        let mut out = format!(
            "{} inputs: {} diagnosed, {} clean, {} errored ({} of them with a root cause); {} bytes, {} lines{}\n",
            self.inputs,
            self.diagnosed,
            self.clean,
            self.errored,
            self.errored_diagnosed,
            self.bytes,
            self.lines,
            if self.binary > 0 {
                format!("; {} binary", self.binary)
            } else {
                String::new()
            }
        );
        for db in &self.databases {
            let _ = writeln!(
                out,
                "database {} {} ({})",
                safe(&db.name),
                safe(&db.version),
                safe(&db.hash)
            );
        }
        if !self.signatures.is_empty() {
            out.push('\n');
            let mut rows = vec![[
                "ROOT CAUSE OF",
                "FOUND IN",
                "HITS",
                "SIGNATURE",
                "CATEGORY",
                "FIRST INPUT",
                "LAST INPUT",
            ]
            .map(String::from)
            .to_vec()];
            for r in &self.signatures {
                rows.push(vec![
                    r.first_findings.to_string(),
                    r.inputs.to_string(),
                    r.hits.to_string(),
                    safe(&r.signature).into_owned(),
                    safe(&r.category).into_owned(),
                    safe(&r.first_input).into_owned(),
                    safe(&r.last_input).into_owned(),
                ]);
            }
            out.push_str(&table(&rows, true));
        }
        if !self.undiagnosed.is_empty() {
            let _ = writeln!(out, "\nClean inputs ({}):", self.undiagnosed.len());
            for i in &self.undiagnosed {
                let _ = writeln!(out, "  {}", safe(i));
            }
        }
        if !self.errors.is_empty() {
            let _ = writeln!(out, "\nInputs with errors ({}):", self.errors.len());
            for e in &self.errors {
                // Error messages usually start with the path already.
                if e.error.starts_with(&format!("{}: ", e.input)) {
                    let _ = writeln!(out, "  {}", safe(&e.error));
                } else {
                    let _ = writeln!(out, "  {}: {}", safe(&e.input), safe(&e.error));
                }
            }
        }
        out
    }

    /// The summary as one CSV table: a `signature` row per signature, then an `undiagnosed`
    /// row and an `error` row per such input (columns that do not apply are empty).
    pub fn render_csv(&self) -> String {
        let mut out = String::from(
            "kind,signature,category,first_findings,inputs,hits,first_input,last_input,input,error\n",
        );
        let mut row = |fields: [&str; 10]| {
            let line: Vec<String> = fields.iter().map(|f| csv_field(f)).collect();
            out.push_str(&line.join(","));
            out.push('\n');
        };
        for r in &self.signatures {
            row([
                "signature",
                &r.signature,
                &r.category,
                &r.first_findings.to_string(),
                &r.inputs.to_string(),
                &r.hits.to_string(),
                &r.first_input,
                &r.last_input,
                "",
                "",
            ]);
        }
        for i in &self.undiagnosed {
            row(["undiagnosed", "", "", "", "", "", "", "", i, ""]);
        }
        for e in &self.errors {
            row(["error", "", "", "", "", "", "", "", &e.input, &e.error]);
        }
        out
    }

    /// The summary as one JSON object (one line).
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}"))
    }
}

#[cfg(test)]
mod tests;
