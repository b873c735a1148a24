//! Runs and process fates: where a new run starts (a start-up banner, a restart, a clock
//! stepping back), which failures wait for their process's next line, and what that line
//! says of them (went on, or ended); what the run evidence says of them (progress of their
//! process, completion of their run, a stop request before them).
//!
//! A failure is fatal when its signature is not survivable, or when it ended its process (a
//! terminal marker or a fatal symptom such as a launcher's `Error: ShardCannotStart` is its
//! process's next line, or its process printed nothing more); an unclassified exception is
//! survivable when its process went on (a later log line of the same process, INFO or
//! WARNING, that is not a shutdown or teardown message, a report of a failure nor a peer's
//! disconnect).

use std::collections::HashMap;

use super::evidence::{Evidence, RunEvidence};
use super::fold::{Fate, Group, Source, Survived, NO_FINDING};
use super::line::{self, process_key, LineInfo};
use super::tail;
use super::words::{client_error, peer_left, says_failure, winds_down};
use crate::report::FindingRole;
use crate::scan::Hit;
use faultline_db::{Marker, Role};

/// Categories of failures that no stop request explains: a scheduler's time limit or
/// preemption and an out-of-memory kill fail their run even after a SIGTERM.
const NOT_A_STOP: &[&str] = &["time-limit", "preemption", "host-oom"];

/// How far back a process's timestamp must step for a new run to start (5 minutes).
const RUN_STEP_BACK_MS: i64 = 5 * 60 * 1000;

/// Processes whose last timestamp is remembered for run boundaries, and processes whose
/// failures wait for progress evidence.
const MAX_TIMED_PROCESSES: usize = 4096;

/// Whether `needle` (not empty) occurs in `hay`: its first byte found by `memchr`, the rest
/// compared there (no searcher is built: this runs once per progress line and waiting process).
fn contains(hay: &[u8], needle: &[u8]) -> bool {
    let Some((&first, rest)) = needle.split_first() else {
        return true;
    };
    memchr::memchr_iter(first, hay).any(|i| hay[i + 1..].starts_with(rest))
}

/// Whether a line shows its process going on: an INFO or WARNING line (or one with a
/// timestamp and no level) that is no exception, traceback, error or failure report, no
/// cause or symptom, and no peer's disconnect; an HTTP 4xx the server answered is going on.
fn goes_on(hit: &Hit, info: &LineInfo, sig_role: Option<Role>) -> bool {
    let m = &hit.matched;
    let level = tail::level(info);
    let ordinary = (level.is_some() || info.timestamp.is_some())
        && level.is_none_or(|l| l <= line::Level::Warning)
        && !m.has(Marker::Exception)
        && !m.has(Marker::TracebackStart)
        && !m.has(Marker::Frame)
        && !m.has(Marker::ErrorLevel)
        && !matches!(sig_role, Some(Role::Cause | Role::Symptom));
    // A line that reports a failure (`Worker group FAILED. 3/3 attempts left; will restart
    // worker group`) is not going on.
    // (In the words the software wrote: quoted data, such as a prompt, says nothing.)
    let own = line::own_words(&info.message);
    let reports_failure = says_failure(&own) && !client_error(&own);
    ordinary && !peer_left(&own) && !reports_failure
}

/// Month of a year-less timestamp (see [`line::LineInfo::timestamp`]).
fn month_of(ms: i64) -> i64 {
    ms / (32 * 24 * 3600 * 1000)
}

/// Lines that could stand in for the cause of a failed run: the first exception line outside
/// a traceback, and the first ERROR-level line, that no signature knows.
#[derive(Default)]
pub(super) struct Candidates {
    pub(super) exception: Option<Group>,
    pub(super) error: Option<Group>,
}

/// The current run, the processes' clocks and the failures waiting for their process.
pub(super) struct Runs {
    /// The current run (1-based).
    pub(super) run: u32,
    /// Whether any line came in the current run.
    has_lines: bool,
    /// What the evidence signatures said of each run so far.
    pub(super) evidence: Evidence,
    /// The program exited on a stop request (an uncaught `KeyboardInterrupt` ended the
    /// interpreter of an untagged log): the next line belongs to a new launch.
    exited: bool,
    /// The current run was opened by such an exit, not by a banner, restart or clock step.
    opened_by_exit: bool,
    /// The current run's failures by the process that printed them: progress evidence of
    /// that process shows they did not end it.
    awaiting_progress: HashMap<String, Vec<usize>>,
    /// Whether the current run has a terminal line.
    terminal: bool,
    last_time: HashMap<String, i64>,
    /// The last terminal line: its process and line number (a C++ `terminate called ...`
    /// is followed by the `what():` line of the exception that ended the process).
    last_terminal: Option<(String, u64)>,
    /// The last hit when it was an ERROR line: its process and line number.
    last_error: Option<(String, u64)>,
    /// Failures waiting for the next line of their process: group, and whether the lines
    /// after it were delivered (so that "printed nothing more" can be told).
    pending: HashMap<String, Vec<(usize, bool)>>,
    /// Whether some process name was not found verbatim in its own raw line (a tag read through
    /// escapes): a raw line can then not be told apart from that process's by its bytes.
    opaque_names: bool,
    /// Stand-in candidates of the current run, and of the last earlier run that failed.
    pub(super) candidates: Candidates,
    failed_run_candidates: Option<(u32, Candidates)>,
}

impl Runs {
    pub(super) fn new() -> Runs {
        Runs {
            run: 1,
            has_lines: false,
            evidence: Evidence::default(),
            exited: false,
            opened_by_exit: false,
            awaiting_progress: HashMap::new(),
            terminal: false,
            last_time: HashMap::new(),
            last_terminal: None,
            last_error: None,
            pending: HashMap::new(),
            opaque_names: false,
            candidates: Candidates::default(),
            failed_run_candidates: None,
        }
    }

    /// Whether no failure waits for its process's next line.
    pub(super) fn nothing_pending(&self) -> bool {
        self.pending.is_empty()
    }

    /// Records whether `process` (read from the raw line `raw`) is written verbatim in it; see
    /// [`Runs::may_concern`].
    pub(super) fn note_process(&mut self, raw: &[u8], process: &str) {
        if !self.opaque_names && !process.is_empty() && !contains(raw, process.as_bytes()) {
            self.opaque_names = true;
        }
    }

    /// Whether a progress line (raw bytes, not parsed) may be of a process that a failure
    /// waits on (for its next line or for its progress). False only when every waiting process
    /// is tagged, each name written verbatim in its own lines, and none in this line: the line
    /// is then counted without being parsed. Past a few waiting processes it says true.
    pub(super) fn may_concern(&self, raw: &[u8]) -> bool {
        const MOST_NAMES: usize = 32;
        if self.opaque_names || self.pending.len() + self.awaiting_progress.len() > MOST_NAMES {
            return true;
        }
        self.pending
            .keys()
            .chain(self.awaiting_progress.keys())
            .any(|k| k.is_empty() || contains(raw, k.as_bytes()))
    }

    /// A line came in the current run.
    pub(super) fn saw_line(&mut self) {
        self.has_lines = true;
    }

    /// Whether the current run has failed so far.
    pub(super) fn failed(&self, groups: &[Group]) -> bool {
        // Groups are made in input order and runs only grow: the current run's are last.
        self.terminal
            || groups
                .iter()
                .rev()
                .take_while(|g| g.run == self.run)
                .any(|g| g.fatal() && g.source != Source::Level)
    }

    /// Starts run `self.run + 1`: every process of the old run ended.
    fn new_run(&mut self, groups: &mut [Group]) {
        self.settle_all(groups, true);
        if self.failed(groups) {
            let c = std::mem::take(&mut self.candidates);
            self.failed_run_candidates = Some((self.run, c));
        } else {
            self.candidates = Candidates::default();
        }
        self.last_time.clear();
        self.awaiting_progress.clear();
        self.evidence.new_run();
        self.opened_by_exit = false;
        self.run = self.run.saturating_add(1);
        self.has_lines = false;
        self.terminal = false;
    }

    /// Decides whether a line starts a new run: a start banner (`start`: its signature and
    /// whether it is a restart, see [`Evidence::starts_run`]), or a process's timestamp
    /// stepping back by more than 5 minutes (not the New Year wrap of a year-less date). Says
    /// whether it did.
    pub(super) fn boundary(
        &mut self,
        groups: &mut [Group],
        start: Option<(u32, bool)>,
        info: &LineInfo,
        process: &str,
    ) -> bool {
        let mut new = false;
        if std::mem::take(&mut self.exited) {
            self.new_run(groups);
            self.opened_by_exit = true;
            new = true;
        }
        if let Some((sig, restart)) = start {
            let ended = self.failed(groups);
            if self
                .evidence
                .starts_run(sig, restart, self.has_lines, ended)
            {
                self.new_run(groups);
                new = true;
            }
            self.evidence.start(sig);
        } else if let Some(t) = info.timestamp {
            // One lookup for a process seen before (nearly every line): its time is
            // replaced in place, without a new key.
            let last = self
                .last_time
                .get_mut(process)
                .map(|v| std::mem::replace(v, t));
            let stepped_back = last.is_some_and(|last| {
                let new_year = month_of(last) == 12 && month_of(t) == 1;
                t < last - RUN_STEP_BACK_MS && !new_year && self.has_lines
            });
            if stepped_back {
                self.new_run(groups);
                new = true;
            }
            if last.is_none() || stepped_back {
                if self.last_time.len() >= MAX_TIMED_PROCESSES {
                    self.last_time.clear();
                }
                self.last_time.insert(process_key(process), t);
            }
        }
        self.has_lines = true;
        new
    }

    /// A new failure or symptom `group` of `process` in the current run: after a stop request it is
    /// shutdown noise, unless it is a kill no stop explains (a scheduler's time limit or
    /// preemption, an out-of-memory kill: its category); else progress of its process will
    /// show that it went on.
    pub(super) fn new_failure(&mut self, groups: &mut [Group], group: usize, process: &str) {
        let Some(g) = groups.get_mut(group) else {
            return;
        };
        if g.role == FindingRole::Noise {
            return;
        }
        if let Some(stop) = self.evidence.current.stopped {
            if !NOT_A_STOP.contains(&g.category.as_str()) {
                g.survived = Some(Survived::AfterStop(stop));
            }
            return;
        }
        if process.is_empty() {
            return;
        }
        if self.awaiting_progress.len() >= MAX_TIMED_PROCESSES
            && !self.awaiting_progress.contains_key(process)
        {
            return;
        }
        let list = self
            .awaiting_progress
            .entry(process_key(process))
            .or_default();
        if list.len() < 64 {
            list.push(group);
        }
    }

    /// Whether progress evidence needs its line's process: some failure of the current run
    /// waits for progress of its process.
    pub(super) fn awaits_progress(&self) -> bool {
        !self.awaiting_progress.is_empty()
    }

    /// Progress evidence at `line` from `process`: the run is making progress, and the
    /// failures of that process before it did not end it (an untagged line proves nothing of
    /// the failures of tagged processes: other ranks may print it).
    pub(super) fn progress(&mut self, groups: &mut [Group], process: &str, line: u64) {
        self.evidence.current.progress = Some(line);
        self.has_lines = true;
        if self.awaiting_progress.is_empty() {
            return;
        }
        if let Some(waiting) = self.awaiting_progress.remove(process) {
            for g in waiting {
                if let Some(g) = groups.get_mut(g) {
                    if g.survived.is_none() && g.run == self.run {
                        g.survived = Some(Survived::Progress(line));
                    }
                }
            }
        }
    }

    /// Completion evidence at `line`: every failure of the run before it was survived, and a
    /// terminal line before it did not fail the run.
    pub(super) fn completed(&mut self, groups: &mut [Group], line: u64) {
        self.evidence.current.completed = Some(line);
        self.terminal = false;
        self.awaiting_progress.clear();
        for g in groups.iter_mut().rev().take_while(|g| g.run == self.run) {
            if g.role != FindingRole::Noise && g.survived.is_none() && g.line < line {
                g.survived = Some(Survived::Completed(line));
            }
        }
    }

    /// Stop evidence at `line`: the run was asked to stop (the first request counts).
    pub(super) fn stopped(&mut self, line: u64) {
        self.evidence.current.stopped.get_or_insert(line);
    }

    /// The program exited on the stop request at this line: what follows is a new launch.
    pub(super) fn exited(&mut self) {
        self.exited = true;
    }

    /// At the end of the input: a last run that an exit opened and that shows nothing (no
    /// evidence, no finding in `groups`) is no launch but the exited program's leftovers (its
    /// worker processes printing on for a while): its lines go back to the run before it.
    pub(super) fn fold_leftover_run(&mut self, groups: &[Group]) {
        let empty = self.evidence.current == RunEvidence::default()
            && !groups.iter().any(|g| g.run == self.run);
        if self.opened_by_exit && empty && self.run > 1 {
            self.evidence.reopen_last();
            self.run -= 1;
            self.opened_by_exit = false;
        }
    }

    /// Whether the line `line` of `process` comes right after an ERROR line of its process;
    /// remembers whether this one is an ERROR line.
    pub(super) fn after_error(&mut self, process: &str, line: u64, info: &LineInfo) -> bool {
        let logged = self
            .last_error
            .as_ref()
            .is_some_and(|(p, l)| l + 1 == line && *p == process);
        self.last_error = (info.level.is_some_and(|l| l >= line::Level::Error))
            .then(|| (process_key(process), line));
        logged
    }

    /// Whether the line `line` of `process` comes right after a terminal line of its process.
    pub(super) fn after_terminal(&self, process: &str, line: u64) -> bool {
        self.last_terminal
            .as_ref()
            .is_some_and(|(p, l)| l + 1 == line && *p == process)
    }

    /// A terminal line: it fails its run unless `logged` (a logged one fails its run only
    /// when its process did not go on, by its fate).
    pub(super) fn terminal(&mut self, process: &str, line: u64, logged: bool) {
        // After a stop request, a process killed on its way out is shutdown noise.
        self.terminal |= !logged && self.evidence.current.stopped.is_none();
        self.last_terminal = Some((process_key(process), line));
    }

    /// Settles every pending failure: `ended` when the processes ended (end of input, a new
    /// run, a terminal line no process owns).
    pub(super) fn settle_all(&mut self, groups: &mut [Group], ended: bool) {
        for (_, waiting) in self.pending.drain() {
            for (g, watched) in waiting {
                if let Some(group) = groups.get_mut(g) {
                    // Unwatched lines (no context after them): the fate stays unknown.
                    if group.fate == Fate::Pending && ended && watched {
                        group.fate = Fate::Silent;
                    }
                }
            }
        }
    }

    /// The next line of `process` after a failure decides its fate. `reports_death`: the
    /// line's signature is a fatal symptom (a launcher's `Error: ShardCannotStart`, a dead
    /// engine or actor), which says the process that printed the failure ended; the lines of
    /// another process (a second shard's stderr) that follow it do not make it go on.
    pub(super) fn settle(
        &mut self,
        groups: &mut [Group],
        process: &str,
        hit: &Hit,
        info: &LineInfo,
        sig_role: Option<Role>,
        reports_death: bool,
    ) {
        if !process.is_empty() {
            self.drop_candidates_that_went_on(process, hit, info, sig_role);
        }
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
                    if let Some(group) = groups.get_mut(g) {
                        if watched || line == group.last_line.saturating_add(1) {
                            group.fate = Fate::Ended;
                        }
                    }
                }
            }
            return;
        }
        if !self.pending.contains_key(process) {
            return;
        }
        let fate = if terminal || reports_death || winds_down(&line::own_words(&info.message)) {
            Fate::Ended
        } else if goes_on(hit, info, sig_role) {
            Fate::WentOn
        } else {
            return;
        };
        if let Some(waiting) = self.pending.remove(process) {
            for (g, _) in waiting {
                if let Some(group) = groups.get_mut(g) {
                    if group.fate == Fate::Pending {
                        group.fate = fate;
                    }
                }
            }
        }
    }

    /// A stand-in candidate of `process` (an error line no signature knows) is no cause when
    /// this later line shows its process went on (a request's error answered with a 400).
    fn drop_candidates_that_went_on(
        &mut self,
        process: &str,
        hit: &Hit,
        info: &LineInfo,
        sig_role: Option<Role>,
    ) {
        let of = |g: &Option<Group>| {
            g.as_ref().is_some_and(|g| {
                g.processes.first().is_some_and(|p| p == process) && g.line < hit.line
            })
        };
        let c = &mut self.candidates;
        let (exception, error) = (of(&c.exception), of(&c.error));
        if !(exception || error) || !goes_on(hit, info, sig_role) {
            return;
        }
        if exception {
            c.exception = None;
        }
        if error {
            c.error = None;
        }
    }

    /// Waits for the next line of `process` to decide the fate of `group`'s first failure.
    pub(super) fn watch(
        &mut self,
        groups: &mut [Group],
        process: &str,
        group: usize,
        watched: bool,
    ) {
        let Some(g) = groups.get(group) else {
            return;
        };
        if g.count != 1 || g.fate != Fate::Pending {
            return;
        }
        // No cap on the waiting processes: each waits for a finding the fold store keeps
        // (evicted ones leave, see `remap`), so they are as many as the findings at most.
        // Flushing them unsettled left a failure whose process died "survivable".
        let list = self.pending.entry(process_key(process)).or_default();
        if list.len() < 64 {
            list.push((group, watched));
        }
    }

    /// The stand-in candidates that count at the end: the current run's if it failed, else
    /// the last earlier run's that failed, with their run.
    pub(super) fn take_candidates(&mut self, groups: &[Group]) -> (u32, Option<Candidates>) {
        if self.failed(groups) {
            (self.run, Some(std::mem::take(&mut self.candidates)))
        } else {
            match self.failed_run_candidates.take() {
                Some((r, c)) => (r, Some(c)),
                None => (self.run, None),
            }
        }
    }

    /// Follows the groups' new indexes after an eviction (see [`super::fold::FoldStore::retain`]).
    pub(super) fn remap(&mut self, remap: &[usize]) {
        for waiting in self.pending.values_mut() {
            waiting.retain_mut(|(g, _)| {
                *g = remap[*g];
                *g != NO_FINDING
            });
        }
        self.pending.retain(|_, w| !w.is_empty());
        for waiting in self.awaiting_progress.values_mut() {
            waiting.retain_mut(|g| {
                *g = remap[*g];
                *g != NO_FINDING
            });
        }
        self.awaiting_progress.retain(|_, w| !w.is_empty());
    }
}
