//! Retry loops: the open loops of the current run, their recoveries, and the rule that makes
//! an unresolved loop the cause of the failure that followed it.
//!
//! A survivable cause whose signature is tagged `retry-loop` announces a retry loop (wandb's
//! `Network error (ConnectTimeout), entering retry loop.`); a signature tagged
//! `retry-resolved` of the same vendor (the id's first part) announces its recovery (`Network
//! error resolved after ..., resuming normal operation.`). A loop that no recovery followed
//! (after its last occurrence, in its run) becomes fatal when its run failed after it and no
//! fatal cause is known in that run: the traceback ends, stand-ins and terminal lines that
//! follow it are its consequences. A loop that recovered, or a run that did not fail, leaves
//! it survivable.

use super::fold::{Group, NO_FINDING};
use crate::report::FindingRole;
use faultline_db::{Database, Severity};

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

/// A retry loop's cause that no recovery followed and that is not fatal by itself: what
/// the retry-loop rule may make fatal.
fn open_retry_loop(g: &Group) -> bool {
    g.role == FindingRole::Cause && g.retry.is_some_and(|(_, resolved)| !resolved) && !g.fatal()
}

/// The signatures' retry tags and the current run's retry loops.
#[derive(Default)]
pub(super) struct RetryLoops {
    /// Per signature: its retry tag (filled at the first matched line: an input with none
    /// does not pay for it).
    tags: Vec<RetryTag>,
    /// The retry-loop groups of the current run.
    open: Vec<usize>,
}

impl RetryLoops {
    /// Reads the retry tags of `db`'s signatures, the first time only.
    pub(super) fn read_tags(&mut self, db: &Database) {
        if self.tags.is_empty() {
            self.tags = retry_tags(db);
        }
    }

    /// Whether signature `sig` has no retry tag (after [`RetryLoops::read_tags`]).
    pub(super) fn untagged(&self, sig: u32) -> bool {
        self.tags.get(sig as usize) == Some(&RetryTag::None)
    }

    /// A new run: its loops start over.
    pub(super) fn new_run(&mut self) {
        self.open.clear();
    }

    /// Keeps track of the current run's retry loops: a loop's line (re)opens its group, a
    /// recovery line resolves the open loops of its vendor printed before it.
    pub(super) fn observe(&mut self, groups: &mut [Group], sig: u32, group: usize, line: u64) {
        match self
            .tags
            .get(sig as usize)
            .copied()
            .unwrap_or(RetryTag::None)
        {
            RetryTag::None => {}
            RetryTag::Loop(v) => {
                let Some(g) = groups.get_mut(group) else {
                    return;
                };
                if g.role != FindingRole::Cause {
                    return;
                }
                g.retry = Some((v, false));
                if !self.open.contains(&group) && self.open.len() < MAX_OPEN_LOOPS {
                    self.open.push(group);
                }
            }
            RetryTag::Resolved(v) => {
                for &g in &self.open {
                    if let Some(group) = groups.get_mut(g) {
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

    /// Follows the groups' new indexes after an eviction (see [`super::fold::FoldStore::retain`]).
    pub(super) fn remap(&mut self, remap: &[usize]) {
        self.open.retain_mut(|g| {
            *g = remap[*g];
            *g != NO_FINDING
        });
    }
}

/// The retry-loop rule, once the fates are settled: in each run with no fatal cause, the
/// first retry loop that no recovery followed becomes fatal when the run failed after it
/// (a fatal finding, or a symptom that fails a log on its own, after the loop's first line
/// and none before it).
pub(super) fn unresolved_retry_loops(groups: &mut [Group], db: &Database) {
    let loops: Vec<usize> = (0..groups.len())
        .filter(|&i| open_retry_loop(&groups[i]))
        .collect();
    if loops.is_empty() {
        return;
    }
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
        let run = groups[i].run;
        if done.contains(&run) {
            continue;
        }
        done.push(run);
        let in_run = || groups.iter().filter(|g| g.run == run);
        if in_run().any(|g| g.role == FindingRole::Cause && g.fatal()) {
            continue;
        }
        let Some(first_failure) = in_run().filter(|g| fails(g)).map(|g| g.line).min() else {
            continue;
        };
        // The earliest open loop of the run that came before its first failure.
        let first_loop = (0..groups.len())
            .filter(|&j| {
                let g = &groups[j];
                g.run == run && open_retry_loop(g) && g.line < first_failure
            })
            .min_by_key(|&j| groups[j].line);
        if let Some(j) = first_loop {
            groups[j].gave_up = true;
        }
    }
}
