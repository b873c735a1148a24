//! From hits to a diagnosis: parse each hit line's prefixes, rebuild Python tracebacks per
//! process (chains included), recognise runs, fold the same message from many ranks into one
//! finding as the hits arrive, decide which failures are fatal and which were survived, and
//! rank them.
//!
//! The ranking rules, in order:
//! 1. The failures (fatal causes and fatal unclassified findings) of the last run that
//!    failed, then those of earlier runs, latest run first.
//! 2. Tier: fatal cause > fatal unclassified > survivable cause > survivable unclassified >
//!    symptom > noise. Among fatal unclassified findings: the end of a traceback, then the
//!    `what():` message of an uncaught C++ exception, then a symptom standing in, then a
//!    stand-in error line, then a traceback cut by the end of the input, then a terminal line
//!    (`Killed`, `exited with code 1`).
//! 3. The innermost exception of a chain (or no exception at all) before a wrapper.
//! 4. The earliest: by timestamp when every finding of the tier has one, else by position.
//!
//! A failure is fatal when its signature is not survivable, or when it ended its process (a
//! terminal marker or a fatal symptom such as a launcher's `Error: ShardCannotStart` is its
//! process's next line, or its process printed nothing more); an unclassified exception is
//! survivable when its process went on (a later log line of the same process, INFO or
//! WARNING, that is not a shutdown or teardown message, a report of a failure nor a peer's
//! disconnect). A terminal marker (death by signal, a non-zero exit, a Go/Rust/C++/Java crash,
//! a compiler or build failure) makes a log failed on its own, unless a logger recorded it at
//! ERROR level or below and its process went on (a child command's failure the process
//! survived). ERROR-level lines never do, but in a failed log with no known cause the first
//! of them stands in for it (a survivable cause logged at ERROR whose process was not seen
//! going on counts as one). In a run with no fatal cause and no traceback end, the first
//! symptom that is not survivable (fatal or error severity) becomes a fatal unclassified
//! finding that keeps its signature ("the log shows its symptom"); a symptom tagged `peer`
//! (a collective that lost a peer rank) only when no other symptom can.
//!
//! The tail rule, last: in a log where no rule found a failure and no signature a cause, the
//! first line near its end that says a failure in words, not at DEBUG, INFO or WARNING level,
//! after which its process logged nothing at INFO, stands in (module `tail`): a failing log is
//! never silent, and a server that logged an error and went on stays clean.
//!
//! Retry loops: a survivable cause whose signature is tagged `retry-loop` announces a retry loop
//! (wandb's `Network error (ConnectTimeout), entering retry loop.`); a signature tagged
//! `retry-resolved` of the same vendor (the id's first part) announces its recovery (`Network
//! error resolved after ..., resuming normal operation.`). A loop that no recovery followed (after
//! its last occurrence, in its run) becomes fatal when its run failed after it and no fatal cause
//! is known in that run: the traceback ends, stand-ins and terminal lines that follow it are its
//! consequences. A loop that recovered, or a run that did not fail, leaves it survivable.

pub mod line;
mod tail;
mod traceback;

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};

use crate::report::{
    Counts, DatabaseRef, Finding, FindingRole, MatchedLine, Report, MAX_PROCESSES_LISTED,
    SCHEMA_VERSION,
};
use crate::scan::{Hit, ScanStats};
use faultline_db::{interpolate, Database, Marker};
use faultline_db::{Role, Severity};

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

/// How far back a process's timestamp must step for a new run to start (5 minutes).
const RUN_STEP_BACK_MS: i64 = 5 * 60 * 1000;

/// Processes whose last timestamp is remembered for run boundaries.
const MAX_TIMED_PROCESSES: usize = 4096;

/// The default of [`AnalyzeOptions::max_findings`] (and of the CLI's `--max-findings`).
pub const DEFAULT_MAX_FINDINGS: usize = 1000;

/// What the analysis keeps beyond the findings.
#[derive(Clone, Debug)]
pub struct AnalyzeOptions {
    /// Keep every matched line (the report's `lines`; this list grows with the matches).
    pub all: bool,
    /// Most findings kept; past it the lowest-ranked go first, never a fatal cause or fatal
    /// unclassified finding for a lower one (0 = no limit).
    pub max_findings: usize,
}

impl Default for AnalyzeOptions {
    fn default() -> Self {
        AnalyzeOptions {
            all: false,
            max_findings: DEFAULT_MAX_FINDINGS,
        }
    }
}

/// Distinct values counted in bounded memory: exact up to [`Distinct::EXACT`] values, then a
/// HyperLogLog estimate (4096 registers, about 1.6% standard error).
#[derive(Clone, Default)]
struct Distinct {
    exact: HashSet<u64>,
    registers: Option<Box<[u8]>>,
}

impl Distinct {
    const EXACT: usize = 1024;
    const BITS: u32 = 12;

    fn hash(text: &str) -> u64 {
        xxhash_rust::xxh3::xxh3_64(text.as_bytes())
    }

    /// Counts `h`; says whether it was new (always `true` once estimating).
    fn insert(&mut self, h: u64) -> bool {
        if let Some(r) = &mut self.registers {
            Self::register(r, h);
            return true;
        }
        let new = self.exact.insert(h);
        if self.exact.len() > Self::EXACT {
            let mut r = vec![0u8; 1 << Self::BITS].into_boxed_slice();
            for &v in &self.exact {
                Self::register(&mut r, v);
            }
            self.exact = HashSet::new();
            self.registers = Some(r);
        }
        new
    }

    fn register(r: &mut [u8], h: u64) {
        let idx = (h >> (64 - Self::BITS)) as usize;
        let rest = (h << Self::BITS) | (1 << (Self::BITS - 1));
        let rank = rest.leading_zeros() as u8 + 1;
        if r[idx] < rank {
            r[idx] = rank;
        }
    }

    fn count(&self) -> u64 {
        let Some(r) = &self.registers else {
            return self.exact.len() as u64;
        };
        let m = r.len() as f64;
        let sum: f64 = r.iter().map(|&x| 2f64.powi(-i32::from(x))).sum();
        let alpha = 0.7213 / (1.0 + 1.079 / m);
        let mut e = alpha * m * m / sum;
        let zeros = r.iter().filter(|&&x| x == 0).count();
        if e <= 2.5 * m && zeros > 0 {
            e = m * (m / zeros as f64).ln();
        }
        e.round() as u64
    }
}

/// Where an unclassified finding came from; orders fatal unclassified findings.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Source {
    /// A signature matched (causes, symptoms, noise).
    Signature,
    /// The end of a traceback no signature knows.
    TracebackEnd,
    /// The message of an exception a C++ terminate named (`  what():  ...` after `terminate
    /// called after throwing an instance of 'T'`) that no signature knows.
    UncaughtCxx,
    /// A fatal symptom standing in for an unknown cause.
    OnlySymptoms,
    /// An ERROR-level or exception line standing in for the cause of a failed log.
    Level,
    /// A traceback cut off by the end of the input.
    CutTraceback,
    /// A terminal line (`Killed`, `exited with code 1`) no signature knows.
    Terminal,
    /// A line of the log's tail that says a failure, in a log with no failure found.
    Tail,
}

/// Whether a failure ended its process.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Fate {
    /// Not known yet: the next line of its process decides.
    Pending,
    /// Its process went on.
    WentOn,
    /// A terminal marker followed, or its process printed nothing more.
    Ended,
}

struct Group {
    signature: Option<u32>,
    role: FindingRole,
    source: Source,
    title: String,
    severity: Severity,
    category: String,
    line: u64,
    last_line: u64,
    offset: u64,
    text: String,
    text_truncated: bool,
    count: u64,
    processes: Vec<String>,
    process_set: Distinct,
    timestamp: Option<i64>,
    timestamp_text: Option<String>,
    captures: Vec<(String, String)>,
    traceback: Option<Vec<String>>,
    /// The position of the first occurrence in its exception chain (0 = innermost).
    chain_pos: Option<u32>,
    is_exception: bool,
    /// The signature's survivable value (unclassified: `true` until its fate says otherwise).
    survivable_sig: bool,
    /// The line was logged at ERROR level or above.
    error_level: bool,
    fate: Fate,
    run: u32,
    /// A retry loop's vendor and whether a recovery followed its last occurrence.
    retry: Option<(u32, bool)>,
    /// An unresolved retry loop before its run failed (see the module's retry-loop rule).
    gave_up: bool,
}

impl Group {
    /// Makes this finding stand in for a cause no signature knows: unclassified and fatal, the
    /// end of its process, titled with `what` it is, found by `source`.
    fn stand_in(&mut self, what: &str, source: Source) {
        self.title = format!("Root cause not recognised; {what}: {}", self.title);
        self.role = FindingRole::Unclassified;
        self.source = source;
        self.survivable_sig = false;
        self.fate = Fate::Ended;
    }

    /// Counts one more line folded into this group.
    fn repeat(&mut self, line: u64, process: Option<&String>) {
        self.count += 1;
        self.last_line = line;
        if let Some(p) = process {
            if self.process_set.insert(Distinct::hash(p))
                && self.processes.len() < MAX_PROCESSES_LISTED
                && !self.processes.contains(p)
            {
                self.processes.push(p.clone());
            }
        }
    }

    /// A retry loop's cause that no recovery followed and that is not fatal by itself: what
    /// the retry-loop rule may make fatal.
    fn open_retry_loop(&self) -> bool {
        self.role == FindingRole::Cause
            && self.retry.is_some_and(|(_, resolved)| !resolved)
            && !self.fatal()
    }

    /// Whether the failure is fatal: a fatal tier (see the module's ranking rules).
    fn fatal(&self) -> bool {
        match self.role {
            FindingRole::Cause | FindingRole::Unclassified => {
                !self.survivable_sig || self.fate == Fate::Ended || self.gave_up
            }
            _ => false,
        }
    }

    /// The tier, 0 (fatal cause) to 5 (noise).
    fn tier(&self) -> u8 {
        match (self.role, self.fatal()) {
            (FindingRole::Cause, true) => 0,
            (FindingRole::Unclassified, true) => 1,
            (FindingRole::Cause, false) => 2,
            (FindingRole::Unclassified, false) => 3,
            (FindingRole::Symptom, _) => 4,
            (FindingRole::Noise, _) => 5,
        }
    }

    /// The rank key; `by_time` when every finding of the tier has a timestamp.
    fn key(&self, by_time: bool) -> (u8, std::cmp::Reverse<u32>, u8, Source, bool, i64, u64) {
        let tier = self.tier();
        let failing = tier <= 1;
        let wrapper = self.chain_pos.is_some_and(|p| p > 0);
        let time = if by_time {
            self.timestamp.unwrap_or(0)
        } else {
            0
        };
        (
            u8::from(!failing),
            std::cmp::Reverse(if failing { self.run } else { 0 }),
            tier,
            if tier == 1 {
                self.source
            } else {
                Source::Signature
            },
            wrapper,
            time,
            self.line,
        )
    }
}

/// What a signature says about retry loops (its `retry-loop` / `retry-resolved` tag), with its
/// vendor (the id's first part) as an index.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum RetryTag {
    None,
    Loop(u32),
    Resolved(u32),
}

/// Most retry-loop findings of a run whose recovery is watched for.
const MAX_OPEN_LOOPS: usize = 64;

/// The retry tag of every signature of `db`.
fn retry_tags(db: &Database) -> Vec<RetryTag> {
    let mut vendors: Vec<&str> = Vec::new();
    db.signatures()
        .iter()
        .map(|sig| {
            let has = |t: &str| sig.tags.iter().any(|x| x == t);
            let (lp, rs) = (has("retry-loop"), has("retry-resolved"));
            if !lp && !rs {
                return RetryTag::None;
            }
            let vendor = sig.id.split('.').next().unwrap_or("");
            let v = match vendors.iter().position(|&x| x == vendor) {
                Some(v) => v,
                None => {
                    vendors.push(vendor);
                    vendors.len() - 1
                }
            } as u32;
            if rs {
                RetryTag::Resolved(v)
            } else {
                RetryTag::Loop(v)
            }
        })
        .collect()
}

/// A line that could stand in for the cause of a failed log.
struct Candidates {
    exception: Option<Group>,
    error: Option<Group>,
}

/// Consumes hits in input order and produces a [`Report`].
pub struct Analyzer<'db> {
    db: &'db Database,
    opts: AnalyzeOptions,
    groups: Vec<Group>,
    /// Groups by run, signature (or none) and masked message; noise groups are in
    /// `noise_group`.
    index: HashMap<(u32, Option<u32>, String), usize>,
    /// Per noise signature: its one group, once it has one.
    noise_group: Vec<Option<usize>>,
    tracebacks: Tracebacks,
    counts: Counts,
    /// Stand-in candidates of the current run, and of the last earlier run that failed.
    candidates: Candidates,
    failed_run_candidates: Option<(u32, Candidates)>,
    matches: Vec<(MatchedLine, usize)>,
    /// Failures waiting for the next line of their process: group, and whether the lines
    /// after it were delivered (so that "printed nothing more" can be told).
    pending: HashMap<String, Vec<(usize, bool)>>,
    /// The current run (1-based), whether any line came in it, the banners seen in it.
    run: u32,
    run_has_lines: bool,
    banners: u8,
    /// Whether the current run has a terminal line.
    run_terminal: bool,
    /// Runs with a terminal line or a fatal finding.
    failed_runs: Vec<u32>,
    last_time: HashMap<String, i64>,
    /// The last terminal line: its process and line number (a C++ `terminate called ...`
    /// is followed by the `what():` line of the exception that ended the process).
    last_terminal: Option<(String, u64)>,
    /// The last hit when it was an ERROR line: its process and line number.
    last_error: Option<(String, u64)>,
    findings_omitted: u64,
    noise_processes: Distinct,
    /// Per signature: its retry tag (filled at the first matched line: an input with none
    /// does not pay for it).
    retry_tags: Vec<RetryTag>,
    /// The retry-loop groups of the current run.
    open_loops: Vec<usize>,
    /// The line numbers of the last [`tail::TAIL_LINES`] lines a signature matched.
    known_lines: VecDeque<u64>,
    /// The line numbers of the last [`tail::TAIL_LINES`] error lines no signature matched
    /// (counted in `unmatched_error_lines`).
    error_lines: VecDeque<u64>,
}

fn role_of(role: Role) -> FindingRole {
    match role {
        Role::Cause => FindingRole::Cause,
        Role::Symptom => FindingRole::Symptom,
        // Evidence never wins a line (see `Analyzer::winner`).
        Role::Noise | Role::Start | Role::Progress | Role::Completed | Role::Stopped => {
            FindingRole::Noise
        }
    }
}

/// The name of the exception on an exception line: `ValueError` in `ValueError: x`.
fn exception_name(message: &str) -> &str {
    let head = message.split(':').next().unwrap_or(message).trim();
    head.rsplit(['.', ' ']).next().unwrap_or(head)
}

/// Whether an exception line names a class: `pkg.SomeName: ...` or a bare `SomeName`.
fn names_a_class(message: &str) -> bool {
    let head = message.split(": ").next().unwrap_or(message).trim();
    !head.is_empty()
        && head.len() < 120
        && head
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'.')
        && head
            .rsplit('.')
            .next()
            .is_some_and(|n| n.starts_with(|c: char| c.is_ascii_uppercase()))
}

/// Whether a log line says its process is stopping (not going on). Teardown lines a library
/// prints as its process exits count too: c10d's TCPStore prints `Store exit requested`,
/// `uv_loop_close failed ...` and `uv_loop cleanup finished.` at INFO after the traceback that
/// ended the torchrun agent.
fn winds_down(message: &str) -> bool {
    const WORDS: [&str; 16] = [
        "shutting down",
        "shutdown",
        "exiting",
        "terminat",
        "destroy_process_group",
        "finished server process",
        "stopping",
        "stopped",
        "killed",
        "abort",
        "died",
        "exit code",
        "exitcode",
        "cleaning up",
        "exit requested",
        "cleanup finished",
    ];
    // One pass, no lower-cased copy: sixteen substring searches of a copy were 4% of a scan
    // of real logs, whose every line of a process with a pending failure asks.
    static WINDS_DOWN: std::sync::OnceLock<Option<aho_corasick::AhoCorasick>> =
        std::sync::OnceLock::new();
    let ac = WINDS_DOWN.get_or_init(|| {
        aho_corasick::AhoCorasick::builder()
            .ascii_case_insensitive(true)
            .build(WORDS)
            .ok()
    });
    match ac {
        Some(ac) => ac.is_match(message),
        None => {
            let lower = message.to_ascii_lowercase();
            WORDS.iter().any(|w| lower.contains(w))
        }
    }
}

/// Whether a log line only says that a peer closed its connection to this process (a c10d
/// store server's `Remote peer closed the connection.` as a client exits): it says nothing
/// about this process going on, so it settles no pending failure.
fn peer_left(message: &str) -> bool {
    message
        .to_ascii_lowercase()
        .contains("closed the connection")
}

/// The kind of torch elastic's `restart_count=N` (N > 0): a restart is always a new run.
const RESTART: u8 = 1 << 7;

/// The start-up banner a line holds: its kind (a bit), if any.
fn banner_kind(text: &[u8]) -> u8 {
    const BANNERS: [&[u8]; 8] = [
        b"vLLM API server version ",
        b"Starting vLLM API server",
        b"server_args=ServerArgs(",
        b"text_generation_launcher: Args {",
        b"Starting elastic_operator with launch configs",
        b"Started a local Ray instance",
        b"Ray runtime started",
        b"restart_count=",
    ];
    // Built once: a finder is built per search otherwise, the most of a banner line's cost.
    static FINDERS: std::sync::OnceLock<Vec<memchr::memmem::Finder<'static>>> =
        std::sync::OnceLock::new();
    FINDERS
        .get_or_init(|| BANNERS.iter().map(memchr::memmem::Finder::new).collect())
        .iter()
        .position(|f| f.find(text).is_some())
        .map_or(0, |i| 1 << i)
}

/// A process name as a map key or a kept copy, in a buffer of its own even when empty (a
/// line that names no process). An empty `String` points at a dangling address, and glibc's
/// AVX-512 `memcmp`, which every string comparison calls, loads its operands under a mask even
/// for zero bytes: from a dangling address that takes a fault-suppression assist. The
/// comparisons of empty keys were 12% of a scan of a log whose lines mostly name no process.
pub(crate) fn process_key(name: &str) -> String {
    let mut key = String::with_capacity(name.len().max(1));
    key.push_str(name);
    key
}

/// Month of a year-less timestamp (see [`line::LineInfo::timestamp`]).
fn month_of(ms: i64) -> i64 {
    ms / (32 * 24 * 3600 * 1000)
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
            candidates: Candidates {
                exception: None,
                error: None,
            },
            failed_run_candidates: None,
            matches: Vec::new(),
            pending: HashMap::new(),
            run: 1,
            run_has_lines: false,
            banners: 0,
            run_terminal: false,
            failed_runs: Vec::new(),
            last_time: HashMap::new(),
            last_terminal: None,
            last_error: None,
            findings_omitted: 0,
            noise_processes: Distinct::default(),
            retry_tags: Vec::new(),
            open_loops: Vec::new(),
            known_lines: VecDeque::with_capacity(tail::TAIL_LINES),
            error_lines: VecDeque::with_capacity(tail::TAIL_LINES),
        }
    }

    /// The winning signature of a line: highest priority, then cause before symptom before
    /// noise, then the lowest index. Evidence signatures never win: they make no finding.
    fn winner(&self, sigs: &[u32]) -> Option<u32> {
        sigs.iter()
            .copied()
            .filter(|&s| !self.db.signature(s).role.is_evidence())
            .min_by_key(|&s| {
                let info = self.db.signature(s);
                (std::cmp::Reverse(info.priority), info.role, s)
            })
    }

    /// Whether the current run has failed so far.
    fn run_failed(&self) -> bool {
        // Groups are made in input order and runs only grow: the current run's are last.
        self.run_terminal
            || self
                .groups
                .iter()
                .rev()
                .take_while(|g| g.run == self.run)
                .any(|g| g.fatal() && g.source != Source::Level)
    }

    /// Starts run `self.run + 1`: every process of the old run ended.
    fn new_run(&mut self) {
        self.settle_pending_all(true);
        if self.run_failed() {
            self.failed_runs.push(self.run);
            let c = std::mem::replace(
                &mut self.candidates,
                Candidates {
                    exception: None,
                    error: None,
                },
            );
            self.failed_run_candidates = Some((self.run, c));
        } else {
            self.candidates = Candidates {
                exception: None,
                error: None,
            };
        }
        self.tracebacks.clear();
        self.last_time.clear();
        self.open_loops.clear();
        self.run += 1;
        self.run_has_lines = false;
        self.banners = 0;
        self.run_terminal = false;
    }

    /// Decides whether `hit` starts a new run: a start-up banner after other lines (the same
    /// banner again, or the first banner of a run that had none), torch elastic restarting
    /// its worker group, or a process's timestamp stepping back by more than 5 minutes (not
    /// the New Year wrap of a year-less date).
    fn run_boundary(&mut self, hit: &Hit, info: &line::LineInfo, process: &str) {
        if hit.matched.has(Marker::RunStart) {
            let kind = banner_kind(&hit.text);
            if self.run_has_lines
                && (self.banners == 0 || self.banners & kind != 0 || kind == RESTART)
            {
                self.new_run();
            }
            self.banners |= kind;
        } else if let Some(t) = info.timestamp {
            // One lookup for a process seen before (nearly every line): its time is
            // replaced in place, without a new key.
            let last = self
                .last_time
                .get_mut(process)
                .map(|v| std::mem::replace(v, t));
            let stepped_back = last.is_some_and(|last| {
                let new_year = month_of(last) == 12 && month_of(t) == 1;
                t < last - RUN_STEP_BACK_MS && !new_year && self.run_has_lines
            });
            if stepped_back {
                self.new_run();
            }
            if last.is_none() || stepped_back {
                if self.last_time.len() >= MAX_TIMED_PROCESSES {
                    self.last_time.clear();
                }
                self.last_time.insert(process_key(process), t);
            }
        }
        self.run_has_lines = true;
    }

    /// Settles every pending failure: `ended` when the processes ended (end of input, a new
    /// run, a terminal line no process owns).
    fn settle_pending_all(&mut self, ended: bool) {
        for (_, waiting) in self.pending.drain() {
            for (g, watched) in waiting {
                if let Some(group) = self.groups.get_mut(g) {
                    // Unwatched lines (no context after them): the fate stays unknown.
                    if group.fate == Fate::Pending && ended && watched {
                        group.fate = Fate::Ended;
                    }
                }
            }
        }
    }

    /// The next line of `process` after a failure decides its fate. `reports_death`: the
    /// line's signature is a fatal symptom (a launcher's `Error: ShardCannotStart`, a dead
    /// engine or actor), which says the process that printed the failure ended; the lines of
    /// another process (a second shard's stderr) that follow it do not make it go on.
    fn settle_pending(
        &mut self,
        process: &str,
        hit: &Hit,
        info: &line::LineInfo,
        sig_role: Option<Role>,
        reports_death: bool,
    ) {
        if self.pending.is_empty() {
            return;
        }
        let m = &hit.matched;
        let terminal = m.has(Marker::Terminal);
        if terminal && process.is_empty() {
            // A shell or launcher's `Killed`: a pending failure ended its process when the
            // scan delivered the lines after it (a traceback's context, so any ordinary line
            // in between would have settled it) or when the terminal line comes right after
            // it. Otherwise lines the scan did not deliver came between (its process went
            // on): a killed loader does not make an earlier warning fatal.
            let line = hit.line;
            for (_, waiting) in self.pending.drain() {
                for (g, watched) in waiting {
                    if let Some(group) = self.groups.get_mut(g) {
                        if watched || line == group.last_line.saturating_add(1) {
                            group.fate = Fate::Ended;
                        }
                    }
                }
            }
            return;
        }
        let Some(waiting) = self.pending.get(process) else {
            return;
        };
        let fate = if terminal || reports_death || winds_down(&info.message) {
            Fate::Ended
        } else {
            let level = tail::level(info);
            let ordinary = (level.is_some() || info.timestamp.is_some())
                && level.is_none_or(|l| l <= line::Level::Warning)
                && !m.has(Marker::Exception)
                && !m.has(Marker::TracebackStart)
                && !m.has(Marker::Frame)
                && !m.has(Marker::ErrorLevel)
                && !matches!(sig_role, Some(Role::Cause | Role::Symptom));
            // A line that reports a failure (`Worker group FAILED. 3/3 attempts left; will
            // restart worker group`) is not going on; an HTTP 4xx the server answered is.
            let reports_failure =
                tail::says_failure(&info.message) && !tail::client_error(&info.message);
            if !ordinary || peer_left(&info.message) || reports_failure {
                return;
            }
            Fate::WentOn
        };
        let _ = waiting;
        if let Some(waiting) = self.pending.remove(process) {
            for (g, _) in waiting {
                if let Some(group) = self.groups.get_mut(g) {
                    if group.fate == Fate::Pending {
                        group.fate = fate;
                    }
                }
            }
        }
    }

    /// Takes the next hit (hits must arrive in input order); a hit with nothing matched is a
    /// context line after a traceback line.
    pub fn push(&mut self, hit: &Hit) {
        let winner = self.winner(&hit.matched.signatures);
        if let Some(w) = winner {
            if self.known_lines.len() == tail::TAIL_LINES {
                self.known_lines.pop_front();
            }
            self.known_lines.push_back(hit.line);
            if self.retry_tags.is_empty() {
                self.retry_tags = retry_tags(self.db);
            }
            // (While failures wait for their process's next line, every line is parsed.)
            if hit.matched.markers == 0
                && self.pending.is_empty()
                && self.db.signature(w).role == Role::Noise
                && self.retry_tags.get(w as usize) == Some(&RetryTag::None)
            {
                if let Some(g) = self.noise_group.get(w as usize).copied().flatten() {
                    // A repeat of a known noise line: only its process and position change.
                    self.counts.matched_lines += 1;
                    self.counts.noise_lines += 1;
                    let process = line::process(&hit.text);
                    if let Some(p) = &process {
                        self.noise_processes.insert(Distinct::hash(p));
                    }
                    self.groups[g].repeat(hit.line, process.as_ref());
                    self.run_has_lines = true;
                    self.record(hit, Some(w), FindingRole::Noise, g);
                    return;
                }
            }
        }
        let info = line::parse(&hit.text);
        let process = process_key(info.process.as_deref().unwrap_or(""));
        self.run_boundary(hit, &info, &process);
        let sig_role = winner.map(|w| self.db.signature(w).role);
        let reports_death = winner.is_some_and(|w| {
            let sig = self.db.signature(w);
            sig.role == Role::Symptom && sig.severity == Severity::Fatal && !sig.survivable
        });
        self.settle_pending(&process, hit, &info, sig_role, reports_death);
        let logged = self
            .last_error
            .as_ref()
            .is_some_and(|(p, l)| l + 1 == hit.line && *p == process);
        self.last_error = (info.level.is_some_and(|l| l >= line::Level::Error))
            .then(|| (process_key(&process), hit.line));
        let event = self.tracebacks.observe(&process, hit, &info, logged);
        let terminal = hit.matched.has(Marker::Terminal);
        // A terminal line no signature knows, logged as a record at ERROR level or below: a
        // process reports that something it ran ended badly, and may go on after it.
        let logged_terminal = terminal
            && winner.is_none()
            && matches!(event, Event::None)
            && tail::level(&info).is_some_and(|l| l <= line::Level::Error);
        // The exception a C++ terminate names, on the line after it, ended its process.
        let what_of_terminate = self
            .last_terminal
            .as_ref()
            .is_some_and(|(p, l)| l + 1 == hit.line && *p == process)
            && info.message.trim_start().starts_with("what():");
        if terminal {
            // A logged one fails its run only when its process did not go on (its fate).
            self.run_terminal |= !logged_terminal;
            self.last_terminal = Some((process_key(&process), hit.line));
        }
        if let Some(p) = &info.process {
            if sig_role == Some(Role::Noise) {
                self.noise_processes.insert(Distinct::hash(p));
            }
        }
        // Lines after a traceback line were delivered: "printed nothing more" can be told.
        let watched = matches!(event, Event::Exception { .. });
        if let Some(w) = winner {
            self.counts.matched_lines += 1;
            let sig = self.db.signature(w);
            match sig.role {
                Role::Cause => self.counts.cause_lines += 1,
                Role::Symptom => self.counts.symptom_lines += 1,
                Role::Noise => self.counts.noise_lines += 1,
                Role::Start | Role::Progress | Role::Completed | Role::Stopped => {}
            }
            let role = role_of(sig.role);
            let group = self.fold(Some(w), role, Source::Signature, hit, &info, &event);
            self.retry_loops(w, group, hit.line);
            if terminal || what_of_terminate {
                if let Some(g) = self.groups.get_mut(group) {
                    g.fate = Fate::Ended;
                }
            } else if role == FindingRole::Cause {
                self.watch(&process, group, watched);
            }
            self.record(hit, Some(w), role, group);
            return;
        }
        match &event {
            // An unknown innermost exception (a wrapper's is not news), or a line that ends a
            // traceback by its structure alone.
            Event::Exception { chain_pos, .. }
                if *chain_pos == 0 || !hit.matched.has(Marker::Exception) =>
            {
                let group = self.unclassified(Source::TracebackEnd, hit, &info, &event);
                self.watch(&process, group, true);
            }
            // What the uncaught C++ exception said: its message, as a Python exception line
            // is, rather than the terminate line that names only its type.
            Event::None if what_of_terminate => {
                let group = self.unclassified(Source::UncaughtCxx, hit, &info, &event);
                self.end(group);
            }
            Event::None if terminal => {
                let group = self.unclassified(Source::Terminal, hit, &info, &event);
                if logged_terminal {
                    // Ended unless a line of its process shows it went on.
                    self.watch(&process, group, true);
                } else {
                    self.end(group);
                }
            }
            Event::None if self.fallback_candidate(hit, &info, &process) => {
                self.counts.unmatched_error_lines += 1;
                if self.error_lines.len() == tail::TAIL_LINES {
                    self.error_lines.pop_front();
                }
                self.error_lines.push_back(hit.line);
                self.record(hit, None, FindingRole::Unclassified, NO_FINDING);
                let exception = hit.matched.has(Marker::Exception);
                let empty = if exception {
                    self.candidates.exception.is_none()
                } else {
                    self.candidates.error.is_none()
                };
                if empty {
                    let mut group = self.new_group(
                        None,
                        FindingRole::Unclassified,
                        Source::Level,
                        hit,
                        &info,
                        &event,
                    );
                    group.survivable_sig = false;
                    if exception {
                        self.candidates.exception = Some(group);
                    } else {
                        self.candidates.error = Some(group);
                    }
                }
            }
            _ => {}
        }
    }

    /// Folds a line no signature knows into an unclassified finding from `source`, and records
    /// it: the group's index.
    fn unclassified(
        &mut self,
        source: Source,
        hit: &Hit,
        info: &line::LineInfo,
        event: &Event,
    ) -> usize {
        self.counts.unclassified_lines += 1;
        let group = self.fold(None, FindingRole::Unclassified, source, hit, info, event);
        self.record(hit, None, FindingRole::Unclassified, group);
        group
    }

    /// The failure of `group` ended its process.
    fn end(&mut self, group: usize) {
        if let Some(g) = self.groups.get_mut(group) {
            g.fate = Fate::Ended;
        }
    }

    /// Keeps track of the current run's retry loops: a loop's line (re)opens its group, a
    /// recovery line resolves the open loops of its vendor printed before it.
    fn retry_loops(&mut self, sig: u32, group: usize, line: u64) {
        match self
            .retry_tags
            .get(sig as usize)
            .copied()
            .unwrap_or(RetryTag::None)
        {
            RetryTag::None => {}
            RetryTag::Loop(v) => {
                let Some(g) = self.groups.get_mut(group) else {
                    return;
                };
                if g.role != FindingRole::Cause {
                    return;
                }
                g.retry = Some((v, false));
                if !self.open_loops.contains(&group) && self.open_loops.len() < MAX_OPEN_LOOPS {
                    self.open_loops.push(group);
                }
            }
            RetryTag::Resolved(v) => {
                for &g in &self.open_loops {
                    if let Some(group) = self.groups.get_mut(g) {
                        if let Some((gv, resolved)) = &mut group.retry {
                            if *gv == v && group.last_line < line {
                                *resolved = true;
                            }
                        }
                    }
                }
            }
        }
    }

    /// The retry-loop rule, once the fates are settled: in each run with no fatal cause, the
    /// first retry loop that no recovery followed becomes fatal when the run failed after it
    /// (a fatal finding, or a symptom that fails a log on its own, after the loop's first line
    /// and none before it).
    fn unresolved_retry_loops(&mut self) {
        let loops: Vec<usize> = (0..self.groups.len())
            .filter(|&i| self.groups[i].open_retry_loop())
            .collect();
        if loops.is_empty() {
            return;
        }
        let db = self.db;
        let fails = |g: &Group| {
            g.fatal()
                || (g.role == FindingRole::Symptom
                    && g.signature.is_some_and(|s| {
                        let sig = db.signature(s);
                        !sig.survivable && matches!(sig.severity, Severity::Fatal | Severity::Error)
                    }))
        };
        let mut done: Vec<u32> = Vec::new();
        for i in loops {
            let run = self.groups[i].run;
            if done.contains(&run) {
                continue;
            }
            done.push(run);
            let in_run = || self.groups.iter().filter(|g| g.run == run);
            if in_run().any(|g| g.role == FindingRole::Cause && g.fatal()) {
                continue;
            }
            let Some(first_failure) = in_run().filter(|g| fails(g)).map(|g| g.line).min() else {
                continue;
            };
            // The earliest open loop of the run that came before its first failure.
            let first_loop = (0..self.groups.len())
                .filter(|&j| {
                    let g = &self.groups[j];
                    g.run == run && g.open_retry_loop() && g.line < first_failure
                })
                .min_by_key(|&j| self.groups[j].line);
            if let Some(j) = first_loop {
                self.groups[j].gave_up = true;
            }
        }
    }

    /// The tail rule (module [`tail`]): in a log with no failure found, a line of its tail
    /// that says a failure stands in for the cause.
    fn tail_stand_in(&mut self, stats: &ScanStats) {
        let newlines = memchr::memchr_iter(b'\n', &stats.tail).count() as u64;
        let tail_lines = newlines + u64::from(stats.tail.last().is_some_and(|&b| b != b'\n'));
        let first_line = stats.lines.saturating_sub(tail_lines) + 1;
        let first_offset = stats.bytes.saturating_sub(stats.tail.len() as u64);
        let known = &self.known_lines;
        let Some(found) = tail::stand_in(&stats.tail, first_line, first_offset, |n| {
            known.contains(&n)
        }) else {
            return;
        };
        let hit = Hit {
            line: found.line,
            offset: found.offset,
            text: found.raw,
            text_truncated: false,
            matched: Default::default(),
        };
        let mut group = self.new_group(
            None,
            FindingRole::Unclassified,
            Source::Tail,
            &hit,
            &found.info,
            &Event::None,
        );
        group.title = format!(
            "Root cause not recognised; the log ends in this failure: {}",
            group.title
        );
        group.survivable_sig = false;
        group.fate = Fate::Ended;
        group.run = self.run;
        self.counts.unclassified_lines += 1;
        if self.error_lines.contains(&found.line) {
            // Counted as an error line no finding took; now a finding takes it.
            self.counts.unmatched_error_lines = self.counts.unmatched_error_lines.saturating_sub(1);
        }
        self.groups.push(group);
        let index = self.groups.len() - 1;
        if let Some(m) = self.matches.iter_mut().find(|(m, _)| m.line == found.line) {
            m.1 = index;
        }
    }

    /// Waits for the next line of `process` to decide the fate of `group`'s first failure.
    fn watch(&mut self, process: &str, group: usize, watched: bool) {
        let Some(g) = self.groups.get(group) else {
            return;
        };
        if g.count != 1 || g.fate != Fate::Pending {
            return;
        }
        if self.pending.len() >= MAX_TIMED_PROCESSES && !self.pending.contains_key(process) {
            // Hostile numbers of processes: the oldest waits are settled as "went on".
            self.settle_pending_all(false);
        }
        let list = self.pending.entry(process_key(process)).or_default();
        if list.len() < 64 {
            list.push((group, watched));
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
        source: Source,
        hit: &Hit,
        info: &line::LineInfo,
        event: &Event,
    ) -> Group {
        let (title, severity, category, captures, survivable_sig) = match sig {
            Some(s) => {
                let i = self.db.signature(s);
                (
                    i.title.clone(),
                    i.severity,
                    i.category.clone(),
                    self.db.captures(s, &hit.text),
                    i.survivable,
                )
            }
            None => {
                let title = match (source, event) {
                    (Source::UncaughtCxx, _) => {
                        "Unrecognised C++ exception that ended its process (no signature knows it)"
                            .to_string()
                    }
                    (Source::Terminal, _) => {
                        "A process ended badly: killed, crashed, exited non-zero or failed to build (no signature knows this line)".to_string()
                    }
                    (_, Event::Exception { .. }) if names_a_class(&info.message) => format!(
                        "Unrecognised exception {} (no signature knows it)",
                        exception_name(&info.message)
                    ),
                    (_, Event::Exception { .. }) => {
                        "Unrecognised failure ending a traceback (no signature knows it)".to_string()
                    }
                    _ => "Unrecognised error line (no signature knows it)".to_string(),
                };
                (
                    title,
                    Severity::Error,
                    "unclassified".into(),
                    Vec::new(),
                    true,
                )
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
        let mut process_set = Distinct::default();
        if let Some(p) = &info.process {
            process_set.insert(Distinct::hash(p));
        }
        Group {
            signature: sig,
            role,
            source,
            title,
            severity,
            category,
            line: hit.line,
            last_line: hit.line,
            offset: hit.offset,
            text: line::lossy(&hit.text),
            text_truncated: hit.text_truncated,
            count: 1,
            processes: info.process.iter().cloned().collect(),
            process_set,
            timestamp: info.timestamp,
            timestamp_text: info.timestamp_text.clone(),
            captures,
            traceback,
            chain_pos,
            is_exception,
            survivable_sig,
            error_level: info.level.is_some_and(|l| l >= line::Level::Error),
            fate: Fate::Pending,
            run: self.run,
            retry: None,
            gave_up: false,
        }
    }

    fn fold(
        &mut self,
        sig: Option<u32>,
        role: FindingRole,
        source: Source,
        hit: &Hit,
        info: &line::LineInfo,
        event: &Event,
    ) -> usize {
        // Noise folds by signature alone, in `noise_group` (its lines are many and their
        // wording is not news); the rest by run, signature and masked message, in `index`.
        let noise = match (role, sig) {
            (FindingRole::Noise, Some(s)) if (s as usize) < self.noise_group.len() => {
                Some(s as usize)
            }
            _ => None,
        };
        let key = noise
            .is_none()
            .then(|| (self.run, sig, line::mask(key_prefix(&info.message))));
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
        let group = self.new_group(sig, role, source, hit, info, event);
        self.groups.push(group);
        let g = self.groups.len() - 1;
        match (noise, key) {
            (Some(s), _) => self.noise_group[s] = Some(g),
            (None, Some(k)) => {
                self.index.insert(k, g);
            }
            (None, None) => {}
        }
        match self.bound() {
            Some(remap) => remap[g],
            None => g,
        }
    }

    /// Keeps at most twice `max_findings` groups in memory: past that, the lowest-ranked go
    /// (by tier, then wrapper, then position), never a fatal cause or fatal unclassified
    /// finding for a lower one, nor a failure whose fate is not known yet.
    /// Returns the new index of every old group ([`NO_FINDING`] for the ones that went)
    /// when it evicted some.
    fn bound(&mut self) -> Option<Vec<usize>> {
        let max = self.opts.max_findings;
        if max == 0 || self.groups.len() < max.saturating_mul(2).max(max + 16) {
            return None;
        }
        let mut order: Vec<usize> = (0..self.groups.len()).collect();
        let protected = |g: &Group| {
            g.fatal()
                || (matches!(g.role, FindingRole::Cause | FindingRole::Unclassified)
                    && g.fate == Fate::Pending)
        };
        order.sort_by_key(|&i| {
            let g = &self.groups[i];
            (!protected(g), g.key(false))
        });
        let keep_n = max.max(
            order
                .iter()
                .take_while(|&&i| protected(&self.groups[i]))
                .count()
                .min(max),
        );
        let mut keep = vec![false; self.groups.len()];
        for &i in order.iter().take(keep_n) {
            keep[i] = true;
        }
        let mut remap = vec![NO_FINDING; self.groups.len()];
        let mut kept = Vec::with_capacity(keep_n);
        for (i, g) in std::mem::take(&mut self.groups).into_iter().enumerate() {
            if keep[i] {
                remap[i] = kept.len();
                kept.push(g);
            } else {
                self.findings_omitted += 1;
            }
        }
        self.groups = kept;
        self.index.retain(|_, v| {
            *v = remap[*v];
            *v != NO_FINDING
        });
        for slot in &mut self.noise_group {
            if let Some(v) = *slot {
                *slot = (remap[v] != NO_FINDING).then_some(remap[v]);
            }
        }
        for waiting in self.pending.values_mut() {
            waiting.retain_mut(|(g, _)| {
                *g = remap[*g];
                *g != NO_FINDING
            });
        }
        self.pending.retain(|_, w| !w.is_empty());
        self.open_loops.retain_mut(|g| {
            *g = remap[*g];
            *g != NO_FINDING
        });
        for (_, g) in &mut self.matches {
            if *g != NO_FINDING {
                *g = remap[*g];
            }
        }
        Some(remap)
    }

    /// Ranks the findings and builds the report.
    pub fn finish(mut self, input: &str, stats: &ScanStats, error: Option<String>) -> Report {
        // Tracebacks still open: the input ended inside them.
        let open: Vec<(String, Vec<String>, bool)> = self
            .tracebacks
            .open_ones()
            .map(|(p, f, logged)| (p.to_string(), f, logged))
            .collect();
        let ended_early = (error.is_some() && stats.bytes > 0) || !open.is_empty();
        // Whatever still waits: its process printed nothing more.
        self.settle_pending_all(true);
        let fatal_known = |groups: &[Group], run: u32, exceptions_only: bool| {
            groups.iter().any(|g| {
                g.run == run
                    && g.fatal()
                    && (g.role == FindingRole::Cause
                        || !exceptions_only
                        || matches!(g.source, Source::TracebackEnd | Source::UncaughtCxx))
            })
        };
        if let Some((process, frames, logged)) = open.first() {
            if !fatal_known(&self.groups, self.run, false) {
                // A traceback from the program's entry point (`<module>`, runpy's
                // `_run_module_as_main`) that no ERROR record introduced is an exception
                // nothing caught: the program is dying of it, cut or not. Others (a server's
                // handler logging a request's error, even with the whole stack) may be
                // survived.
                let uncaught = !logged
                    && frames.first().is_some_and(|f| {
                        f.ends_with(", in <module>") || f.ends_with(", in _run_module_as_main")
                    });
                // Its last frame; a traceback cut right after its header has none.
                let last = frames
                    .last()
                    .cloned()
                    .unwrap_or_else(|| "Traceback (most recent call last):".to_string());
                let mut processes = Vec::new();
                let mut process_set = Distinct::default();
                if !process.is_empty() {
                    processes.push(process.clone());
                    process_set.insert(Distinct::hash(process));
                }
                self.groups.push(Group {
                    signature: None,
                    role: FindingRole::Unclassified,
                    source: Source::CutTraceback,
                    title:
                        "A traceback is cut off by the end of the input: its exception is missing"
                            .into(),
                    severity: Severity::Error,
                    category: "unclassified".into(),
                    line: stats.lines.max(1),
                    last_line: stats.lines.max(1),
                    offset: stats.bytes,
                    text: last,
                    text_truncated: false,
                    count: 1,
                    processes,
                    process_set,
                    timestamp: None,
                    timestamp_text: None,
                    captures: Vec::new(),
                    traceback: Some(frames.clone()),
                    chain_pos: Some(0),
                    is_exception: true,
                    // A guess: it does not fail the log on its own, unless nothing caught it.
                    survivable_sig: !uncaught,
                    error_level: false,
                    fate: if uncaught { Fate::Ended } else { Fate::Pending },
                    run: self.run,
                    retry: None,
                    gave_up: false,
                });
                self.counts.unclassified_lines += 1;
            }
        }
        self.unresolved_retry_loops();
        // Only symptoms: in a run with no fatal cause and no traceback end, the first symptom
        // that does not let its process live on (a fatal or error severity, not survivable)
        // stands in for the unknown cause, keeping its signature. A symptom tagged `peer` (a
        // rank's collective lost its connection to a peer: gloo's `Connection closed by peer`,
        // NCCL's `remote process exited`) reports another process's death, so the first
        // symptom that is not one comes before it (a launcher's `failed (exitcode: -11)` line
        // for the rank that died).
        let peer = |db: &Database, s: u32| db.signature(s).tags.iter().any(|t| t == "peer");
        let mut first_symptom: BTreeMap<u32, (bool, u64, usize)> = BTreeMap::new();
        for (i, g) in self.groups.iter().enumerate() {
            let Some(s) = g.signature.filter(|_| g.role == FindingRole::Symptom) else {
                continue;
            };
            let sig = self.db.signature(s);
            if sig.survivable || !matches!(sig.severity, Severity::Fatal | Severity::Error) {
                continue;
            }
            let key = (peer(self.db, s), g.line, i);
            let first = first_symptom.entry(g.run).or_insert(key);
            if key < *first {
                *first = key;
            }
        }
        for (run, (_, _, i)) in first_symptom {
            if fatal_known(&self.groups, run, true) {
                continue;
            }
            self.groups[i].stand_in("the log shows its symptom", Source::OnlySymptoms);
            self.counts.unclassified_lines += 1;
        }
        // The run whose stand-in candidates count: the current one if it failed, else the
        // last earlier run that failed.
        let current_failed = self.run_failed();
        let (cand_run, cands) = if current_failed {
            let c = std::mem::replace(
                &mut self.candidates,
                Candidates {
                    exception: None,
                    error: None,
                },
            );
            (self.run, Some(c))
        } else {
            match self.failed_run_candidates.take() {
                Some((r, c)) => (r, Some(c)),
                None => (self.run, None),
            }
        };
        if let Some(c) = cands {
            if !fatal_known(&self.groups, cand_run, true) {
                // A survivable cause logged at ERROR whose process was not seen going on is
                // such an error line too (a raylet's memory-monitor kill before the driver's
                // traceback): it stands in, keeping its signature.
                let known_error = self
                    .groups
                    .iter()
                    .enumerate()
                    .filter(|(_, g)| {
                        g.run == cand_run
                            && g.role == FindingRole::Cause
                            && g.error_level
                            && !g.fatal()
                            && g.fate != Fate::WentOn
                    })
                    .min_by_key(|(_, g)| g.line)
                    .map(|(i, _)| i);
                if let Some(i) = known_error {
                    self.groups[i].stand_in("an error line stands in", Source::Level);
                    self.counts.unclassified_lines += 1;
                }
                if let Some(mut g) = c.exception.or(c.error) {
                    self.counts.unclassified_lines += 1;
                    self.counts.unmatched_error_lines =
                        self.counts.unmatched_error_lines.saturating_sub(1);
                    g.fate = Fate::Ended;
                    let line = g.line;
                    self.groups.push(g);
                    let index = self.groups.len() - 1;
                    if let Some(m) = self.matches.iter_mut().find(|(m, _)| m.line == line) {
                        m.1 = index;
                    }
                }
            }
        }
        // A traceback cut by the end of the input that an ERROR record introduced was judged
        // survivable above (a server logging a request's error): the tail is that report.
        let logged_cut = self
            .groups
            .iter()
            .any(|g| g.source == Source::CutTraceback && !g.fatal());
        // A cause a signature knows, even survivable, is the database's answer: no guess.
        let known_cause = self.groups.iter().any(|g| g.role == FindingRole::Cause);
        if !logged_cut && !known_cause && !self.groups.iter().any(Group::fatal) {
            self.tail_stand_in(stats);
        }
        let mut tier_ts_complete = [true; 6];
        for g in &self.groups {
            if g.timestamp.is_none() {
                tier_ts_complete[g.tier() as usize] = false;
            }
        }
        let mut order: Vec<usize> = (0..self.groups.len()).collect();
        order.sort_by_key(|&i| {
            let g = &self.groups[i];
            g.key(tier_ts_complete[g.tier() as usize])
        });
        // --max-findings: the lowest-ranked go, never a failure for a lower one.
        let max = self.opts.max_findings;
        if max > 0 && order.len() > max {
            let failures = order
                .iter()
                .filter(|&&i| self.groups[i].tier() <= 1)
                .count();
            let keep = max.max(failures.min(max));
            self.findings_omitted += (order.len() - keep) as u64;
            order.truncate(keep);
        }
        let mut rank_of = vec![0usize; self.groups.len()];
        let mut findings = Vec::with_capacity(order.len());
        for (rank0, &gi) in order.iter().enumerate() {
            rank_of[gi] = rank0 + 1;
            let g = &self.groups[gi];
            let remediation = g
                .signature
                .map(|s| interpolate(&self.db.signature(s).remediation, &g.captures));
            let fatal = g.fatal();
            let survivable = match g.role {
                FindingRole::Cause | FindingRole::Unclassified => !fatal,
                _ => g.signature.is_some_and(|s| self.db.signature(s).survivable),
            };
            findings.push(Finding {
                rank: rank0 + 1,
                signature: g.signature.map(|s| self.db.signature(s).id.clone()),
                role: g.role,
                severity: g.severity,
                category: g.category.clone(),
                title: g.title.clone(),
                line: g.line,
                last_line: g.last_line,
                offset: g.offset,
                text: g.text.clone(),
                text_truncated: g.text_truncated,
                count: g.count,
                processes: g.processes.clone(),
                process_count: g.process_set.count().max(g.processes.len() as u64),
                survivable,
                ended_process: g.fate == Fate::Ended,
                run: g.run,
                timestamp: g.timestamp_text.clone(),
                tentative: ended_early && g.signature.is_none(),
                captures: g.captures.iter().cloned().collect::<BTreeMap<_, _>>(),
                remediation,
                traceback: g.traceback.clone(),
                why: why(g, tier_ts_complete[g.tier() as usize], self.run),
            });
        }
        self.counts.noise_processes = self.noise_processes.count();
        let matches = self.opts.all.then(|| {
            self.matches
                .into_iter()
                .map(|(mut m, g)| {
                    m.finding = rank_of.get(g).copied().filter(|&r| r > 0);
                    m
                })
                .collect()
        });
        let failed = findings.iter().any(Finding::is_failure);
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
            runs: if stats.lines > 0 { self.run } else { 0 },
            failed,
            findings_omitted: self.findings_omitted,
            ended_early,
            counts: self.counts,
            matches,
        }
    }
}

fn why(g: &Group, by_time: bool, runs: u32) -> String {
    let fatal = g.fatal();
    let mut parts = vec![match (g.role, g.source) {
        (FindingRole::Cause, _) if g.gave_up => {
            "a cause signature matched: a retry loop that no recovery followed before its run failed"
                .to_string()
        }
        (FindingRole::Cause, _) => "a cause signature matched".to_string(),
        (FindingRole::Unclassified, Source::TracebackEnd) => {
            "no signature knows this exception; it ends a failing traceback".to_string()
        }
        (FindingRole::Unclassified, Source::Terminal) => {
            "no signature knows this line; it says a process ended badly".to_string()
        }
        (FindingRole::Unclassified, Source::UncaughtCxx) => {
            "no signature knows this exception; a C++ terminate named it, after the line that names its type".to_string()
        }
        (FindingRole::Unclassified, Source::CutTraceback) if fatal => {
            "the input ends inside this traceback from the program's entry point: nothing caught its exception"
                .to_string()
        }
        (FindingRole::Unclassified, Source::CutTraceback) => {
            "the input ends inside this traceback (a guess: it does not fail the log on its own)"
                .to_string()
        }
        (FindingRole::Unclassified, Source::Level) if g.signature.is_some() => {
            "a survivable cause signature matched this error line, but its process was not seen going on; in a failed run with no known cause it stands in".to_string()
        }
        (FindingRole::Unclassified, Source::OnlySymptoms) => {
            "no cause found; the first fatal symptom stands in for it".to_string()
        }
        (FindingRole::Unclassified, Source::Tail) => {
            "no failure found by any other rule; the first line near the end of the log that says a failure, after which its process logged nothing at INFO, stands in (a guess)".to_string()
        }
        (FindingRole::Unclassified, _) => {
            "no signature matched; the first error line of a failed run stands in".to_string()
        }
        (FindingRole::Symptom, _) => {
            "a symptom signature matched: a consequence of a cause".to_string()
        }
        (FindingRole::Noise, _) => "a noise signature matched: harmless".to_string(),
    }];
    if matches!(g.role, FindingRole::Cause | FindingRole::Unclassified) {
        parts.push(match (fatal, g.fate) {
            (true, Fate::Ended) => "fatal: it ended its process".into(),
            (true, _) => "fatal".into(),
            (false, Fate::WentOn) => "survivable: its process went on".into(),
            (false, _) => "survivable".into(),
        });
    }
    if runs > 1 {
        parts.push(format!("run {} of {runs}", g.run));
    }
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
        let n = g.process_set.count().max(g.processes.len() as u64);
        parts.push(format!(
            "{} lines folded from {} process{}",
            g.count,
            n.max(1),
            if n == 1 { "" } else { "es" }
        ));
    }
    parts.join("; ")
}

/// Scans one input with `db` and analyses it: the whole pipeline in one call.
///
/// ```
/// use faultline::{analyze_input, AnalyzeOptions, Database, EmbeddedDatabase, Input, ScanOptions};
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

/// The report for an input a sweep could not examine at all (a directory walk's unreadable
/// entry): no findings, `error` set, the path as `input` when the error names one. The CLI and
/// the Python package print it like any other report, so one bad input never stops a sweep.
pub fn failed_input_report(db: &Database, e: &crate::Error) -> Report {
    let name = match e {
        crate::Error::Io { path, .. } => path.display().to_string(),
        other => other.to_string(),
    };
    let mut report = Analyzer::new(db, AnalyzeOptions::default()).finish(
        &name,
        &ScanStats::default(),
        Some(e.to_string()),
    );
    if let crate::Error::Io { path, .. } = e {
        report.input_raw = crate::report::raw_path(path);
    }
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
mod tests;
