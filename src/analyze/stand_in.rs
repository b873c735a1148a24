//! The end-of-input rules that make a finding stand in for a cause no signature knows: a
//! traceback cut by the end of the input, the first fatal symptom of a run, the first error
//! line of a failed run, a line of the log's tail.
//!
//! A terminal marker (death by signal, a non-zero exit, a Go/Rust/C++/Java crash, a compiler
//! or build failure) makes a log failed on its own, unless a logger recorded it at ERROR level
//! or below and its process went on (a child command's failure the process survived).
//! ERROR-level lines never do, but in a failed log with no known cause the first of them
//! stands in for it (a survivable cause logged at ERROR whose process was not seen going on
//! counts as one). In a run with no fatal cause and no traceback end, the first symptom that
//! is not survivable (fatal or error severity) becomes a fatal unclassified finding that keeps
//! its signature ("the log shows its symptom"); a symptom tagged `peer` (a collective that
//! lost a peer rank) only when no other symptom can.
//!
//! The tail rule, last: in a log where no rule found a failure and no signature a cause, the
//! first line near its end that says a failure in words, not at DEBUG, INFO or WARNING level,
//! after which its process logged nothing at INFO, stands in (module `tail`): a failing log is
//! never silent, and a server that logged an error and went on stays clean.

use std::collections::BTreeMap;

use super::fold::{Distinct, Fate, FoldStore, Group, Seen, Source};
use super::runs::Candidates;
use super::tail::{self, Recent};
use super::traceback::{self, Event};
use crate::report::{Counts, FindingRole, MatchedLine};
use crate::scan::{Hit, ScanStats};
use faultline_db::{Database, Severity};

/// Whether run `run` has a fatal finding; `exceptions_only`: a fatal cause, or a fatal
/// traceback end or uncaught C++ exception.
pub(super) fn fatal_known(groups: &[Group], run: u32, exceptions_only: bool) -> bool {
    groups.iter().any(|g| {
        g.run == run
            && g.fatal()
            && (g.role == FindingRole::Cause
                || !exceptions_only
                || matches!(g.source, Source::TracebackEnd | Source::UncaughtCxx))
    })
}

/// A traceback still open at the end of the input (its process, its frames, whether an ERROR
/// record introduced it), in the last run `run` with no fatal finding: an unclassified
/// finding, fatal when nothing caught its exception.
pub(super) fn cut_traceback(
    groups: &mut Vec<Group>,
    (process, frames, logged): &(String, Vec<String>, bool),
    stats: &ScanStats,
    run: u32,
    counts: &mut Counts,
) {
    if fatal_known(groups, run, false) {
        return;
    }
    // A traceback from the program's entry point (`<module>`, runpy's `_run_module_as_main`)
    // that no ERROR record introduced is an exception nothing caught: the program is dying
    // of it, cut or not. Others (a server's handler logging a request's error, even with the
    // whole stack) may be survived.
    let uncaught = !logged && traceback::from_entry_point(frames);
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
    groups.push(Group {
        signature: None,
        role: FindingRole::Unclassified,
        source: Source::CutTraceback,
        title: "A traceback is cut off by the end of the input: its exception is missing".into(),
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
        before: None,
        captures: Vec::new(),
        traceback: Some(frames.clone()),
        chain_pos: Some(0),
        is_exception: true,
        // A guess: it does not fail the log on its own, unless nothing caught it.
        survivable_sig: !uncaught,
        error_level: false,
        in_baseline: false,
        fate: if uncaught { Fate::Ended } else { Fate::Pending },
        run,
        retry: None,
        gave_up: false,
        survived: None,
    });
    counts.unclassified_lines += 1;
}

/// Only symptoms: in a run with no fatal cause and no traceback end, the first symptom that
/// does not let its process live on (a fatal or error severity, not survivable) stands in for
/// the unknown cause, keeping its signature. A symptom tagged `peer` (a rank's collective lost
/// its connection to a peer: gloo's `Connection closed by peer`, NCCL's `remote process
/// exited`) reports another process's death, so the first symptom that is not one comes
/// before it (a launcher's `failed (exitcode: -11)` line for the rank that died).
pub(super) fn only_symptoms(groups: &mut [Group], db: &Database, counts: &mut Counts) {
    let peer = |s: u32| db.signature(s).tags.iter().any(|t| t == "peer");
    let mut first_symptom: BTreeMap<u32, (bool, u64, usize)> = BTreeMap::new();
    for (i, g) in groups.iter().enumerate() {
        let Some(s) = g.signature.filter(|_| g.role == FindingRole::Symptom) else {
            continue;
        };
        if g.survived.is_some() {
            continue;
        }
        let sig = db.signature(s);
        if sig.survivable || !matches!(sig.severity, Severity::Fatal | Severity::Error) {
            continue;
        }
        let key = (peer(s), g.line, i);
        let first = first_symptom.entry(g.run).or_insert(key);
        if key < *first {
            *first = key;
        }
    }
    for (run, (_, _, i)) in first_symptom {
        if fatal_known(groups, run, true) {
            continue;
        }
        groups[i].stand_in("the log shows its symptom", Source::OnlySymptoms);
        counts.unclassified_lines += 1;
    }
}

/// An error line: in run `run`, the failed run whose candidates count, with no fatal cause
/// and no traceback end, the first survivable cause logged at ERROR whose process was not
/// seen going on, and the first candidate line no signature knows, stand in.
pub(super) fn error_line(
    groups: &mut Vec<Group>,
    matches: &mut [(MatchedLine, usize)],
    run: u32,
    candidates: Candidates,
    counts: &mut Counts,
) {
    if fatal_known(groups, run, true) {
        return;
    }
    // A survivable cause logged at ERROR whose process was not seen going on is such an
    // error line too (a raylet's memory-monitor kill before the driver's traceback): it
    // stands in, keeping its signature.
    let known_error = groups
        .iter()
        .enumerate()
        .filter(|(_, g)| {
            g.run == run
                && g.role == FindingRole::Cause
                && g.error_level
                && !g.fatal()
                && g.fate != Fate::WentOn
                && g.survived.is_none()
        })
        .min_by_key(|(_, g)| g.line)
        .map(|(i, _)| i);
    if let Some(i) = known_error {
        groups[i].stand_in("an error line stands in", Source::Level);
        counts.unclassified_lines += 1;
    }
    if let Some(mut g) = candidates
        .exception
        .or(candidates.error)
        .filter(|g| g.survived.is_none())
    {
        counts.unclassified_lines += 1;
        uncount_error_line(counts, g.in_baseline);
        g.fate = Fate::Ended;
        let line = g.line;
        groups.push(g);
        let index = groups.len() - 1;
        if let Some(m) = matches.iter_mut().find(|(m, _)| m.line == line) {
            m.1 = index;
        }
    }
}

/// The tail rule (module [`tail`]): in a log with no failure found, a line of its tail that
/// says a failure stands in for the cause, in run `run` (the last).
pub(super) fn tail_line(
    fold: &mut FoldStore,
    matches: &mut [(MatchedLine, usize)],
    recent: &Recent,
    stats: &ScanStats,
    run: u32,
    counts: &mut Counts,
) {
    let groups = &fold.groups;
    // The tail is the last run's: only that run's findings answer for it.
    let last_run = || groups.iter().filter(|g| g.run == run);
    // A traceback cut by the end of the input that an ERROR record introduced was judged
    // survivable (a server logging a request's error): the tail is that report.
    let logged_cut = last_run().any(|g| g.source == Source::CutTraceback && !g.fatal());
    // A cause a signature knows, even survivable, is the database's answer: no guess; unless
    // its process went on after it (a request's error answered with a 400).
    let known_cause = last_run()
        .any(|g| g.role == FindingRole::Cause && g.fate != Fate::WentOn && g.survived.is_none());
    if logged_cut || known_cause || groups.iter().any(Group::fatal) {
        return;
    }
    let newlines = memchr::memchr_iter(b'\n', &stats.tail).count() as u64;
    let tail_lines = newlines + u64::from(stats.tail.last().is_some_and(|&b| b != b'\n'));
    let first_line = stats.lines.saturating_sub(tail_lines) + 1;
    let first_offset = stats.bytes.saturating_sub(stats.tail.len() as u64);
    let Some(found) = tail::stand_in(&stats.tail, first_line, first_offset, |n| {
        recent.known.contains(&n)
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
    let seen = Seen {
        hit: &hit,
        info: &found.info,
        event: &Event::None,
    };
    let mut group = fold.new_group(None, FindingRole::Unclassified, Source::Tail, &seen, run);
    group.title = format!(
        "Root cause not recognised; the log ends in this failure: {}",
        group.title
    );
    group.survivable_sig = false;
    group.fate = Fate::Ended;
    counts.unclassified_lines += 1;
    if recent.errors.contains(&found.line) {
        // Counted as an error line no finding took; now a finding takes it.
        uncount_error_line(counts, group.in_baseline);
    }
    fold.groups.push(group);
    let index = fold.groups.len() - 1;
    if let Some(m) = matches.iter_mut().find(|(m, _)| m.line == found.line) {
        m.1 = index;
    }
}

/// An error line no finding took, counted as new or as known to the baseline, that a finding
/// now takes.
fn uncount_error_line(counts: &mut Counts, in_baseline: bool) {
    let count = if in_baseline {
        &mut counts.baseline_lines
    } else {
        &mut counts.unmatched_error_lines
    };
    *count = count.saturating_sub(1);
}
