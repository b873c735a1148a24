//! From hits to a diagnosis: parse each hit line's prefixes, rebuild Python tracebacks per
//! process (chains included), fold the same message from many ranks into one finding, and
//! rank cause above unclassified above symptom above noise.
//!
//! The ranking rules, in order:
//! 1. Role: cause, then unclassified, then symptom, then noise. A noise signature never
//!    becomes a cause; a warning can be a cause when its signature says so.
//! 2. Within a role, an exception that is the innermost of its chain (or no exception at
//!    all) before a wrapper exception of a chain.
//! 3. Then the earliest failure: by timestamp when every finding of the role has one, else
//!    by position in the input.
//!
//! Unclassified findings come from the innermost exception of a failing traceback that no
//! signature knows, or, when there is none and no cause, from the first ERROR-level line.

pub mod line;
mod traceback;

use std::collections::{BTreeMap, HashMap};

use crate::compile::{interpolate, Database, Marker};
use crate::report::{
    Counts, DatabaseRef, Finding, FindingRole, MatchedLine, Report, SCHEMA_VERSION,
};
use crate::scan::{Hit, ScanStats};
use crate::signature::Role;

use traceback::{Event, Tracebacks};

/// Longest message prefix that decides folding: two lines alike for this long are the same
/// message, and a huge line does not cost a second copy of itself as a key.
const FOLD_KEY_BYTES: usize = 4096;

fn key_prefix(message: &str) -> &str {
    let mut end = message.len().min(FOLD_KEY_BYTES);
    while !message.is_char_boundary(end) {
        end -= 1;
    }
    &message[..end]
}

/// Marks a matched line that folded into no finding.
const NO_FINDING: usize = usize::MAX;

/// What the analysis keeps beyond the findings.
#[derive(Clone, Debug, Default)]
pub struct AnalyzeOptions {
    /// Keep every matched line for `--all`.
    pub all: bool,
}

struct Group {
    signature: Option<u32>,
    role: FindingRole,
    title: String,
    severity: String,
    category: String,
    line: u64,
    last_line: u64,
    offset: u64,
    text: String,
    text_truncated: bool,
    count: u64,
    processes: Vec<String>,
    timestamp: Option<i64>,
    captures: Vec<(String, String)>,
    traceback: Option<Vec<String>>,
    /// The position of the first occurrence in its exception chain (0 = innermost).
    chain_pos: Option<u32>,
    is_exception: bool,
}

impl Group {
    /// Counts one more line folded into this group.
    fn repeat(&mut self, line: u64, process: Option<&String>) {
        self.count += 1;
        self.last_line = line;
        if let Some(p) = process {
            if !self.processes.contains(p) {
                self.processes.push(p.clone());
            }
        }
    }
}

/// Consumes hits in input order and produces a [`Report`].
pub struct Analyzer<'db> {
    db: &'db Database,
    opts: AnalyzeOptions,
    groups: Vec<Group>,
    /// Groups by signature (or none) and masked message; noise groups are in `noise_group`.
    index: HashMap<(Option<u32>, String), usize>,
    /// Per noise signature: its one group, once it has one.
    noise_group: Vec<Option<usize>>,
    tracebacks: Tracebacks,
    counts: Counts,
    first_error_line: Option<Group>,
    first_exception_line: Option<Group>,
    matches: Vec<(MatchedLine, usize)>,
}

fn role_of(role: Role) -> FindingRole {
    match role {
        Role::Cause => FindingRole::Cause,
        Role::Symptom => FindingRole::Symptom,
        Role::Noise => FindingRole::Noise,
    }
}

/// The name of the exception on an exception line: `ValueError` in `ValueError: x`.
fn exception_name(message: &str) -> &str {
    let head = message.split(':').next().unwrap_or(message).trim();
    head.rsplit(['.', ' ']).next().unwrap_or(head)
}

impl<'db> Analyzer<'db> {
    /// A new analysis over `db`'s signatures.
    pub fn new(db: &'db Database, opts: AnalyzeOptions) -> Analyzer<'db> {
        Analyzer {
            db,
            opts,
            groups: Vec::new(),
            index: HashMap::new(),
            noise_group: vec![None; db.signatures().len()],
            tracebacks: Tracebacks::default(),
            counts: Counts::default(),
            first_error_line: None,
            first_exception_line: None,
            matches: Vec::new(),
        }
    }

    /// The winning signature of a line: highest priority, then cause before symptom before
    /// noise, then the lowest index.
    fn winner(&self, sigs: &[u32]) -> Option<u32> {
        sigs.iter().copied().min_by_key(|&s| {
            let info = self.db.signature(s);
            (std::cmp::Reverse(info.priority), info.role, s)
        })
    }

    /// Takes the next hit (hits must arrive in input order).
    pub fn push(&mut self, hit: &Hit) {
        let winner = self.winner(&hit.matched.signatures);
        if let Some(w) = winner {
            if hit.matched.markers == 0 && self.db.signature(w).role == Role::Noise {
                if let Some(g) = self.noise_group.get(w as usize).copied().flatten() {
                    // A repeat of a known noise line: only its process and position change.
                    self.counts.matched_lines += 1;
                    self.counts.noise_lines += 1;
                    self.groups[g].repeat(hit.line, line::process(&hit.text).as_ref());
                    self.record(hit, Some(w), FindingRole::Noise, g);
                    return;
                }
            }
        }
        let info = line::parse(&hit.text);
        let process = info.process.clone().unwrap_or_default();
        let event = self.tracebacks.observe(&process, hit, &info);
        if let Some(w) = winner {
            self.counts.matched_lines += 1;
            let sig = self.db.signature(w);
            match sig.role {
                Role::Cause => self.counts.cause_lines += 1,
                Role::Symptom => self.counts.symptom_lines += 1,
                Role::Noise => self.counts.noise_lines += 1,
            }
            let group = self.fold(Some(w), role_of(sig.role), hit, &info, &event);
            self.record(hit, Some(w), role_of(sig.role), group);
            return;
        }
        match &event {
            Event::Exception { chain_pos: 0, .. } => {
                self.counts.unclassified_lines += 1;
                let group = self.fold(None, FindingRole::Unclassified, hit, &info, &event);
                self.record(hit, None, FindingRole::Unclassified, group);
            }
            Event::None if self.fallback_candidate(hit, &info, &process) => {
                self.counts.unmatched_error_lines += 1;
                self.record(hit, None, FindingRole::Unclassified, NO_FINDING);
                let exception = hit.matched.has(Marker::Exception);
                let empty = if exception {
                    self.first_exception_line.is_none()
                } else {
                    self.first_error_line.is_none()
                };
                if empty {
                    let group = self.new_group(None, FindingRole::Unclassified, hit, &info, &event);
                    if exception {
                        self.first_exception_line = Some(group);
                    } else {
                        self.first_error_line = Some(group);
                    }
                }
            }
            _ => {}
        }
    }

    /// Whether a line no signature knows could stand in for the root cause: an exception
    /// line outside a traceback, or an ERROR-level line, that is not a traceback's own text.
    fn fallback_candidate(&self, hit: &Hit, info: &line::LineInfo, process: &str) -> bool {
        let m = &hit.matched;
        (m.has(Marker::Exception) || m.has(Marker::ErrorLevel))
            && !m.has(Marker::Frame)
            && !m.has(Marker::TracebackStart)
            && !self.tracebacks.is_open(process)
            && !info.message.starts_with([' ', '\t'])
            && !info.message.trim().is_empty()
    }

    fn record(&mut self, hit: &Hit, sig: Option<u32>, role: FindingRole, group: usize) {
        if !self.opts.all {
            return;
        }
        let w = sig;
        let outranked = hit
            .matched
            .signatures
            .iter()
            .filter(|&&s| Some(s) != w)
            .map(|&s| self.db.signature(s).id.clone())
            .collect();
        self.matches.push((
            MatchedLine {
                line: hit.line,
                offset: hit.offset,
                signature: sig.map(|s| self.db.signature(s).id.clone()),
                role,
                outranked,
                finding: None,
            },
            group,
        ));
    }

    fn new_group(
        &self,
        sig: Option<u32>,
        role: FindingRole,
        hit: &Hit,
        info: &line::LineInfo,
        event: &Event,
    ) -> Group {
        let (title, severity, category, captures) = match sig {
            Some(s) => {
                let i = self.db.signature(s);
                (
                    i.title.clone(),
                    i.severity.as_str().to_string(),
                    i.category.clone(),
                    self.db.captures(s, &hit.text),
                )
            }
            None => {
                let title = match event {
                    Event::Exception { .. } => format!(
                        "Unrecognised exception {} (no signature knows it)",
                        exception_name(&info.message)
                    ),
                    _ => "Unrecognised error line (no signature knows it)".to_string(),
                };
                (title, "error".into(), "unclassified".into(), Vec::new())
            }
        };
        let (traceback, chain_pos, is_exception) = match event {
            Event::Exception { chain_pos, frames } => {
                let mut tb = frames.clone();
                tb.push(info.message.clone());
                (Some(tb), Some(*chain_pos), true)
            }
            Event::None => (None, None, false),
        };
        Group {
            signature: sig,
            role,
            title,
            severity,
            category,
            line: hit.line,
            last_line: hit.line,
            offset: hit.offset,
            text: String::from_utf8_lossy(&hit.text).into_owned(),
            text_truncated: hit.text_truncated,
            count: 1,
            processes: info.process.iter().cloned().collect(),
            timestamp: info.timestamp,
            captures,
            traceback,
            chain_pos,
            is_exception,
        }
    }

    fn fold(
        &mut self,
        sig: Option<u32>,
        role: FindingRole,
        hit: &Hit,
        info: &line::LineInfo,
        event: &Event,
    ) -> usize {
        // Noise folds by signature alone, in `noise_group` (its lines are many and their
        // wording is not news); the rest by signature and masked message, in `index`.
        let noise = match (role, sig) {
            (FindingRole::Noise, Some(s)) if (s as usize) < self.noise_group.len() => {
                Some(s as usize)
            }
            _ => None,
        };
        let key = noise
            .is_none()
            .then(|| (sig, line::mask(key_prefix(&info.message))));
        let found = match (noise, &key) {
            (Some(s), _) => self.noise_group[s],
            (None, Some(k)) => self.index.get(k).copied(),
            (None, None) => None,
        };
        if let Some(g) = found {
            let group = &mut self.groups[g];
            group.repeat(hit.line, info.process.as_ref());
            if group.traceback.is_none() {
                if let Event::Exception { chain_pos, frames } = event {
                    let mut tb = frames.clone();
                    tb.push(info.message.clone());
                    group.traceback = Some(tb);
                    group.chain_pos = Some(*chain_pos);
                    group.is_exception = true;
                }
            }
            return g;
        }
        let group = self.new_group(sig, role, hit, info, event);
        self.groups.push(group);
        let g = self.groups.len() - 1;
        match (noise, key) {
            (Some(s), _) => self.noise_group[s] = Some(g),
            (None, Some(k)) => {
                self.index.insert(k, g);
            }
            (None, None) => {}
        }
        g
    }

    /// Ranks the findings and builds the report.
    pub fn finish(mut self, input: &str, stats: &ScanStats, error: Option<String>) -> Report {
        let has_cause = self.groups.iter().any(|g| g.role == FindingRole::Cause);
        let has_unclassified = self
            .groups
            .iter()
            .any(|g| g.role == FindingRole::Unclassified);
        if !has_cause && !has_unclassified {
            if let Some(g) = self
                .first_exception_line
                .take()
                .or_else(|| self.first_error_line.take())
            {
                self.counts.unclassified_lines += 1;
                self.counts.unmatched_error_lines -= 1;
                let line = g.line;
                self.groups.push(g);
                let index = self.groups.len() - 1;
                if let Some(m) = self.matches.iter_mut().find(|(m, _)| m.line == line) {
                    m.1 = index;
                }
            } else if let Some(first) = self
                .groups
                .iter()
                .filter(|g| {
                    g.role == FindingRole::Symptom
                        && matches!(g.severity.as_str(), "fatal" | "error")
                })
                .min_by_key(|g| g.line)
            {
                // Only symptoms: the cause is not in this log, or no signature knows it.
                let g = Group {
                    signature: None,
                    role: FindingRole::Unclassified,
                    title: "Root cause not recognised: the log shows only its symptoms".into(),
                    severity: "error".into(),
                    category: "unclassified".into(),
                    line: first.line,
                    last_line: first.line,
                    offset: first.offset,
                    text: first.text.clone(),
                    text_truncated: first.text_truncated,
                    count: 1,
                    processes: first.processes.clone(),
                    timestamp: first.timestamp,
                    captures: Vec::new(),
                    traceback: None,
                    chain_pos: None,
                    is_exception: false,
                };
                self.counts.unclassified_lines += 1;
                self.groups.push(g);
            }
        }
        let role_ts_complete: HashMap<FindingRole, bool> = [
            FindingRole::Cause,
            FindingRole::Unclassified,
            FindingRole::Symptom,
            FindingRole::Noise,
        ]
        .into_iter()
        .map(|r| {
            (
                r,
                self.groups
                    .iter()
                    .filter(|g| g.role == r)
                    .all(|g| g.timestamp.is_some()),
            )
        })
        .collect();
        let mut order: Vec<usize> = (0..self.groups.len()).collect();
        order.sort_by_key(|&i| {
            let g = &self.groups[i];
            let wrapper = g.chain_pos.is_some_and(|p| p > 0);
            let time = if role_ts_complete[&g.role] {
                g.timestamp.unwrap_or(0)
            } else {
                0
            };
            (g.role, wrapper, time, g.line)
        });
        let mut rank_of = vec![0usize; self.groups.len()];
        let mut findings = Vec::with_capacity(order.len());
        let mut noise_procs = std::collections::BTreeSet::new();
        for (rank0, &gi) in order.iter().enumerate() {
            rank_of[gi] = rank0 + 1;
            let g = &self.groups[gi];
            if g.role == FindingRole::Noise {
                noise_procs.extend(g.processes.iter().cloned());
            }
            let remediation = g
                .signature
                .map(|s| interpolate(&self.db.signature(s).remediation, &g.captures));
            findings.push(Finding {
                rank: rank0 + 1,
                signature: g.signature.map(|s| self.db.signature(s).id.clone()),
                role: g.role,
                severity: g.severity.clone(),
                category: g.category.clone(),
                title: g.title.clone(),
                line: g.line,
                last_line: g.last_line,
                offset: g.offset,
                text: g.text.clone(),
                text_truncated: g.text_truncated,
                count: g.count,
                processes: g.processes.clone(),
                captures: g.captures.iter().cloned().collect::<BTreeMap<_, _>>(),
                remediation,
                traceback: g.traceback.clone(),
                why: why(g, role_ts_complete[&g.role]),
            });
        }
        self.counts.noise_processes = noise_procs.len() as u64;
        let matches = self.opts.all.then(|| {
            self.matches
                .into_iter()
                .map(|(mut m, g)| {
                    m.finding = rank_of.get(g).copied();
                    m
                })
                .collect()
        });
        Report {
            schema_version: SCHEMA_VERSION,
            input: input.to_string(),
            input_raw: None,
            database: DatabaseRef {
                name: self.db.name().to_string(),
                version: self.db.version().to_string(),
                hash: self.db.hash().to_string(),
            },
            error,
            binary: stats.binary,
            bytes: stats.bytes,
            lines: stats.lines,
            findings,
            counts: self.counts,
            matches,
        }
    }
}

fn why(g: &Group, by_time: bool) -> String {
    let mut parts = vec![match g.role {
        FindingRole::Cause => "a cause signature matched".to_string(),
        FindingRole::Unclassified => {
            if g.is_exception {
                "no signature knows this exception; it ends a failing traceback".to_string()
            } else {
                "no signature matched; fallback to the first error line".to_string()
            }
        }
        FindingRole::Symptom => "a symptom signature matched: a consequence of a cause".to_string(),
        FindingRole::Noise => "a noise signature matched: harmless".to_string(),
    }];
    match g.chain_pos {
        Some(0) => parts.push("innermost exception of its chain".into()),
        Some(p) => parts.push(format!("wrapper exception ({p} below it in its chain)")),
        None => {}
    }
    parts.push(if by_time {
        "ordered by timestamp".into()
    } else {
        "ordered by position".into()
    });
    if g.count > 1 {
        parts.push(format!(
            "{} lines folded from {} process{}",
            g.count,
            g.processes.len().max(1),
            if g.processes.len() == 1 { "" } else { "es" }
        ));
    }
    parts.join("; ")
}

/// Scans one input with `db` and analyses it: the whole pipeline in one call.
///
/// ```
/// use faultline::{analyze::{analyze_input, AnalyzeOptions}, scan::{Input, ScanOptions}, Database};
/// use std::path::Path;
///
/// let log = b"(Worker_TP0 pid=7) INFO 02-20 21:35:48 [cuda.py:456] Using backend AttentionBackendEnum.FLASH_ATTN for vit attention\nModuleNotFoundError: No module named 'flash_attn'\n".to_vec();
/// let input = Input::from_bytes(Path::new("log"), log);
/// let report = analyze_input(Database::embedded(), input, &ScanOptions::default(), AnalyzeOptions::default());
/// let first = &report.findings[0];
/// assert_eq!(first.line, 2);
/// assert_eq!(first.captures["module"], "flash_attn");
/// ```
pub fn analyze_input(
    db: &Database,
    input: crate::scan::Input,
    scan: &crate::scan::ScanOptions,
    opts: AnalyzeOptions,
) -> Report {
    let name = input.path().display().to_string();
    let raw = crate::report::raw_path(input.path());
    let mut analyzer = Analyzer::new(db, opts);
    let (stats, err) = input.scan(db, scan, &mut |hit| analyzer.push(&hit));
    let mut report = analyzer.finish(&name, &stats, err.map(|e| e.to_string()));
    report.input_raw = raw;
    report
}

/// Opens `path` (`-` is standard input), scans and analyses it. An input that cannot be
/// opened yields a report with no findings and its `error` set, so a sweep goes on.
pub fn analyze_path(
    db: &Database,
    path: &std::path::Path,
    scan: &crate::scan::ScanOptions,
    opts: AnalyzeOptions,
) -> Report {
    match crate::scan::open(path) {
        Ok(input) => analyze_input(db, input, scan, opts),
        Err(e) => {
            let mut report = Analyzer::new(db, opts).finish(
                &path.display().to_string(),
                &ScanStats::default(),
                Some(e.to_string()),
            );
            report.input_raw = crate::report::raw_path(path);
            report
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scan::{Input, ScanOptions};
    use std::path::Path;

    fn report(log: &str) -> Report {
        let input = Input::from_bytes(Path::new("t.log"), log.as_bytes().to_vec());
        analyze_input(
            Database::embedded(),
            input,
            &ScanOptions::default(),
            AnalyzeOptions { all: true },
        )
    }

    fn first(log: &str) -> Finding {
        report(log).findings.into_iter().next().expect("a finding")
    }

    const OOM: &str = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 3 has a total capacity of 79.19 GiB of which 1.01 GiB is free.";
    const WRAPPER: &str = "RuntimeError: Engine core initialization failed. See root cause above. Failed core proc(s): {}";
    const VIT: &str = "INFO 02-20 21:35:48 [cuda.py:456] Using backend AttentionBackendEnum.FLASH_ATTN for vit attention";

    #[test]
    fn cause_outranks_an_earlier_symptom_and_noise() {
        let log = format!("(A pid=1) {VIT}\n{WRAPPER}\n(B pid=2) {OOM}\n");
        let r = report(&log);
        let roles: Vec<_> = r.findings.iter().map(|f| f.role).collect();
        assert_eq!(
            roles,
            [FindingRole::Cause, FindingRole::Symptom, FindingRole::Noise]
        );
        assert_eq!(r.findings[0].line, 3);
    }

    #[test]
    fn noise_never_becomes_a_cause() {
        let r = report(&format!("{VIT}\n{VIT}\n"));
        assert!(r.findings.iter().all(|f| f.role == FindingRole::Noise));
        assert!(!r.diagnosed());
    }

    #[test]
    fn innermost_exception_of_a_chain_comes_first() {
        // The wrapper is known (a cause signature too); the inner exception is printed first.
        let log = format!(
            "Traceback (most recent call last):\n  File \"a.py\", line 1, in f\n{OOM}\n\nThe above exception was the direct cause of the following exception:\n\nTraceback (most recent call last):\n  File \"b.py\", line 2, in g\nRuntimeError: Failed to load model - not enough GPU memory. Try lowering --gpu-memory-utilization to free memory for weights, increasing --tensor-parallel-size, or using --quantization. See https://docs.vllm.ai/en/latest/configuration/conserving_memory/ for more tips. (original error: CUDA out of memory)\n"
        );
        let r = report(&log);
        assert_eq!(r.findings[0].line, 3, "{:#?}", r.findings);
        assert!(r.findings[0].why.contains("innermost"));
        let tb = r.findings[0].traceback.as_ref().unwrap();
        assert_eq!(tb[0], "File \"a.py\", line 1, in f");
    }

    #[test]
    fn earliest_failure_by_timestamp_across_processes() {
        // B's failure is printed later but happened first.
        let log = "(A pid=1) ERROR 02-20 21:35:50 [x.py:1] torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.19 GiB of which 1.01 GiB is free.\n\
                   (B pid=2) ERROR 02-20 21:35:40 [x.py:1] ModuleNotFoundError: No module named 'flash_attn'\n";
        let f = first(log);
        assert_eq!(f.line, 2);
        assert!(f.why.contains("timestamp"));
    }

    #[test]
    fn earliest_failure_by_position_without_timestamps() {
        let log = format!("ModuleNotFoundError: No module named 'flash_attn'\n{OOM}\n");
        assert_eq!(first(&log).line, 1);
    }

    #[test]
    fn a_warning_can_be_the_root_cause() {
        let log = format!(
            "/usr/lib/python3/site-packages/torch/cuda/__init__.py:128: UserWarning: CUDA initialization: Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions before calling NumCudaDevices() that might have already set an error? Error 804: forward compatibility was attempted on non supported HW (Triggered internally at ../c10/cuda/CUDAFunctions.cpp:108.)\n\
             Traceback (most recent call last):\n  File \"x.py\", line 1, in f\nRuntimeError: Found no NVIDIA driver on your system.\n{WRAPPER}\n"
        );
        let f = first(&log);
        assert_eq!(f.line, 1, "{f:#?}");
        assert_eq!(f.category, "driver");
    }

    #[test]
    fn the_same_message_from_many_ranks_folds_into_one() {
        let log: String = (0..8)
            .map(|r| format!("[rank{r}]: {}\n", OOM.replace("GPU 3", &format!("GPU {r}"))))
            .collect();
        let r = report(&log);
        assert_eq!(r.findings.len(), 1);
        let f = &r.findings[0];
        assert_eq!((f.count, f.line, f.last_line), (8, 1, 8));
        assert_eq!(f.processes.len(), 8);
        assert_eq!(f.captures.get("gpu").map(String::as_str), Some("0"));
    }

    #[test]
    fn interleaved_tracebacks_are_rebuilt_per_process() {
        let log = "(A pid=1) Traceback (most recent call last):\n\
                   (B pid=2) Traceback (most recent call last):\n\
                   (A pid=1)   File \"a.py\", line 1, in a_fn\n\
                   (B pid=2)   File \"b.py\", line 2, in b_fn\n\
                   (B pid=2) KeyError: 'weight'\n\
                   (A pid=1) ValueError: something nobody knows\n";
        let r = report(log);
        assert_eq!(r.findings.len(), 2);
        let f = &r.findings[0];
        assert_eq!(f.role, FindingRole::Unclassified);
        assert_eq!(f.line, 5);
        assert_eq!(
            f.traceback.as_ref().unwrap()[0],
            "File \"b.py\", line 2, in b_fn"
        );
        let g = &r.findings[1];
        assert_eq!(
            g.traceback.as_ref().unwrap()[0],
            "File \"a.py\", line 1, in a_fn"
        );
        assert!(g.title.contains("ValueError"));
    }

    #[test]
    fn unknown_failures_fall_back_to_unclassified() {
        let f = first("INFO start\nERROR 02-20 21:35:48 [x.py:1] the flux capacitor broke\n");
        assert_eq!((f.role, f.line), (FindingRole::Unclassified, 2));
        let f = first(&format!("{WRAPPER}\n"));
        assert_eq!(f.role, FindingRole::Unclassified);
        assert!(f.title.contains("only its symptoms"));
        assert!(report("all fine\n").findings.is_empty());
    }

    #[test]
    fn long_tracebacks_are_trimmed_with_a_count() {
        let mut log = String::from("Traceback (most recent call last):\n");
        for i in 0..20 {
            log.push_str(&format!(
                "  File \"f{i}.py\", line {i}, in g{i}\n    code()\n"
            ));
        }
        log.push_str(OOM);
        log.push('\n');
        let tb = first(&log).traceback.unwrap();
        assert_eq!(tb.len(), 1 + 1 + 4 + 1);
        assert_eq!(tb[1], "... 15 frames omitted ...");
        assert!(tb[5].contains("f19.py"));
    }

    #[test]
    fn priority_decides_a_line_and_all_shows_the_rest() {
        let r = report("RuntimeError: CUDA error: an illegal memory access was encountered\n");
        let m = &r.matches.as_ref().unwrap()[0];
        assert_eq!(m.finding, Some(1));
        assert_eq!(
            m.signature.as_deref(),
            Some("pytorch.cuda.illegal-memory-access")
        );
        assert_eq!(m.outranked, ["pytorch.cuda.cuda-error-generic"]);
        assert_eq!(r.counts.matched_lines, 1);
        assert_eq!(r.findings.len(), 1);
    }
}
