//! Which rank or node failed first: the order of the failures of a report that spans several
//! ranks or nodes (a job's inputs, or one log's rank and node prefixes), and the report's
//! `first_failure`.
//!
//! In a distributed job one rank's own failure (an exception, an OOM) makes the others time
//! out or lose their connection to it: those failures wait on a peer (their signatures carry
//! the tag [`WAITS_ON_PEER`]) and are symptoms of the first. So the root cause is the first
//! failure in time that does not wait on a peer. A failure's time is its line's timestamp,
//! else the last timestamp before it in the same input, else the input's modification time;
//! an untimed failure comes after the timed ones. Failures within the clock skew of each
//! other are simultaneous: among them the analysis's own ranking decides, then the path.

use std::collections::HashSet;

use crate::report::{Finding, FindingRole, FirstFailure, TimeFrom};
use faultline_db::Database;

/// The signature tag of a failure that waits on a peer: a collective or rendezvous timeout,
/// a peer that closed or reset its connection, a launcher reporting that a worker failed.
pub const WAITS_ON_PEER: &str = "waits-on-peer";

/// Days before each month of a year without a leap day.
const DAYS_BEFORE_MONTH: [i64; 12] = [0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334];

/// A failure's time: milliseconds since the start of its year (a linear count, so that the
/// clock skew can be measured across midnights and month ends), the text it was read from,
/// and where that came from.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct Stamp {
    pub(super) ms: Option<i64>,
    pub(super) text: Option<String>,
    pub(super) from: Option<TimeFrom>,
}

impl Stamp {
    /// A stamp read from a line prefix (`encoded` as [`super::line::LineInfo::timestamp`]).
    pub(super) fn of_line(encoded: i64, text: Option<String>, from: TimeFrom) -> Stamp {
        Stamp {
            ms: Some(linear(encoded)),
            text,
            from: Some(from),
        }
    }
}

/// A year-less line timestamp (month, day, time packed as [`super::line::LineInfo::timestamp`]
/// packs them) as milliseconds since the start of the year.
pub(super) fn linear(encoded: i64) -> i64 {
    let ms = encoded.rem_euclid(1000);
    let secs = encoded.div_euclid(1000);
    let (s, mins) = (secs % 60, secs / 60);
    let (m, hours) = (mins % 60, mins / 60);
    let (h, month_day) = (hours % 24, hours / 24);
    let (day, month) = (month_day % 32, month_day / 32);
    let before = DAYS_BEFORE_MONTH
        .get(usize::try_from(month - 1).unwrap_or(0))
        .copied()
        .unwrap_or(0);
    (((before + (day - 1).max(0)) * 24 + h) * 60 + m) * 60_000 + s * 1000 + ms
}

/// A civil time packed as a line timestamp is (for a modification time): the inverse's input.
pub(super) fn pack(month: i64, day: i64, h: i64, m: i64, s: i64, ms: i64) -> i64 {
    ((((month * 32 + day) * 24 + h) * 60 + m) * 60 + s) * 1000 + ms
}

/// Whether a signature's failure waits on a peer.
pub(super) fn waits(db: &Database, f: &Finding) -> bool {
    f.signature.as_deref().is_some_and(|id| {
        db.signatures()
            .iter()
            .any(|s| s.id == id && s.tags.iter().any(|t| t == WAITS_ON_PEER))
    })
}

/// Whether a process tag names a rank or a node: `rank3` and `default3` (torchrun), `task 3`
/// (srun `--label`), a parenthesised tag with `rank=N` or `ip=ADDR` (vLLM's ranked workers,
/// Ray). Other tags (`Worker_TP0 pid=7`, `EngineCore_DP0 pid=12`) are processes of one node.
pub(super) fn names_rank_or_node(tag: &str) -> bool {
    let numbered = |prefix: &str| {
        tag.strip_prefix(prefix)
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
    };
    numbered("rank")
        || numbered("default")
        || numbered("task ")
        || tag
            .split([' ', ','])
            .any(|w| w.starts_with("rank=") || w.starts_with("ip="))
}

/// The node a process tag names: Ray's `ip=ADDR`, or srun's `task N`.
pub(super) fn node_of_tag(tag: &str) -> Option<String> {
    if tag.starts_with("task ") {
        return Some(tag.to_string());
    }
    tag.split([' ', ','])
        .find_map(|w| w.strip_prefix("ip="))
        .filter(|ip| !ip.is_empty())
        .map(str::to_string)
}

/// The global rank a line names after torchrun's `--tee` prefix: `[default1]:[rank3]: ...`
/// is local rank 1 relaying global rank 3's line (`rank3`); none for another tag.
fn global_rank(tag: &str, text: &str) -> Option<String> {
    tag.strip_prefix("default")
        .filter(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))?;
    let after = &text[text.find("[rank")? + 5..];
    let digits = &after[..after.find(']')?];
    (!digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()))
        .then(|| format!("rank{digits}"))
}

/// Whether the findings' process tags name several ranks or nodes.
pub(super) fn spans_ranks(findings: &[Finding]) -> bool {
    let mut units = HashSet::new();
    findings
        .iter()
        .flat_map(|f| &f.processes)
        .filter(|p| names_rank_or_node(p))
        .any(|p| {
            units.insert(p.as_str());
            units.len() > 1
        })
}

/// One failure to order: where it is (its input among the job's, in path order, and its
/// place in that input's ranking) and what decides its place.
#[derive(Clone, Debug)]
pub(super) struct Failure {
    pub(super) member: usize,
    pub(super) index: usize,
    pub(super) waits: bool,
    pub(super) in_baseline: bool,
    /// 0 for a known cause, 1 for an exception no signature knows (it has a traceback), 2
    /// for another unclassified failure (a line standing in, a process that ended badly):
    /// among simultaneous failures the surer comes first.
    pub(super) tier: u8,
    pub(super) stamp: Stamp,
    /// Its signature and masked message (see [`super::line::fold_key`]): the same failure
    /// printed in two inputs has the same key.
    pub(super) key: (Option<String>, String),
    /// Whether its line carries a process tag.
    pub(super) tagged: bool,
}

impl Failure {
    /// The failure that is finding `index` of input `member`, at `stamp`.
    pub(super) fn new(
        db: &Database,
        member: usize,
        index: usize,
        f: &Finding,
        stamp: Stamp,
    ) -> Failure {
        Failure {
            member,
            index,
            waits: waits(db, f),
            in_baseline: f.in_baseline == Some(true),
            tier: match (f.role, &f.traceback) {
                (FindingRole::Cause, _) => 0,
                (_, Some(_)) => 1,
                _ => 2,
            },
            stamp,
            key: (
                f.signature.clone(),
                super::line::fold_key(&super::line::parse_line(f.text.as_bytes()).message),
            ),
            tagged: !f.processes.is_empty(),
        }
    }

    /// Whether this failure's line is a copy another program relayed (a Ray driver's `(name
    /// pid=N)` line, a launcher console's `[rankN]:` line) of `others`' untagged line in
    /// another input: the same failure, printed first where it happened.
    fn relays(&self, others: &[&Failure]) -> bool {
        self.tagged
            && others
                .iter()
                .any(|o| !o.tagged && o.member != self.member && o.key == self.key)
    }
}

/// How exactly a stamp times its failure: its own line's time first, then the last time its
/// input printed before it, then its input's modification time (an upper bound).
fn exactness(from: Option<TimeFrom>) -> u8 {
    match from {
        Some(TimeFrom::Line) => 0,
        Some(TimeFrom::Before) => 1,
        Some(TimeFrom::Mtime) | None => 2,
    }
}

/// The order of `failures` (indices into it): new before those the good run printed too
/// (`--baseline`), then the ones that do not wait on a peer before the ones that do; inside
/// each, timed ones by time, those within `skew_ms` of the first of a group being
/// simultaneous (ordered by tier, how exact their time is, the origin of a failure before
/// a copy another input relays, then time, input and place in their input's ranking; inside
/// `one_input`, by its own ranking alone, which knows more), then the
/// untimed ones by input and place.
pub(super) fn order(failures: &[Failure], skew_ms: i64, one_input: bool) -> Vec<usize> {
    let mut out = Vec::with_capacity(failures.len());
    for in_baseline in [false, true] {
        for waits in [false, true] {
            let part: Vec<usize> = (0..failures.len())
                .filter(|&i| failures[i].in_baseline == in_baseline && failures[i].waits == waits)
                .collect();
            let (mut timed, mut untimed): (Vec<usize>, Vec<usize>) = part
                .into_iter()
                .partition(|&i| failures[i].stamp.ms.is_some());
            timed.sort_by_key(|&i| (failures[i].stamp.ms, failures[i].member, failures[i].index));
            let mut start = 0;
            while start < timed.len() {
                let first = failures[timed[start]].stamp.ms.unwrap_or(0);
                let end = start
                    + timed[start..]
                        .iter()
                        .take_while(|&&i| {
                            failures[i].stamp.ms.unwrap_or(0) <= first.saturating_add(skew_ms)
                        })
                        .count();
                let group = &mut timed[start..end];
                let members: Vec<&Failure> = group.iter().map(|&i| &failures[i]).collect();
                group.sort_by_key(|&i| {
                    let f = &failures[i];
                    if one_input {
                        (0, 0, false, 0, f.member, f.index)
                    } else {
                        let relayed = f.relays(&members);
                        let ms = f.stamp.ms.unwrap_or(0);
                        (
                            f.tier,
                            exactness(f.stamp.from),
                            relayed,
                            ms,
                            f.member,
                            f.index,
                        )
                    }
                });
                out.extend_from_slice(group);
                start = end;
            }
            untimed.sort_by_key(|&i| (failures[i].member, failures[i].index));
            out.extend(untimed);
        }
    }
    out
}

/// The ranks or nodes (an input with the process tag of a line, or an input whose lines
/// carry none) that printed a finding that waits on a peer (a failure or a symptom: a
/// timeout, a closed connection), other than `root`'s: `waiting` gives each such finding
/// with its input.
pub(super) fn others_waiting<'a>(
    waiting: impl Iterator<Item = (usize, &'a Finding)>,
    root_member: usize,
    root_process: Option<&str>,
) -> u64 {
    let mut units: HashSet<(usize, &str)> = HashSet::new();
    let mut unlisted = 0u64;
    for (member, f) in waiting {
        if f.processes.is_empty() {
            units.insert((member, ""));
            continue;
        }
        for p in &f.processes {
            units.insert((member, p.as_str()));
        }
        unlisted += f.process_count.saturating_sub(f.processes.len() as u64);
    }
    // In an input whose ranks tag their lines, an untagged line is the launcher's (torch
    // elastic's agent reporting a worker), not one more rank.
    let tagged: HashSet<usize> = units
        .iter()
        .filter(|(_, p)| !p.is_empty())
        .map(|&(m, _)| m)
        .collect();
    units.retain(|&(m, p)| !p.is_empty() || !tagged.contains(&m));
    units.remove(&(root_member, root_process.unwrap_or("")));
    units.len() as u64 + unlisted
}

/// The report's `first_failure` for its first finding `root` (failure `at`), in `input`,
/// with `path_node` the node its input's path names (none inside one log).
pub(super) fn first_failure(
    root: &Finding,
    at: &Failure,
    input: &str,
    path_node: Option<&str>,
    others_waiting: u64,
) -> FirstFailure {
    let process = root
        .processes
        .first()
        .map(|p| global_rank(p, &root.text).unwrap_or_else(|| p.clone()));
    let node = process
        .as_deref()
        .and_then(node_of_tag)
        .or_else(|| path_node.map(str::to_string));
    FirstFailure {
        input: input.to_string(),
        process,
        node,
        line: root.line,
        timestamp: at.stamp.text.clone(),
        timestamp_from: at.stamp.from,
        waits_on_peer: at.waits,
        others_waiting,
    }
}

/// A packed line timestamp as text: `MM-DD HH:MM:SS.mmm`.
pub(super) fn packed_text(packed: i64) -> String {
    let ms = packed.rem_euclid(1000);
    let secs = packed.div_euclid(1000);
    let hours = secs / 3600;
    format!(
        "{:02}-{:02} {:02}:{:02}:{:02}.{ms:03}",
        hours / 24 / 32,
        hours / 24 % 32,
        hours % 24,
        secs / 60 % 60,
        secs % 60
    )
}

/// A failure's stamp from its own line's timestamp, else the last one before it.
pub(super) fn stamp_of(own: Option<i64>, own_text: Option<&str>, before: Option<i64>) -> Stamp {
    match (own, before) {
        (Some(t), _) => Stamp::of_line(t, own_text.map(str::to_string), TimeFrom::Line),
        (None, Some(b)) => Stamp::of_line(b, Some(packed_text(b)), TimeFrom::Before),
        (None, None) => Stamp::default(),
    }
}

/// Inside one log whose lines name several ranks or nodes: puts the failures of the first
/// finding's run in [`order`] (one printed before any timestamp of the log counts as the
/// earliest), renumbers them, and says which rank or node failed first.
/// `stamps` are the findings' times. Returns the `first_failure` and, when the order
/// changed, each old rank's new rank (by old rank − 1).
pub(super) fn within_log(
    db: &Database,
    findings: &mut [Finding],
    stamps: &[Stamp],
    skew_ms: i64,
    input: &str,
) -> (Option<FirstFailure>, Option<Vec<usize>>) {
    if !findings.first().is_some_and(Finding::is_failure) || !spans_ranks(findings) {
        return (None, None);
    }
    let run = findings[0].run;
    let k = findings
        .iter()
        .take_while(|f| f.is_failure() && f.run == run)
        .count();
    // A failure with no timestamp at or before it in the log came before every timed line:
    // the log's own order times it first.
    let failures: Vec<Failure> = (0..k)
        .map(|i| {
            let mut stamp = stamps.get(i).cloned().unwrap_or_default();
            stamp.ms = stamp.ms.or(Some(i64::MIN));
            Failure::new(db, 0, i, &findings[i], stamp)
        })
        .collect();
    let ord = order(&failures, skew_ms, true);
    let root = &failures[ord[0]];
    let root_process = findings[root.index].processes.first().map(String::as_str);
    let waiting = findings.iter().filter(|f| waits(db, f)).map(|f| (0, f));
    let others = others_waiting(waiting, 0, root_process);
    let ff = first_failure(&findings[root.index], root, input, None, others);
    let moved = ord.iter().enumerate().any(|(new, &old)| new != old);
    let perm = moved.then(|| {
        let mut perm: Vec<usize> = (1..=findings.len()).collect();
        let old: Vec<Finding> = findings[..k].to_vec();
        for (new, &o) in ord.iter().enumerate() {
            findings[new] = old[o].clone();
            findings[new].rank = new + 1;
            perm[o] = new + 1;
        }
        perm
    });
    findings[0].why = format!("{}; {}", why_first(&ff), findings[0].why);
    (Some(ff), perm)
}

/// The `why` a reordered first finding adds.
pub(super) fn why_first(ff: &FirstFailure) -> String {
    if ff.waits_on_peer {
        "every failure across the ranks and nodes waits on a peer: the earliest is first".into()
    } else {
        "the first failure in time across the ranks and nodes that does not wait on a peer".into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn failure(member: usize, index: usize, waits: bool, ms: Option<i64>) -> Failure {
        Failure {
            member,
            index,
            waits,
            in_baseline: false,
            tier: 0,
            stamp: Stamp {
                ms,
                text: None,
                from: ms.map(|_| TimeFrom::Line),
            },
            key: (None, format!("failure {member}")),
            tagged: false,
        }
    }

    #[test]
    fn the_first_own_failure_in_time_leads_and_waiting_ones_follow() {
        let fs = [
            failure(0, 0, true, Some(1_000)),
            failure(1, 0, false, Some(9_000)),
            failure(2, 0, false, Some(5_000)),
            failure(3, 0, false, None),
        ];
        assert_eq!(order(&fs, 2_000, false), [2, 1, 3, 0]);
    }

    #[test]
    fn failures_within_the_skew_are_simultaneous() {
        // Input 1 printed 1.5 s earlier by the clocks; input 0's is a known cause: within
        // 2 s the surer failure leads, beyond 1 s of skew the earlier.
        let mut cause = failure(0, 0, false, Some(11_500));
        cause.tier = 0;
        let mut unknown = failure(1, 0, false, Some(10_000));
        unknown.tier = 1;
        let fs = [cause, unknown];
        assert_eq!(order(&fs, 2_000, false), [0, 1]);
        assert_eq!(order(&fs, 1_000, false), [1, 0]);
        // Among equals the earlier still leads, whatever the path.
        let fs = [
            failure(0, 0, false, Some(11_500)),
            failure(1, 0, false, Some(10_000)),
        ];
        assert_eq!(order(&fs, 2_000, false), [1, 0]);
    }

    #[test]
    fn the_origin_of_a_failure_comes_before_a_relayed_copy() {
        // Input 0 (a driver) relays input 1's (a worker's) line with a process tag.
        let mut relay = failure(0, 0, false, Some(10_000));
        relay.tagged = true;
        relay.key = (Some("system.signal.segfault".into()), "Fatal".into());
        let mut origin = failure(1, 0, false, Some(10_000));
        origin.key = relay.key.clone();
        assert_eq!(
            order(&[relay.clone(), origin.clone()], 2_000, false),
            [1, 0]
        );
        // Another failure's tagged line is no relay of it.
        origin.key.1 = "other".into();
        assert_eq!(order(&[relay, origin], 2_000, false), [0, 1]);
    }

    #[test]
    fn linear_time_crosses_month_ends() {
        let jan31 = linear(pack(1, 31, 23, 59, 59, 500));
        let feb1 = linear(pack(2, 1, 0, 0, 0, 500));
        assert_eq!(feb1 - jan31, 1000);
        assert_eq!(linear(pack(1, 1, 0, 0, 0, 0)), 0);
    }

    #[test]
    fn rank_and_node_tags() {
        for tag in [
            "rank3",
            "default0",
            "task 12",
            "pid=5, ip=10.0.0.1",
            "VllmWorker rank=3 pid=7",
        ] {
            assert!(names_rank_or_node(tag), "{tag}");
        }
        for tag in [
            "Worker_TP0 pid=7",
            "EngineCore_DP0 pid=12",
            "ranked",
            "task x",
        ] {
            assert!(!names_rank_or_node(tag), "{tag}");
        }
        assert_eq!(
            node_of_tag("RayWorker pid=5, ip=10.0.0.1").as_deref(),
            Some("10.0.0.1")
        );
        assert_eq!(node_of_tag("task 3").as_deref(), Some("task 3"));
        assert_eq!(node_of_tag("rank3"), None);
    }

    #[test]
    fn a_relayed_line_names_its_global_rank() {
        let text = "[default1]:[rank3]: RuntimeError: bad batch";
        assert_eq!(global_rank("default1", text).as_deref(), Some("rank3"));
        assert_eq!(global_rank("default1", "[default1]: RuntimeError"), None);
        assert_eq!(global_rank("rank3", text), None);
    }
}
