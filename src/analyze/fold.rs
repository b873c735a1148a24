//! The fold store: one finding (a [`Group`]) per run, signature and masked message, noise by
//! signature alone, with a bounded count of the distinct processes that printed it.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use super::baseline::Baseline;
use super::line::{self, LineInfo};
use super::traceback::{self, Event};
use super::words::{exception_name, names_a_class};
use crate::report::{FindingRole, MAX_PROCESSES_LISTED};
use crate::scan::Hit;
use faultline_db::{Database, Role, Severity};

/// Longest message prefix that decides folding: two lines alike for this long are the same
/// message, and a huge line does not cost a second copy of itself as a key.
const FOLD_KEY_BYTES: usize = 4096;

/// Longest capture a finding keeps, in bytes (longer ones are cut and marked `…`): a finding
/// keeps one copy of its long line, its text.
const CAPTURE_BYTES: usize = 4096;

/// `captures` with each value cut to [`CAPTURE_BYTES`].
fn cut_captures(mut captures: Vec<(String, String)>) -> Vec<(String, String)> {
    for (_, value) in &mut captures {
        if value.len() > CAPTURE_BYTES {
            *value = traceback::cut_copy(value, CAPTURE_BYTES);
        }
    }
    captures
}

fn key_prefix(message: &str) -> &str {
    let mut end = message.len().min(FOLD_KEY_BYTES);
    while !message.is_char_boundary(end) {
        end -= 1;
    }
    &message[..end]
}

/// Process tags whose last timestamp is kept (see [`FoldStore::stamp`]).
const PROCESS_STAMPS: usize = 4096;

/// Marks a matched line that folded into no finding.
pub(super) const NO_FINDING: usize = usize::MAX;

/// Distinct values counted in bounded memory: exact up to [`Distinct::EXACT`] values, then a
/// HyperLogLog estimate (4096 registers, about 1.6% standard error).
#[derive(Clone, Default)]
pub(super) struct Distinct {
    exact: HashSet<u64>,
    registers: Option<Box<[u8]>>,
}

impl Distinct {
    const EXACT: usize = 1024;
    const BITS: u32 = 12;

    pub(super) fn hash(text: &str) -> u64 {
        xxhash_rust::xxh3::xxh3_64(text.as_bytes())
    }

    /// Counts `h`; says whether it was new (always `true` once estimating).
    pub(super) fn insert(&mut self, h: u64) -> bool {
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

    pub(super) fn count(&self) -> u64 {
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
pub(super) enum Source {
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
pub(super) enum Fate {
    /// Not known yet: the next line of its process decides.
    Pending,
    /// Its process went on.
    WentOn,
    /// A terminal marker (or a report of its death) followed.
    Ended,
    /// Its process printed nothing more before the input or its run ended: that ends an
    /// unclassified failure's process, not one whose signature says survivable.
    Silent,
}

/// Run evidence that shows a failure did not fail its run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Survived {
    /// Progress evidence of its own process came after it, at this line.
    Progress(u64),
    /// Completion evidence of its run came after it, at this line.
    Completed(u64),
    /// Its run was asked to stop before it, at this line: shutdown noise.
    AfterStop(u64),
}

/// One finding as it folds: the first line's facts, the count, the processes, the fate.
pub(super) struct Group {
    pub(super) signature: Option<u32>,
    pub(super) role: FindingRole,
    pub(super) source: Source,
    pub(super) title: String,
    pub(super) severity: Severity,
    pub(super) category: String,
    pub(super) line: u64,
    pub(super) last_line: u64,
    pub(super) offset: u64,
    pub(super) text: String,
    pub(super) text_truncated: bool,
    pub(super) count: u64,
    pub(super) processes: Vec<String>,
    pub(super) process_set: Distinct,
    pub(super) timestamp: Option<i64>,
    pub(super) timestamp_text: Option<String>,
    /// The last timestamp the analysis read before the first line, when that line has none
    /// (packed as [`LineInfo::timestamp`]): the failure's time across ranks and nodes.
    pub(super) before: Option<i64>,
    pub(super) captures: Vec<(String, String)>,
    pub(super) traceback: Option<Vec<String>>,
    /// The position of the first occurrence in its exception chain (0 = innermost).
    pub(super) chain_pos: Option<u32>,
    pub(super) is_exception: bool,
    /// The signature's survivable value (unclassified: `true` until its fate says otherwise).
    pub(super) survivable_sig: bool,
    /// The line was logged at ERROR level or above.
    pub(super) error_level: bool,
    /// Its first line's template is in the baseline.
    pub(super) in_baseline: bool,
    pub(super) fate: Fate,
    pub(super) run: u32,
    /// A retry loop's vendor and whether a recovery followed its last occurrence.
    pub(super) retry: Option<(u32, bool)>,
    /// An unresolved retry loop before its run failed (see the retry-loop rule, `retry.rs`).
    pub(super) gave_up: bool,
    /// Evidence that it did not fail its run (see `runs.rs`).
    pub(super) survived: Option<Survived>,
}

impl Group {
    /// Makes this finding stand in for a cause no signature knows: unclassified and fatal, the
    /// end of its process, titled with `what` it is, found by `source`.
    pub(super) fn stand_in(&mut self, what: &str, source: Source) {
        self.title = format!("Root cause not recognised; {what}: {}", self.title);
        self.role = FindingRole::Unclassified;
        self.source = source;
        self.survivable_sig = false;
        self.fate = Fate::Ended;
    }

    /// Counts one more line folded into this group.
    pub(super) fn repeat(&mut self, line: u64, process: Option<&String>) {
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

    /// Whether the failure is fatal: a fatal tier (see the ranking rules, `rank.rs`).
    pub(super) fn fatal(&self) -> bool {
        match self.role {
            FindingRole::Cause | FindingRole::Unclassified => {
                let ended = self.fate == Fate::Ended
                    || (self.fate == Fate::Silent && self.signature.is_none());
                (!self.survivable_sig || ended || self.gave_up) && self.survived.is_none()
            }
            _ => false,
        }
    }
}

/// The finding role of a signature role.
pub(super) fn role_of(role: Role) -> FindingRole {
    match role {
        Role::Cause => FindingRole::Cause,
        Role::Symptom => FindingRole::Symptom,
        // Evidence never wins a line (see `Analyzer::winner`).
        Role::Noise | Role::Start | Role::Progress | Role::Completed | Role::Stopped => {
            FindingRole::Noise
        }
    }
}

/// A hit line as the fold store reads it: the hit, its structure, its traceback event.
pub(super) struct Seen<'a> {
    pub(super) hit: &'a Hit,
    pub(super) info: &'a LineInfo,
    pub(super) event: &'a Event,
}

/// The findings so far, in input order, and the keys they fold by.
pub(super) struct FoldStore<'db> {
    db: &'db Database,
    pub(super) groups: Vec<Group>,
    /// Groups by run, signature (or none) and masked message; noise groups are in
    /// `noise_group`.
    index: HashMap<(u32, Option<u32>, String), usize>,
    /// Per noise signature: its one group, once it has one.
    noise_group: Vec<Option<usize>>,
    /// Findings left out: evicted from memory, or past `max_findings` in the report.
    pub(super) omitted: u64,
    /// Good runs' line templates (`--baseline`).
    baseline: Option<Arc<Baseline>>,
    /// The last timestamp of a line read so far (packed as [`LineInfo::timestamp`]), and per
    /// process tag: a new group whose line has none keeps its process's (else the last
    /// line's) as its `before`.
    last_stamp: Option<i64>,
    process_stamps: HashMap<String, i64>,
}

impl<'db> FoldStore<'db> {
    pub(super) fn new(db: &'db Database, baseline: Option<Arc<Baseline>>) -> FoldStore<'db> {
        FoldStore {
            db,
            groups: Vec::new(),
            index: HashMap::new(),
            noise_group: vec![None; db.signatures().len()],
            omitted: 0,
            baseline,
            last_stamp: None,
            process_stamps: HashMap::new(),
        }
    }

    /// Notes the timestamp of a line read (see `last_stamp`). The per-process map is bounded:
    /// past [`PROCESS_STAMPS`] tags it starts afresh.
    pub(super) fn stamp(&mut self, info: &LineInfo) {
        let Some(t) = info.timestamp else { return };
        self.last_stamp = Some(t);
        let Some(p) = &info.process else { return };
        if let Some(slot) = self.process_stamps.get_mut(p) {
            *slot = t;
            return;
        }
        if self.process_stamps.len() >= PROCESS_STAMPS {
            self.process_stamps.clear();
        }
        self.process_stamps.insert(p.clone(), t);
    }

    /// The last timestamp of a line read so far (packed as [`LineInfo::timestamp`]).
    pub(super) fn last_stamp(&self) -> Option<i64> {
        self.last_stamp
    }

    /// Whether a good run printed a line with this message's template.
    pub(super) fn knows(&self, message: &str) -> bool {
        self.baseline.as_ref().is_some_and(|b| b.knows(message))
    }

    /// The group of noise signature `sig`, once it has one.
    pub(super) fn noise_group(&self, sig: u32) -> Option<usize> {
        self.noise_group.get(sig as usize).copied().flatten()
    }

    /// The failure of `group` ended its process.
    pub(super) fn end(&mut self, group: usize) {
        if let Some(g) = self.groups.get_mut(group) {
            g.fate = Fate::Ended;
        }
    }

    /// A new group for a line of run `run`, not stored.
    pub(super) fn new_group(
        &self,
        sig: Option<u32>,
        role: FindingRole,
        source: Source,
        seen: &Seen,
        run: u32,
    ) -> Group {
        let Seen { hit, info, event } = *seen;
        let (title, severity, category, captures, survivable_sig) = match sig {
            Some(s) => {
                let i = self.db.signature(s);
                (
                    i.title.clone(),
                    i.severity,
                    i.category.clone(),
                    cut_captures(self.db.captures(s, &hit.text)),
                    i.survivable,
                )
            }
            None => (
                unclassified_title(source, info, event),
                Severity::Error,
                "unclassified".into(),
                Vec::new(),
                true,
            ),
        };
        let (traceback, chain_pos, is_exception) = match event {
            Event::Exception {
                chain_pos, frames, ..
            } => {
                let mut tb = frames.clone();
                tb.push(traceback::cut_copy(&info.message, traceback::MESSAGE_BYTES));
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
            before: match info.timestamp {
                Some(_) => None,
                None => info
                    .process
                    .as_ref()
                    .and_then(|p| self.process_stamps.get(p).copied())
                    .or(self.last_stamp),
            },
            captures,
            traceback,
            chain_pos,
            is_exception,
            survivable_sig,
            error_level: info.level.is_some_and(|l| l >= line::Level::Error),
            in_baseline: self.knows(&info.message),
            fate: Fate::Pending,
            run,
            retry: None,
            gave_up: false,
            survived: None,
        }
    }

    /// Folds a line of run `run` into its group, made if new: the group's index, and whether
    /// it is new.
    pub(super) fn fold(
        &mut self,
        sig: Option<u32>,
        role: FindingRole,
        source: Source,
        seen: &Seen,
        run: u32,
    ) -> (usize, bool) {
        let Seen { hit, info, event } = *seen;
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
            .then(|| (run, sig, line::fold_key(key_prefix(&info.message))));
        let found = match (noise, &key) {
            (Some(s), _) => self.noise_group[s],
            (None, Some(k)) => self.index.get(k).copied(),
            (None, None) => None,
        };
        if let Some(g) = found {
            let group = &mut self.groups[g];
            group.repeat(hit.line, info.process.as_ref());
            if group.traceback.is_none() {
                if let Event::Exception {
                    chain_pos, frames, ..
                } = event
                {
                    let mut tb = frames.clone();
                    tb.push(info.message.clone());
                    group.traceback = Some(tb);
                    group.chain_pos = Some(*chain_pos);
                    group.is_exception = true;
                }
            }
            return (g, false);
        }
        let group = self.new_group(sig, role, source, seen, run);
        self.groups.push(group);
        let g = self.groups.len() - 1;
        match (noise, key) {
            (Some(s), _) => self.noise_group[s] = Some(g),
            (None, Some(k)) => {
                self.index.insert(k, g);
            }
            (None, None) => {}
        }
        (g, true)
    }

    /// Keeps the groups `keep` says, in order: the new index of every old group
    /// ([`NO_FINDING`] for the ones that went), the keys updated.
    pub(super) fn retain(&mut self, keep: &[bool]) -> Vec<usize> {
        let mut remap = vec![NO_FINDING; self.groups.len()];
        let mut kept = Vec::with_capacity(keep.iter().filter(|&&k| k).count());
        for (i, g) in std::mem::take(&mut self.groups).into_iter().enumerate() {
            if keep[i] {
                remap[i] = kept.len();
                kept.push(g);
            } else {
                self.omitted += 1;
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
        remap
    }
}

/// The title of a finding no signature knows, by where it came from.
fn unclassified_title(source: Source, info: &LineInfo, event: &Event) -> String {
    match (source, event) {
        (Source::UncaughtCxx, _) => {
            "Unrecognised C++ exception that ended its process (no signature knows it)".to_string()
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
    }
}
