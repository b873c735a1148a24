//! Reports: plain data (serde) and the renderers that print them for people and programs.

mod human;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use faultline_db::Severity;
pub use human::{render_human, render_human_with_hints, HumanHints};

/// The JSON schema version; bumped when a field changes meaning or disappears.
pub const SCHEMA_VERSION: u32 = 3;

/// Which of a sweep's three counts an input is in: the exit status `faultline scan` gives it
/// alone. Every count of many inputs (`--summary`, `faultline summary`, Python's `summary`,
/// `faultline.ray`, the Spark recipe) puts each input in exactly one bucket with this rule.
///
/// ```
/// use faultline::Bucket;
///
/// assert_eq!(Bucket::of(false, true), Bucket::Diagnosed);
/// assert_eq!(Bucket::of(true, true).exit_status(), 2);
/// assert_eq!(Bucket::Clean.worst(Bucket::Diagnosed), Bucket::Diagnosed);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Bucket {
    /// Exit status 0: some run failed (a fatal cause or unclassified finding), whether or not
    /// the input ended early.
    Diagnosed,
    /// Exit status 1: no error and no failure found.
    Clean,
    /// Exit status 2: an error (the input could not be read, or not to its end), whatever was
    /// found before it.
    Errored,
}

impl Bucket {
    /// The bucket of an input with an error or not, and a failed run or not (the report's
    /// `error` and `failed`).
    pub fn of(error: bool, failed: bool) -> Bucket {
        match (error, failed) {
            (true, _) => Bucket::Errored,
            (false, true) => Bucket::Diagnosed,
            (false, false) => Bucket::Clean,
        }
    }

    /// The exit status of an input in this bucket (grep's rule).
    pub fn exit_status(self) -> u8 {
        match self {
            Bucket::Diagnosed => 0,
            Bucket::Clean => 1,
            Bucket::Errored => 2,
        }
    }

    /// The bucket of two inputs together, as one exit status says it: errored if either is,
    /// else diagnosed if either is, else clean.
    pub fn worst(self, other: Bucket) -> Bucket {
        match (self, other) {
            (Bucket::Errored, _) | (_, Bucket::Errored) => Bucket::Errored,
            (Bucket::Diagnosed, _) | (_, Bucket::Diagnosed) => Bucket::Diagnosed,
            _ => Bucket::Clean,
        }
    }

    /// Its name: `diagnosed`, `clean` or `errored`.
    pub fn as_str(self) -> &'static str {
        match self {
            Bucket::Diagnosed => "diagnosed",
            Bucket::Clean => "clean",
            Bucket::Errored => "errored",
        }
    }
}

/// What became of a run, judged from its evidence before its lines (see [`RunOutcome`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RunState {
    /// Completion evidence (a trainer's final summary, every worker exited 0, a build's last
    /// target) with no fatal finding after it.
    Completed,
    /// Stop evidence (SIGTERM/SIGINT received, shutdown requested) with no fatal finding before
    /// it: what failed after the request is shutdown noise.
    Stopped,
    /// Its last evidence is progress (requests served, steps advancing): still going when the
    /// log ends.
    Running,
    /// It has a fatal finding.
    Failed,
    /// No evidence either way.
    Unknown,
}

impl RunState {
    /// The lowercase name used in reports and sidecars.
    pub fn as_str(self) -> &'static str {
        match self {
            RunState::Completed => "completed",
            RunState::Stopped => "stopped",
            RunState::Running => "running",
            RunState::Failed => "failed",
            RunState::Unknown => "unknown",
        }
    }
}

/// One run's outcome: the report's `run_outcomes` holds one per run, in run order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunOutcome {
    /// The run, 1-based.
    pub run: u32,
    /// What became of it.
    pub outcome: RunState,
    /// The line that decided it: a failed run's first-ranked fatal finding, the completion or
    /// stop evidence, a running run's last progress line; none for an unknown outcome.
    pub line: Option<u64>,
}

/// What kind of finding this is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FindingRole {
    /// A known root cause (a signature with role `cause`).
    Cause,
    /// A failure no signature knows (a traceback's end, a stand-in error line).
    Unclassified,
    /// A consequence of some cause.
    Symptom,
    /// Fatal-looking text that is not a failure.
    Noise,
}

impl FindingRole {
    /// The lowercase name used in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            FindingRole::Cause => "cause",
            FindingRole::Unclassified => "unclassified",
            FindingRole::Symptom => "symptom",
            FindingRole::Noise => "noise",
        }
    }
}

/// The database a report was produced with.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct DatabaseRef {
    /// The database's name.
    pub name: String,
    /// Its version.
    pub version: String,
    /// Its content hash.
    pub hash: String,
}

/// One finding: a message (folded over processes and repeats) and what it means.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Finding {
    /// 1-based position in rank order.
    pub rank: usize,
    /// The signature id, or null for an unclassified finding.
    pub signature: Option<String>,
    /// Cause, unclassified, symptom or noise.
    pub role: FindingRole,
    /// From the signature (`fatal`, `error`, `warning` or `info` in JSON); `error` for an
    /// unclassified finding.
    pub severity: Severity,
    /// The signature's category (`unclassified` for unclassified findings).
    pub category: String,
    /// The signature's title, or what the unclassified line is.
    pub title: String,
    /// First occurrence, 1-based.
    pub line: u64,
    /// Last occurrence, 1-based.
    pub last_line: u64,
    /// Byte offset of `line`.
    pub offset: u64,
    /// The first occurrence's line (lossy UTF-8).
    pub text: String,
    /// Whether `text` was cut at the line cap ([`crate::ScanOptions::max_line_bytes`]).
    pub text_truncated: bool,
    /// How many lines folded into this finding.
    pub count: u64,
    /// The process tags it came from, in order of first appearance (the first
    /// [`MAX_PROCESSES_LISTED`]).
    pub processes: Vec<String>,
    /// How many distinct processes it came from (exact up to 1024, estimated within about
    /// 2% above).
    #[serde(default)]
    pub process_count: u64,
    /// Whether the process could go on after it: a survivable signature, or an unclassified
    /// exception after which its process went on. Survivable failures rank below fatal ones
    /// and do not make a log failed.
    #[serde(default)]
    pub survivable: bool,
    /// Whether the failure ended its process: a terminal marker followed it, or its process
    /// printed nothing more.
    #[serde(default)]
    pub ended_process: bool,
    /// The 1-based run of the input it belongs to (see [`Report::runs`]).
    #[serde(default = "one")]
    pub run: u32,
    /// The first occurrence's timestamp as the line prints it, if it has one.
    #[serde(default)]
    pub timestamp: Option<String>,
    /// An unclassified guess in an input that ended early: the cause may be past the cut.
    #[serde(default)]
    pub tentative: bool,
    /// Named captures of the first occurrence.
    pub captures: BTreeMap<String, String>,
    /// What to do, with captures filled in (null for unclassified findings).
    pub remediation: Option<String>,
    /// The trimmed traceback that ends in this line, if it is an exception line.
    pub traceback: Option<Vec<String>>,
    /// Why the finding stands where it does in the ranking.
    pub why: String,
    /// Whether its first line's template is in the baseline (`--baseline`): the good run
    /// printed it too. Present on every finding when the report has a baseline.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub in_baseline: Option<bool>,
    /// The job input it came from: present only in a job's report (`--job`,
    /// [`crate::analyze_job`]), where findings come from many inputs.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub input: Option<String>,
}

fn one() -> u32 {
    1
}

/// Process tags listed per finding; `process_count` counts them all.
pub const MAX_PROCESSES_LISTED: usize = 64;

impl Finding {
    /// Whether this finding is a failure: a cause or unclassified finding that is not
    /// survivable.
    pub fn is_failure(&self) -> bool {
        matches!(self.role, FindingRole::Cause | FindingRole::Unclassified) && !self.survivable
    }

    /// Whether this is a survivable cause or unclassified finding (shown under "Survived").
    pub fn is_survived(&self) -> bool {
        matches!(self.role, FindingRole::Cause | FindingRole::Unclassified) && self.survivable
    }
}

/// One matched line, kept when [`crate::AnalyzeOptions::all`] is set.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MatchedLine {
    /// 1-based line number.
    pub line: u64,
    /// Byte offset of the line.
    pub offset: u64,
    /// The signature that decided the line's role (the highest priority one).
    pub signature: Option<String>,
    /// The role the line counted for.
    pub role: FindingRole,
    /// Other signatures that matched the line but were outranked by priority.
    pub outranked: Vec<String>,
    /// The rank of the finding the line folded into.
    pub finding: Option<usize>,
}

/// Counts of matched lines by role.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Counts {
    /// Lines matched by at least one signature.
    pub matched_lines: u64,
    /// Lines matched by a cause signature.
    pub cause_lines: u64,
    /// Lines matched by a symptom signature.
    pub symptom_lines: u64,
    /// Lines matched by a noise signature.
    pub noise_lines: u64,
    /// Lines that no signature matched but that the analysis reported as unclassified.
    pub unclassified_lines: u64,
    /// ERROR-level or exception lines that no signature matched and that became no finding.
    pub unmatched_error_lines: u64,
    /// Noise findings' distinct processes.
    pub noise_processes: u64,
    /// Lines of run evidence (start, progress, completion, stop signatures).
    #[serde(default)]
    pub evidence_lines: u64,
    /// ERROR-level or exception lines that became no finding and whose template is in the
    /// baseline (`--baseline`); `unmatched_error_lines` counts only the new ones.
    #[serde(default)]
    pub baseline_lines: u64,
}

/// The baselines a report was made against (`--baseline GOOD`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct BaselineInfo {
    /// The good runs' inputs, in the order given.
    pub inputs: Vec<String>,
    /// Distinct line templates held.
    pub templates: u64,
    /// Templates not kept past `--baseline-max-templates`.
    pub templates_dropped: u64,
}

/// Where a failure's time came from (see [`FirstFailure::timestamp_from`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TimeFrom {
    /// The failure's own line printed it.
    Line,
    /// The last timestamp printed before the failure in the same input.
    Before,
    /// The input's modification time (its lines printed none before the failure).
    Mtime,
}

/// Which rank or node failed first, in a report that spans several ranks or nodes: it
/// describes `findings[0]` (see [`Report::first_failure`]).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FirstFailure {
    /// The input the failure is in.
    pub input: String,
    /// The process tag of its line (`rank5`, `task 3`, `pid=123, ip=10.0.0.1`), if any.
    pub process: Option<String>,
    /// The node: from the line's prefix (Ray's `ip=`, srun `--label`'s task), else the
    /// input's path under the job's root (its directories, else its file name without
    /// extension); null when neither tells.
    pub node: Option<String>,
    /// The line, 1-based, in `input`.
    pub line: u64,
    /// The failure's time as printed (or the input's modification time, local); null when
    /// untimed.
    pub timestamp: Option<String>,
    /// Where `timestamp` came from: `line`, `before` (the last timestamp before the failure
    /// in its input), `mtime`; null when untimed.
    pub timestamp_from: Option<TimeFrom>,
    /// Whether this failure itself waits on a peer (a `waits-on-peer` signature): then every
    /// failure does, and no rank shows its own failure.
    pub waits_on_peer: bool,
    /// How many other ranks or nodes (processes, or inputs without process tags) have a
    /// failure that waits on a peer.
    pub others_waiting: u64,
}

/// One input of a job's report (`--job`): what a report of its own would have said of it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobInput {
    /// The path (lossy UTF-8), as [`Report::input`].
    pub input: String,
    /// Its size in bytes (decompressed).
    pub bytes: u64,
    /// Its lines.
    pub lines: u64,
    /// Its runs.
    pub runs: u32,
    /// Its runs' outcomes.
    pub run_outcomes: Vec<RunOutcome>,
    /// Why it could not be read to its end, if it could not.
    pub error: Option<String>,
    /// Whether it ended early (see [`Report::ended_early`]).
    pub ended_early: bool,
}

/// The report for one input.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Report {
    /// The JSON schema version ([`SCHEMA_VERSION`]).
    pub schema_version: u32,
    /// The path (lossy UTF-8: U+FFFD for a byte that is not UTF-8), or `-` for stdin.
    pub input: String,
    /// Only for a path that is not UTF-8: the path with each byte that is not UTF-8 written
    /// `\xNN` and each backslash `\\` ([`raw_path`]), so that two such paths never look
    /// the same.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub input_raw: Option<String>,
    /// A job's inputs, in path order (present only in a job's report: `--job`); `input` is
    /// then the first path argument, `bytes` and `lines` are their sums.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub inputs: Option<Vec<JobInput>>,
    /// The database the report was made with.
    pub database: DatabaseRef,
    /// A one-line error message if the input could not be read to its end.
    pub error: Option<String>,
    /// Whether the input held NUL bytes (it is scanned all the same).
    pub binary: bool,
    /// Size of the input in bytes (decompressed).
    pub bytes: u64,
    /// Lines, as `wc -l` counts them, plus a final unterminated line.
    pub lines: u64,
    /// Findings in rank order: the first is the root cause.
    pub findings: Vec<Finding>,
    /// Runs recognised in the input (start-up banners, timestamps stepping back); at least 1
    /// when the input has lines.
    #[serde(default)]
    pub runs: u32,
    /// Whether some run failed: a fatal cause or fatal unclassified finding exists.
    #[serde(default)]
    pub failed: bool,
    /// Each run's outcome, in run order: exactly `runs` entries (none for an empty input).
    #[serde(default)]
    pub run_outcomes: Vec<RunOutcome>,
    /// Findings left out over [`crate::AnalyzeOptions::max_findings`] (the lowest-ranked first).
    #[serde(default)]
    pub findings_omitted: u64,
    /// Whether the input ended early: a read or decompression error after some data, or
    /// the end of input inside an open traceback.
    #[serde(default)]
    pub ended_early: bool,
    /// Matched lines by role.
    pub counts: Counts,
    /// The baselines the findings were compared with; null without `--baseline`.
    #[serde(default)]
    pub baseline: Option<BaselineInfo>,
    /// Which rank or node failed first: null unless the report spans several ranks or nodes
    /// (a job's inputs, or a log's rank or node prefixes) and `findings[0]` is a fatal
    /// failure. The root cause is then the first failure in time that does not wait on a
    /// peer (or the earliest, when every failure waits).
    #[serde(default)]
    pub first_failure: Option<FirstFailure>,
    /// Every matched line (only with [`crate::AnalyzeOptions::all`]).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub matches: Option<Vec<MatchedLine>>,
}

/// For a path that is not valid UTF-8, its exact bytes as text: valid UTF-8 kept, a backslash
/// written `\\`, each other byte `\xNN` (`a\xff.log`). `None` for a UTF-8 path, whose
/// `input` is already exact.
pub fn raw_path(path: &std::path::Path) -> Option<String> {
    let bytes = path.as_os_str().as_encoded_bytes();
    if std::str::from_utf8(bytes).is_ok() {
        return None;
    }
    let mut out = String::with_capacity(bytes.len() + 8);
    for chunk in bytes.utf8_chunks() {
        for c in chunk.valid().chars() {
            if c == '\\' {
                out.push_str("\\\\");
            } else {
                out.push(c);
            }
        }
        for b in chunk.invalid() {
            out.push_str(&format!("\\x{b:02x}"));
        }
    }
    Some(out)
}

impl Report {
    /// The name that traces the report back to its file: `input_raw` when the path is not
    /// UTF-8, else `input`.
    pub fn input_name(&self) -> &str {
        self.input_raw.as_deref().unwrap_or(&self.input)
    }

    /// Whether the input failed: some run has a fatal (not survivable) cause or unclassified
    /// finding. This decides the exit status (0 when some input failed).
    pub fn diagnosed(&self) -> bool {
        self.findings.iter().any(Finding::is_failure)
    }

    /// The same as [`Report::diagnosed`].
    pub fn failed(&self) -> bool {
        self.diagnosed()
    }

    /// The input's bucket in a count of many: its exit status alone ([`Bucket::of`] its
    /// `error` and `failed`).
    pub fn bucket(&self) -> Bucket {
        Bucket::of(self.error.is_some(), self.failed)
    }

    /// The first finding, the root cause, if the input failed.
    pub fn root_cause(&self) -> Option<&Finding> {
        self.findings.first().filter(|f| f.is_failure())
    }

    /// The report as one line of JSON.
    pub fn to_json_line(&self) -> String {
        serde_json::to_string(self).unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}"))
    }

    /// Writes the report as one line of JSON, newline included, as it is serialised: no
    /// copy of the whole line is held (a report's texts can be many long lines).
    pub fn write_json_line(&self, out: &mut dyn std::io::Write) -> std::io::Result<()> {
        serde_json::to_writer(&mut *out, self)?;
        out.write_all(b"\n")
    }
}
