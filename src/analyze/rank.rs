//! Ranking: each finding's tier and rank key, the bound on the findings kept in memory and in
//! the report, and the `why` each finding carries.
//!
//! The ranking rules, in order:
//! 1. The failures (fatal causes and fatal unclassified findings) of the last run that
//!    failed, then those of earlier runs, latest run first.
//! 2. Tier: fatal cause > fatal unclassified > fatal cause whose signature says survivable
//!    (it ended its process) > survived cause > survived unclassified > symptom > noise; an
//!    unresolved retry loop ranks as a fatal cause. Among fatal unclassified findings: the end of a traceback, then the
//!    `what():` message of an uncaught C++ exception, then a symptom standing in, then a
//!    stand-in error line, then a traceback cut by the end of the input, then a terminal line
//!    (`Killed`, `exited with code 1`).
//!    With a baseline (`--baseline`), a failure the good run printed too ranks after the new
//!    failures of its run, and inside each other tier a known finding after the new ones.
//! 3. The innermost exception of a chain (or no exception at all) before a wrapper.
//! 4. The earliest: by timestamp when every finding of the tier has one, else by position.

use std::collections::BTreeMap;

use super::fold::{Fate, Group, Source, Survived};
use crate::report::{Finding, FindingRole};
use faultline_db::{interpolate, Database};

/// The last tier of failures (fatal findings): see [`Group::tier`].
const FAILURE_TIERS: u8 = 2;

/// A group's rank key: smaller ranks first.
type RankKey = (
    u8,
    std::cmp::Reverse<u32>,
    bool,
    u8,
    bool,
    Source,
    bool,
    i64,
    u64,
);

impl Group {
    /// The tier, 0 (fatal cause) to 6 (noise): fatal cause > fatal unclassified > fatal cause
    /// whose signature says survivable (it ended its process) >
    /// survived cause > survived unclassified > symptom > noise. Tiers 0 to 2 are failures.
    pub(super) fn tier(&self) -> u8 {
        match (self.role, self.fatal()) {
            // An unresolved retry loop keeps its place as a fatal cause.
            (FindingRole::Cause, true) if !self.survivable_sig || self.gave_up => 0,
            (FindingRole::Unclassified, true) => 1,
            (FindingRole::Cause, true) => 2,
            (FindingRole::Cause, false) => 3,
            (FindingRole::Unclassified, false) => 4,
            (FindingRole::Symptom, _) => 5,
            (FindingRole::Noise, _) => 6,
        }
    }

    /// The rank key; `by_time` when every finding of the tier has a timestamp.
    fn key(&self, by_time: bool) -> RankKey {
        let tier = self.tier();
        let failing = tier <= FAILURE_TIERS;
        let wrapper = self.chain_pos.is_some_and(|p| p > 0);
        let time = if by_time {
            self.timestamp.unwrap_or(0)
        } else {
            0
        };
        (
            u8::from(!failing),
            std::cmp::Reverse(if failing { self.run } else { 0 }),
            failing && self.in_baseline,
            tier,
            !failing && self.in_baseline,
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

/// Which groups stay in memory, once there are at least twice `max` of them (`max` is
/// `max_findings`; 0 = no limit): the highest-ranked `max` (by tier, then wrapper, then
/// position), never a fatal cause or fatal unclassified finding for a lower one, nor a
/// failure whose fate is not known yet. `None` while under the bound.
pub(super) fn keep_in_memory(groups: &[Group], max: usize) -> Option<Vec<bool>> {
    if max == 0 || groups.len() < max.saturating_mul(2).max(max.saturating_add(16)) {
        return None;
    }
    let mut order: Vec<usize> = (0..groups.len()).collect();
    let protected = |g: &Group| {
        g.fatal()
            || (matches!(g.role, FindingRole::Cause | FindingRole::Unclassified)
                && g.fate == Fate::Pending)
    };
    order.sort_by_key(|&i| {
        let g = &groups[i];
        (!protected(g), g.key(false))
    });
    let keep_n = max.max(
        order
            .iter()
            .take_while(|&&i| protected(&groups[i]))
            .count()
            .min(max),
    );
    let mut keep = vec![false; groups.len()];
    for &i in order.iter().take(keep_n) {
        keep[i] = true;
    }
    Some(keep)
}

/// The ranked findings of a report, at most `max` (0 = no limit; the lowest-ranked go, never
/// a failure for a lower one); with each group's rank (0 for the ones left out) and how
/// many were left out. `runs` is the number of runs; `ended_early`: the input ended inside
/// a traceback or on an error, so findings no signature knows are tentative. The findings
/// take their text, captures, processes and traceback from the groups (one kept copy of a
/// long line, not two).
pub(super) fn findings(
    groups: &mut [Group],
    db: &Database,
    max: usize,
    ended_early: bool,
    runs: u32,
    with_baseline: bool,
) -> (Vec<Finding>, Vec<usize>, u64) {
    let mut tier_ts_complete = [true; 7];
    for g in groups.iter() {
        if g.timestamp.is_none() {
            tier_ts_complete[g.tier() as usize] = false;
        }
    }
    let mut order: Vec<usize> = (0..groups.len()).collect();
    order.sort_by_key(|&i| {
        let g = &groups[i];
        g.key(tier_ts_complete[g.tier() as usize])
    });
    let mut omitted = 0;
    if max > 0 && order.len() > max {
        let failures = order
            .iter()
            .filter(|&&i| groups[i].tier() <= FAILURE_TIERS)
            .count();
        let keep = max.max(failures.min(max));
        omitted = (order.len() - keep) as u64;
        order.truncate(keep);
    }
    let mut rank_of = vec![0usize; groups.len()];
    let mut findings = Vec::with_capacity(order.len());
    for (rank0, &gi) in order.iter().enumerate() {
        rank_of[gi] = rank0 + 1;
        let g = &mut groups[gi];
        let remediation = g
            .signature
            .map(|s| interpolate(&db.signature(s).remediation, &g.captures));
        let why = why(g, tier_ts_complete[g.tier() as usize], runs);
        let process_count = g.process_set.count().max(g.processes.len() as u64);
        let fatal = g.fatal();
        let survivable = match g.role {
            FindingRole::Cause | FindingRole::Unclassified => !fatal,
            _ => g.signature.is_some_and(|s| db.signature(s).survivable),
        };
        findings.push(Finding {
            rank: rank0 + 1,
            signature: g.signature.map(|s| db.signature(s).id.clone()),
            role: g.role,
            severity: g.severity,
            category: g.category.clone(),
            title: g.title.clone(),
            line: g.line,
            last_line: g.last_line,
            offset: g.offset,
            text: std::mem::take(&mut g.text),
            text_truncated: g.text_truncated,
            count: g.count,
            processes: std::mem::take(&mut g.processes),
            process_count,
            survivable,
            ended_process: matches!(g.fate, Fate::Ended | Fate::Silent),
            run: g.run,
            timestamp: g.timestamp_text.clone(),
            tentative: ended_early && g.signature.is_none(),
            captures: std::mem::take(&mut g.captures)
                .into_iter()
                .collect::<BTreeMap<_, _>>(),
            remediation,
            traceback: g.traceback.take(),
            why,
            in_baseline: with_baseline.then_some(g.in_baseline),
            input: None,
        });
    }
    (findings, rank_of, omitted)
}

/// Why a finding ranks where it does: the rule that found it, its fate, its run, its place in
/// its chain, the order of its tier, its folding.
fn why(g: &Group, by_time: bool, runs: u32) -> String {
    let fatal = g.fatal();
    let mut parts = vec![found_by(g, fatal).to_string()];
    if matches!(g.role, FindingRole::Cause | FindingRole::Unclassified) {
        parts.push(match (fatal, g.fate, g.survived) {
            (true, Fate::Ended, _) => "fatal: it ended its process".into(),
            (true, Fate::Silent, _) => "fatal: its process printed nothing more".into(),
            (true, _, _) => "fatal".into(),
            (false, _, Some(Survived::Progress(l))) => {
                format!("survived: its process made progress after it (line {l})")
            }
            (false, _, Some(Survived::Completed(l))) => {
                format!("survived: its run completed after it (line {l})")
            }
            (false, _, Some(Survived::AfterStop(l))) => {
                format!("survived: shutdown noise after the stop request at line {l}")
            }
            (false, Fate::WentOn, None) => "survivable: its process went on".into(),
            (false, _, None) => "survivable".into(),
        });
    }
    if runs > 1 {
        parts.push(format!("run {} of {runs}", g.run));
    }
    if g.in_baseline {
        parts.push("also in the good run: ranked after the new findings of its kind".into());
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

/// The rule that found a finding, in words.
fn found_by(g: &Group, fatal: bool) -> &'static str {
    match (g.role, g.source) {
        (FindingRole::Cause, _) if g.gave_up => {
            "a cause signature matched: a retry loop that no recovery followed before its run failed"
        }
        (FindingRole::Cause, _) => "a cause signature matched",
        (FindingRole::Unclassified, Source::TracebackEnd) => {
            "no signature knows this exception; it ends a failing traceback"
        }
        (FindingRole::Unclassified, Source::Terminal) => {
            "no signature knows this line; it says a process ended badly"
        }
        (FindingRole::Unclassified, Source::UncaughtCxx) => {
            "no signature knows this exception; a C++ terminate named it, after the line that names its type"
        }
        (FindingRole::Unclassified, Source::CutTraceback) if fatal => {
            "the input ends inside this traceback from the program's entry point: nothing caught its exception"
        }
        (FindingRole::Unclassified, Source::CutTraceback) => {
            "the input ends inside this traceback (a guess: it does not fail the log on its own)"
        }
        (FindingRole::Unclassified, Source::Level) if g.signature.is_some() => {
            "a survivable cause signature matched this error line, but its process was not seen going on; in a failed run with no known cause it stands in"
        }
        (FindingRole::Unclassified, Source::OnlySymptoms) => {
            "no cause found; the first fatal symptom stands in for it"
        }
        (FindingRole::Unclassified, Source::Tail) => {
            "no failure found by any other rule; the first line near the end of the log that says a failure, after which its process logged nothing at INFO, stands in (a guess)"
        }
        (FindingRole::Unclassified, _) => {
            "no signature matched; the first error line of a failed run stands in"
        }
        (FindingRole::Symptom, _) => "a symptom signature matched: a consequence of a cause",
        (FindingRole::Noise, _) => "a noise signature matched: harmless",
    }
}
