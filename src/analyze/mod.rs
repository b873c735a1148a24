//! From hits to a diagnosis: parse each hit line's prefixes, rebuild Python tracebacks per
//! process (chains included), recognise runs, fold the same message from many ranks into one
//! finding as the hits arrive, decide which failures are fatal and which were survived, and
//! rank them.
//!
//! The [`Analyzer`] here drives owned sub-states, each in its own file; the files, lowest
//! first (a file uses only the ones before it):
//! - `words`: word tests on a message (an exception's name, stopping, a failure in words);
//! - `line` (public): a line's prefixes (process, level, timestamp) and the fold key;
//! - `evidence`: what the run evidence (start, progress, completion, stop lines) said of each
//!   run, and each run's outcome;
//! - `traceback`: Python tracebacks rebuilt per process;
//! - `tail`: the tail rule's reading of the log's last lines;
//! - `fold`: the fold store, one finding per run, signature and masked message;
//! - `runs`: run boundaries and process fates (failures waiting for their process's next
//!   line);
//! - `retry`: retry loops and the rule that makes an unresolved one a cause;
//! - `rank`: tiers, the rank key, the bound on the findings kept, each finding's `why`;
//! - `stand_in`: the end-of-input rules that make a line stand in for an unknown cause.

mod baseline;
mod evidence;
mod first;
mod fold;
mod job;
pub mod line;
mod rank;
mod retry;
mod runs;
mod stand_in;
mod tail;
mod template;
mod traceback;
mod words;

use crate::report::{
    Counts, DatabaseRef, Finding, FindingRole, FirstFailure, MatchedLine, Report, SCHEMA_VERSION,
};
use crate::scan::{Hit, ScanStats};
use faultline_db::{Anchor, Database, LineMatch, Marker, QuietLevel};
use faultline_db::{Role, Severity};

pub use baseline::{Baseline, BaselineWarning, LoadedBaseline, DEFAULT_BASELINE_MAX_TEMPLATES};
use first::Stamp;
pub use first::WAITS_ON_PEER;
use fold::{role_of, Distinct, FoldStore, Seen, Source, Survived, NO_FINDING};
pub use job::{analyze_job, DEFAULT_CLOCK_SKEW};
use line::process_key;
use retry::RetryLoops;
use runs::Runs;
use tail::Recent;
pub use template::{line_template, template_hash};
use traceback::{Event, Tracebacks};

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
    /// Good runs of the same job: findings whose first line they printed too are
    /// `in_baseline` and rank after the new ones of their kind.
    pub baseline: Option<std::sync::Arc<Baseline>>,
    /// Failures of different ranks or nodes this close in time are simultaneous (clocks
    /// differ by this much): see [`analyze_job`].
    pub clock_skew: std::time::Duration,
}

impl Default for AnalyzeOptions {
    fn default() -> Self {
        AnalyzeOptions {
            all: false,
            max_findings: DEFAULT_MAX_FINDINGS,
            baseline: None,
            clock_skew: DEFAULT_CLOCK_SKEW,
        }
    }
}

/// Consumes hits in input order and produces a [`Report`].
pub struct Analyzer<'db> {
    db: &'db Database,
    opts: AnalyzeOptions,
    /// The findings and their fold keys.
    fold: FoldStore<'db>,
    /// The current run and the failures waiting for their process.
    runs: Runs,
    /// The current run's retry loops.
    retry: RetryLoops,
    tracebacks: Tracebacks,
    counts: Counts,
    /// The matched lines (`--all`), each with its group.
    matches: Vec<(MatchedLine, usize)>,
    noise_processes: Distinct,
    /// The last lines matched and the last error lines, for the tail rule.
    recent: Recent,
    /// Hits that took the full path (their line parsed): the work the fast path saves.
    parsed: u64,
}

/// What the evidence signatures that matched a line say: a start banner (its signature, and
/// whether it is a restart), and progress, completion or stop (completion first).
#[derive(Clone, Copy, Default)]
struct LineEvidence {
    start: Option<(u32, bool)>,
    kind: Option<Role>,
}

/// A hit line past the fast path of noise repeats: what [`Analyzer::push`] read of it.
struct Line<'a> {
    seen: Seen<'a>,
    process: &'a str,
    terminal: bool,
    /// A terminal line no signature knows, logged as a record at ERROR level or below.
    logged_terminal: bool,
    /// The line after a C++ terminate of its process, `what(): ...`.
    what_of_terminate: bool,
}

impl<'db> Analyzer<'db> {
    /// A new analysis over `db`'s signatures.
    pub fn new(db: &'db Database, opts: AnalyzeOptions) -> Analyzer<'db> {
        Analyzer {
            db,
            fold: FoldStore::new(db, opts.baseline.clone()),
            opts,
            runs: Runs::new(),
            retry: RetryLoops::default(),
            tracebacks: Tracebacks::default(),
            counts: Counts::default(),
            matches: Vec::new(),
            noise_processes: Distinct::default(),
            recent: Recent::new(),
            parsed: 0,
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

    /// What the evidence signatures among `sigs` say of a line.
    fn evidence_of(&self, sigs: &[u32]) -> LineEvidence {
        let mut ev = LineEvidence::default();
        for &s in sigs {
            let sig = self.db.signature(s);
            match sig.role {
                Role::Start => {
                    let restart = sig.tags.iter().any(|t| t == "restart");
                    if ev.start.is_none_or(|(_, r)| restart && !r) {
                        ev.start = Some((s, restart));
                    }
                }
                Role::Completed => ev.kind = Some(Role::Completed),
                Role::Stopped if ev.kind != Some(Role::Completed) => ev.kind = Some(Role::Stopped),
                Role::Progress if ev.kind.is_none() => ev.kind = Some(Role::Progress),
                _ => {}
            }
        }
        ev
    }

    /// Takes the next hit (hits must arrive in input order); a hit with nothing matched is a
    /// context line after a traceback line.
    pub fn push(&mut self, hit: &Hit) {
        let ev = self.evidence_of(&hit.matched.signatures);
        let winner = self.winner(&hit.matched.signatures);
        let evidence = ev.start.is_some() || ev.kind.is_some();
        if winner.is_none()
            && hit.matched.markers == 0
            && ev.start.is_none()
            && ev.kind == Some(Role::Progress)
            && ((!self.runs.awaits_progress() && self.runs.nothing_pending())
                || !self.runs.may_concern(&hit.text))
        {
            // A progress line while no failure waits for its process: counted, not parsed.
            self.counts.evidence_lines += 1;
            self.runs.progress(&mut self.fold.groups, "", hit.line);
            return;
        }
        if let Some(w) = winner {
            self.recent.matched(hit.line);
            self.retry.read_tags(self.db);
            // (While failures wait for their process's next line, every line is parsed.)
            if hit.matched.markers == 0
                && !evidence
                && self.runs.nothing_pending()
                && self.db.signature(w).role == Role::Noise
                && self.retry.untagged(w)
            {
                if let Some(g) = self.fold.noise_group(w) {
                    self.repeat_noise(hit, w, g);
                    return;
                }
            }
        }
        let info = self.parse(hit);
        match self.counted(hit, &info) {
            None => self.push_parsed(hit, info, ev, winner),
            Some(matched) => {
                // The signatures and markers that do not count are as if they had not matched.
                let hit = Hit {
                    matched,
                    ..hit.clone()
                };
                let ev = self.evidence_of(&hit.matched.signatures);
                let winner = self.winner(&hit.matched.signatures);
                self.push_parsed(&hit, info, ev, winner);
            }
        }
    }

    /// The signatures of a hit line that count, when some do not (`None`: all count). A
    /// signature anchored at the message (the default) counts only where its match starts at
    /// an anchor point of the line (see `line/anchor.rs`): text quoted inside another
    /// message, such as a request's prompt, never chooses the diagnosis. A cause or symptom
    /// on a line logged at INFO or DEBUG (the level its recognised prefix names) counts only
    /// when its signature declares that level (`quiet_levels`). The check runs only here, on
    /// lines the scan matched and the analysis parses (a repeat of a known noise line, folded
    /// on the fast path, is not checked: it only counts in a finding that exists).
    fn counted(&self, hit: &Hit, info: &line::LineInfo) -> Option<LineMatch> {
        let sigs = &hit.matched.signatures;
        let quiet = match info.level {
            Some(line::Level::Info) => Some(QuietLevel::Info),
            Some(line::Level::Debug) => Some(QuietLevel::Debug),
            _ => None,
        };
        let mut anchored: Option<line::Anchored> = None;
        let mut read = || line::Anchored::new(&hit.text);
        let mut kept: Option<Vec<u32>> = None;
        for (k, &s) in sigs.iter().enumerate() {
            let sig = self.db.signature(s);
            let failure = matches!(sig.role, Role::Cause | Role::Symptom);
            let counts = quiet.is_none_or(|q| !failure || sig.quiet_levels.contains(&q))
                && (sig.anchor == Anchor::Anywhere
                    || anchored.get_or_insert_with(&mut read).matches(self.db, s)
                    // A line cut at --max-line-bytes whose match lies past the cut: where
                    // it starts cannot be told, and it counts.
                    || (hit.text_truncated && !self.db.matches_in(s, &hit.text)));
            match (&mut kept, counts) {
                (None, false) => kept = Some(sigs[..k].to_vec()),
                (Some(kept), true) => kept.push(s),
                _ => {}
            }
        }
        // On a line logged at INFO or DEBUG, an exception's name, a terminal line or an ERROR
        // record quoted inside the message is log text too (a prompt holding `ptxas fatal :
        // ...`): the marker counts only at an anchor point.
        let mut markers = hit.matched.markers;
        for marker in [Marker::Exception, Marker::Terminal, Marker::ErrorLevel] {
            if quiet.is_some()
                && hit.matched.has(marker)
                && !hit.text_truncated
                && !anchored.get_or_insert_with(&mut read).has_marker(marker)
            {
                markers &= !(marker as u8);
            }
        }
        if kept.is_none() && markers == hit.matched.markers {
            return None;
        }
        Some(LineMatch {
            signatures: kept.unwrap_or_else(|| sigs.clone()),
            markers,
        })
    }

    /// [`Analyzer::push`] for a line past its fast paths, parsed as `info`, with its counted
    /// signatures' evidence `ev` and winner.
    fn push_parsed(
        &mut self,
        hit: &Hit,
        info: line::LineInfo,
        ev: LineEvidence,
        winner: Option<u32>,
    ) {
        let evidence = ev.start.is_some() || ev.kind.is_some();
        let process = process_key(info.process.as_deref().unwrap_or(""));
        self.runs.note_process(&hit.text, &process);
        // A start line in the middle of a traceback being printed is log text (another
        // process echoing a banner or `restart_count=1`), not a new launch.
        let start = ev.start.filter(|_| !self.tracebacks.printing(hit.line));
        if self
            .runs
            .boundary(&mut self.fold.groups, start, &info, &process)
        {
            self.tracebacks.clear();
            self.retry.new_run();
        }
        let sig_role = winner.map(|w| self.db.signature(w).role);
        let reports_death = winner.is_some_and(|w| {
            let sig = self.db.signature(w);
            sig.role == Role::Symptom && sig.severity == Severity::Fatal && !sig.survivable
        });
        self.runs.settle(
            &mut self.fold.groups,
            &process,
            hit,
            &info,
            sig_role,
            reports_death,
        );
        if evidence {
            self.counts.evidence_lines += 1;
        }
        match ev.kind {
            Some(Role::Progress) => self
                .runs
                .progress(&mut self.fold.groups, &process, hit.line),
            Some(Role::Completed) => self.runs.completed(&mut self.fold.groups, hit.line),
            Some(Role::Stopped) => self.runs.stopped(hit.line),
            _ => {}
        }
        let logged = self.runs.after_error(&process, hit.line, &info);
        let event = self.tracebacks.observe(&process, hit, &info, logged);
        if evidence && winner.is_none() {
            // Evidence is known text: it makes no finding (a `KeyboardInterrupt` that ends a
            // traceback is the run being stopped, not an unknown exception). One that reached
            // the entry point of an untagged program ended it: a later line is a new launch.
            if let Event::Exception { frames, .. } = &event {
                if ev.kind == Some(Role::Stopped)
                    && process.is_empty()
                    && traceback::from_entry_point(frames)
                {
                    self.runs.exited();
                }
            }
            return;
        }
        let terminal = hit.matched.has(Marker::Terminal);
        // A terminal line no signature knows, logged as a record at ERROR level or below: a
        // process reports that something it ran ended badly, and may go on after it.
        let logged_terminal = terminal
            && winner.is_none()
            && matches!(event, Event::None)
            && tail::level(&info).is_some_and(|l| l <= line::Level::Error);
        // The exception a C++ terminate names, on the line after it, ended its process.
        let what_of_terminate = self.runs.after_terminal(&process, hit.line)
            && info.message.trim_start().starts_with("what():");
        if terminal {
            self.runs.terminal(&process, hit.line, logged_terminal);
        }
        if let Some(p) = &info.process {
            if sig_role == Some(Role::Noise) {
                self.noise_processes.insert(Distinct::hash(p));
            }
        }
        let line = Line {
            seen: Seen {
                hit,
                info: &info,
                event: &event,
            },
            process: &process,
            terminal,
            logged_terminal,
            what_of_terminate,
        };
        match winner {
            Some(w) => self.push_matched(w, &line),
            None => self.push_unknown(&line),
        }
    }

    /// Parses a hit line past the fast paths, and notes its timestamp (a later failure's
    /// time when its own line prints none).
    fn parse(&mut self, hit: &Hit) -> line::LineInfo {
        self.parsed += 1;
        let info = line::parse_line(&hit.text);
        self.fold.stamp(&info);
        info
    }

    /// A repeat of a known noise line `w` (group `g`): only its process and position change.
    fn repeat_noise(&mut self, hit: &Hit, w: u32, g: usize) {
        self.counts.matched_lines += 1;
        self.counts.noise_lines += 1;
        let process = line::process(&hit.text);
        if let Some(p) = &process {
            self.noise_processes.insert(Distinct::hash(p));
        }
        self.fold.groups[g].repeat(hit.line, process.as_ref());
        self.runs.saw_line();
        self.record(hit, Some(w), FindingRole::Noise, g);
    }

    /// A line signature `w` won: folded into its finding, its fate watched when a cause.
    fn push_matched(&mut self, w: u32, l: &Line) {
        let hit = l.seen.hit;
        self.counts.matched_lines += 1;
        let sig = self.db.signature(w);
        match sig.role {
            Role::Cause => self.counts.cause_lines += 1,
            Role::Symptom => self.counts.symptom_lines += 1,
            Role::Noise => self.counts.noise_lines += 1,
            Role::Start | Role::Progress | Role::Completed | Role::Stopped => {}
        }
        let role = role_of(sig.role);
        let group = self.fold_line(Some(w), role, Source::Signature, &l.seen);
        self.retry
            .observe(&mut self.fold.groups, w, group, hit.line);
        let uncaught = matches!(l.seen.event, Event::Exception { uncaught: true, .. });
        if l.terminal || l.what_of_terminate || (uncaught && role == FindingRole::Cause) {
            self.fold.end(group);
        } else if role == FindingRole::Cause {
            // Lines after a traceback line were delivered: "printed nothing more" can be told.
            let watched = matches!(l.seen.event, Event::Exception { .. });
            self.runs
                .watch(&mut self.fold.groups, l.process, group, watched);
        }
        self.record(hit, Some(w), role, group);
    }

    /// A line no signature knows: a traceback's end, a C++ exception's message, a terminal
    /// line, or a line that could stand in for an unknown cause.
    fn push_unknown(&mut self, l: &Line) {
        let Seen { hit, info, event } = l.seen;
        match event {
            // An unknown innermost exception (a wrapper's is not news), or a line that ends a
            // traceback by its structure alone.
            Event::Exception {
                chain_pos,
                uncaught,
                ..
            } if *chain_pos == 0 || !hit.matched.has(Marker::Exception) => {
                let group = self.unclassified(Source::TracebackEnd, &l.seen);
                if *uncaught {
                    // The interpreter printed it as the program died: nothing goes on after.
                    self.fold.end(group);
                } else {
                    self.runs
                        .watch(&mut self.fold.groups, l.process, group, true);
                }
            }
            // What the uncaught C++ exception said: its message, as a Python exception line
            // is, rather than the terminate line that names only its type.
            Event::None if l.what_of_terminate => {
                let group = self.unclassified(Source::UncaughtCxx, &l.seen);
                self.fold.end(group);
            }
            Event::None if l.terminal => {
                let group = self.unclassified(Source::Terminal, &l.seen);
                if l.logged_terminal {
                    // Ended unless a line of its process shows it went on.
                    self.runs
                        .watch(&mut self.fold.groups, l.process, group, true);
                } else {
                    self.fold.end(group);
                }
            }
            Event::None if self.fallback_candidate(hit, info, l.process) => {
                let known = self.fold.knows(&info.message);
                if known {
                    self.counts.baseline_lines += 1;
                } else {
                    self.counts.unmatched_error_lines += 1;
                }
                self.recent.unmatched_error(hit.line);
                self.record(hit, None, FindingRole::Unclassified, NO_FINDING);
                let exception = hit.matched.has(Marker::Exception);
                let candidates = &self.runs.candidates;
                let slot = if exception {
                    &candidates.exception
                } else {
                    &candidates.error
                };
                // The first candidate, or the first new one after candidates the good run
                // printed too.
                if slot.as_ref().is_none_or(|g| g.in_baseline && !known) {
                    let mut group = self.fold.new_group(
                        None,
                        FindingRole::Unclassified,
                        Source::Level,
                        &l.seen,
                        self.runs.run,
                    );
                    group.survivable_sig = false;
                    if let Some(stop) = self.runs.evidence.current.stopped {
                        group.survived = Some(Survived::AfterStop(stop));
                    }
                    if exception {
                        self.runs.candidates.exception = Some(group);
                    } else {
                        self.runs.candidates.error = Some(group);
                    }
                }
            }
            _ => {}
        }
    }

    /// Folds a line no signature knows into an unclassified finding from `source`, and records
    /// it: the group's index.
    fn unclassified(&mut self, source: Source, seen: &Seen) -> usize {
        self.counts.unclassified_lines += 1;
        let group = self.fold_line(None, FindingRole::Unclassified, source, seen);
        self.record(seen.hit, None, FindingRole::Unclassified, group);
        group
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

    /// Keeps the matched line (`--all`) with its signature, role and group.
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

    /// Folds a line into its finding (see [`FoldStore::fold`]) and keeps the findings in
    /// bounds: the finding's index.
    fn fold_line(
        &mut self,
        sig: Option<u32>,
        role: FindingRole,
        source: Source,
        seen: &Seen,
    ) -> usize {
        let (g, new) = self.fold.fold(sig, role, source, seen, self.runs.run);
        if !new {
            return g;
        }
        let process = seen.info.process.as_deref().unwrap_or("");
        self.runs.new_failure(&mut self.fold.groups, g, process);
        match self.bound() {
            Some(remap) => remap[g],
            None => g,
        }
    }

    /// Keeps at most twice `max_findings` groups in memory (see [`rank::keep_in_memory`]).
    /// Returns the new index of every old group ([`NO_FINDING`] for the ones that went)
    /// when it evicted some.
    fn bound(&mut self) -> Option<Vec<usize>> {
        let keep = rank::keep_in_memory(&self.fold.groups, self.opts.max_findings)?;
        let remap = self.fold.retain(&keep);
        self.runs.remap(&remap);
        self.retry.remap(&remap);
        for (_, g) in &mut self.matches {
            if *g != NO_FINDING {
                *g = remap[*g];
            }
        }
        Some(remap)
    }

    /// Ranks the findings and builds the report.
    pub fn finish(self, input: &str, stats: &ScanStats, error: Option<String>) -> Report {
        self.finish_timed(input, stats, error).0
    }

    /// [`Analyzer::finish`], with each finding's time (see `first.rs`).
    fn finish_timed(
        mut self,
        input: &str,
        stats: &ScanStats,
        error: Option<String>,
    ) -> (Report, Vec<Stamp>) {
        // Tracebacks still open: their processes never closed them. The input ended inside
        // one when its last line is among the input's last lines (else the log went on
        // without it: its process was killed or left it).
        let mut cut = false;
        let open: Vec<(String, Vec<String>, bool)> = self
            .tracebacks
            .open_ones()
            .map(|(p, f, logged, last)| {
                cut |= last.saturating_add(traceback::LIVE_LINES) >= stats.lines;
                (p.to_string(), f, logged)
            })
            .collect();
        let ended_early = (error.is_some() && stats.bytes > 0) || cut;
        let groups = &mut self.fold.groups;
        // Whatever still waits: its process printed nothing more.
        self.runs.settle_all(groups, true);
        self.runs.fold_leftover_run(groups);
        // The last run's evidence: after a stop request the end of the input is shutdown
        // noise, and after completion a line of the tail is no failure.
        let last = self.runs.evidence.current;
        if let (Some(first), None) = (open.first(), last.stopped) {
            stand_in::cut_traceback(groups, first, stats, self.runs.run, &mut self.counts);
        }
        retry::unresolved_retry_loops(groups, self.db);
        stand_in::only_symptoms(groups, self.db, &mut self.counts);
        let (candidates_run, candidates) = self.runs.take_candidates(groups);
        if let Some(c) = candidates {
            stand_in::error_line(
                groups,
                &mut self.matches,
                candidates_run,
                c,
                &mut self.counts,
            );
        }
        if !last.ended() {
            stand_in::tail_line(
                &mut self.fold,
                &mut self.matches,
                &self.recent,
                stats,
                self.runs.run,
                &mut self.counts,
            );
        }
        let (findings, rank_of, omitted) = rank::findings(
            &mut self.fold.groups,
            self.db,
            self.opts.max_findings,
            ended_early,
            self.runs.run,
            self.opts.baseline.is_some(),
        );
        self.fold.omitted += omitted;
        let (findings, rank_of, first_failure, stamps) =
            self.first_failure(findings, rank_of, input);
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
        let run_outcomes = if stats.lines > 0 {
            let mut fatal: Vec<Option<u64>> = vec![None; self.runs.run as usize];
            for f in findings.iter().filter(|f| f.is_failure()) {
                if let Some(slot) = fatal.get_mut(f.run.saturating_sub(1) as usize) {
                    slot.get_or_insert(f.line);
                }
            }
            self.runs
                .evidence
                .runs()
                .zip(1..)
                .map(|(e, run)| e.outcome(run, fatal.get(run as usize - 1).copied().flatten()))
                .collect()
        } else {
            Vec::new()
        };
        let report = Report {
            schema_version: SCHEMA_VERSION,
            input: input.to_string(),
            input_raw: None,
            inputs: None,
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
            runs: if stats.lines > 0 { self.runs.run } else { 0 },
            failed,
            run_outcomes,
            findings_omitted: self.fold.omitted,
            ended_early,
            counts: self.counts,
            baseline: self.opts.baseline.as_ref().map(|b| b.info()),
            first_failure,
            matches,
        };
        (report, stamps)
    }

    /// The findings' times and, in a log whose lines name several ranks or nodes, the
    /// failures in time order (`first.rs`): the findings, each group's new rank, the
    /// report's `first_failure`, and the times in the new order.
    #[allow(clippy::type_complexity)]
    fn first_failure(
        &self,
        mut findings: Vec<Finding>,
        mut rank_of: Vec<usize>,
        input: &str,
    ) -> (Vec<Finding>, Vec<usize>, Option<FirstFailure>, Vec<Stamp>) {
        let mut stamps = vec![Stamp::default(); findings.len()];
        for (g, &r) in self.fold.groups.iter().zip(&rank_of) {
            if let Some(slot) = r.checked_sub(1).and_then(|r| stamps.get_mut(r)) {
                // A traceback cut by the end of the input is as late as the input's last time.
                let before = match g.source {
                    fold::Source::CutTraceback => self.fold.last_stamp(),
                    _ => g.before,
                };
                *slot = first::stamp_of(g.timestamp, g.timestamp_text.as_deref(), before);
            }
        }
        let skew = i64::try_from(self.opts.clock_skew.as_millis()).unwrap_or(i64::MAX);
        let (ff, perm) = first::within_log(self.db, &mut findings, &stamps, skew, input);
        if let Some(perm) = perm {
            let old = stamps.clone();
            for (o, &new) in perm.iter().enumerate() {
                stamps[new - 1] = old[o].clone();
            }
            for r in rank_of.iter_mut().filter(|r| **r > 0) {
                *r = perm[*r - 1];
            }
        }
        (findings, rank_of, ff, stamps)
    }
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
    analyze_timed(db, input, scan, opts).0
}

/// [`analyze_input`], with each finding's time (see `first.rs`).
fn analyze_timed(
    db: &Database,
    input: crate::scan::Input,
    scan: &crate::scan::ScanOptions,
    opts: AnalyzeOptions,
) -> (Report, Vec<Stamp>) {
    let name = input.path().display().to_string();
    let raw = crate::report::raw_path(input.path());
    let mut analyzer = Analyzer::new(db, opts);
    let (stats, err) = input.scan(db, scan, &mut |hit| analyzer.push(&hit));
    let (mut report, stamps) = analyzer.finish_timed(&name, &stats, err.map(|e| e.to_string()));
    report.input_raw = raw;
    (report, stamps)
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
