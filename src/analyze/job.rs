//! The job view (`--job`): the inputs of one distributed job (a torchrun log directory, a Ray
//! session's logs, Slurm per-node outputs, per-pod logs) analysed as one report, whose root
//! cause is the first failure in time that does not wait on a peer (see `first.rs`).
//!
//! Each input is analysed on its own; their failures are then ordered across the job, the
//! same message from many inputs is folded into one finding (the first in rank order keeps
//! its place, input and line), and the report sums what the inputs' own reports counted.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use rayon::prelude::*;

use super::first::{self, Failure, Stamp};
use super::{analyze_timed, AnalyzeOptions, Analyzer};
use crate::report::{
    Counts, Finding, FindingRole, JobInput, Report, RunOutcome, RunState, TimeFrom,
    MAX_PROCESSES_LISTED,
};
use crate::scan::{Input, InputKind, ScanOptions, ScanStats};
use crate::Error;
use faultline_db::Database;

/// The default of [`AnalyzeOptions::clock_skew`] (and of the CLI's `--clock-skew`): failures
/// of different ranks or nodes within 2 seconds of each other are simultaneous.
pub const DEFAULT_CLOCK_SKEW: Duration = Duration::from_secs(2);

/// One input of a job, analysed.
struct Member {
    report: Report,
    stamps: Vec<Stamp>,
    /// Its modification time: the time of a failure its lines give none for.
    mtime: Option<Stamp>,
    path: Option<PathBuf>,
}

/// Analyses `members`, the inputs of one distributed job (an input that could not be opened
/// is its error), as one report named `name` (the first path argument). The report's
/// `inputs` says what each input's own report would have (in the order given), its findings
/// carry their `input`, and its root cause is the first failure in time that does not wait
/// on a peer: a failure's time is its line's timestamp, else the last timestamp before it in
/// its input, else the input's modification time, else it is untimed (after the timed ones,
/// then by input order); failures within [`AnalyzeOptions::clock_skew`] are simultaneous.
/// If every failure waits on a peer, the earliest is first and `first_failure` says so
/// (`waits_on_peer`). An unreadable input sets the report's `error`; the rest is analysed.
///
/// ```
/// use faultline::{analyze_job, AnalyzeOptions, Database, EmbeddedDatabase, Input, ScanOptions};
/// use std::path::Path;
///
/// let rank = |n: usize, text: &str| Ok(Input::from_bytes(Path::new(&format!("job/rank{n}.log")), text.into()));
/// let members = vec![
///     rank(0, "[rank0]:[E1207 12:10:03.000000 7 ProcessGroupNCCL.cpp:607] [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=9, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600050 milliseconds before timing out.\n"),
///     rank(1, "[rank1]:[E1207 12:00:03.000000 8 train.py:9] step failed\n[rank1]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 1 has a total capacity of 79.19 GiB of which 1.01 GiB is free.\n"),
/// ];
/// let report = analyze_job(Database::embedded(), "job", members, &ScanOptions::default(), AnalyzeOptions::default());
/// let first = report.first_failure.expect("several ranks failed");
/// assert_eq!(first.input, "job/rank1.log");
/// assert_eq!(first.process.as_deref(), Some("rank1"));
/// assert_eq!(first.others_waiting, 1);
/// assert_eq!(report.findings[0].input.as_deref(), Some("job/rank1.log"));
/// ```
pub fn analyze_job(
    db: &Database,
    name: &str,
    members: Vec<Result<Input, Error>>,
    scan: &ScanOptions,
    opts: AnalyzeOptions,
) -> Report {
    let members: Vec<Member> = members
        .into_par_iter()
        .map(|m| member(db, m, scan, &opts))
        .collect();
    let roots = path_nodes(&members);
    let skew = i64::try_from(opts.clock_skew.as_millis()).unwrap_or(i64::MAX);
    let failures = failures_of(db, &members);
    let ord = first::order(&failures, skew, false);
    let mut report = Analyzer::new(db, opts.clone()).finish(name, &ScanStats::default(), None);
    let ff = ord.first().map(|&r| {
        let root = &failures[r];
        let f = &members[root.member].report.findings[root.index];
        let waiting = members.iter().enumerate().flat_map(|(mi, m)| {
            m.report
                .findings
                .iter()
                .filter(|f| first::waits(db, f))
                .map(move |f| (mi, f))
        });
        let others = first::others_waiting(
            waiting,
            root.member,
            f.processes.first().map(String::as_str),
        );
        first::first_failure(
            f,
            root,
            &members[root.member].report.input,
            roots[root.member].as_deref(),
            others,
        )
    });
    let mut findings = merged(&members, &failures, &ord);
    let spans = members.len() > 1 || first::spans_ranks(&findings);
    let ff = ff.filter(|_| spans);
    if let (Some(ff), Some(f)) = (&ff, findings.first_mut()) {
        // An input whose own lines span ranks already says it of its first failure.
        let why = first::why_first(ff);
        if !f.why.starts_with(&why) {
            f.why = format!("{why}; {}", f.why);
        }
    }
    let omitted = bound(&mut findings, opts.max_findings);
    sum_into(&mut report, &members);
    report.findings_omitted += omitted;
    report.failed = findings.iter().any(Finding::is_failure);
    report.findings = findings;
    report.first_failure = ff;
    report.matches = opts.all.then(|| {
        members
            .iter()
            .flat_map(|m| m.report.matches.iter().flatten().cloned())
            .map(|mut m| {
                m.finding = None;
                m
            })
            .collect()
    });
    report
}

/// Analyses one input of a job (an unopened one: its error report).
fn member(
    db: &Database,
    m: Result<Input, Error>,
    scan: &ScanOptions,
    opts: &AnalyzeOptions,
) -> Member {
    match m {
        Ok(input) => {
            let path = input.path().to_path_buf();
            let meta = std::fs::metadata(&path).ok();
            let mtime = meta
                .as_ref()
                .and_then(|m| m.modified().ok())
                .and_then(mtime_stamp);
            let plain = input.kind() == InputKind::Plain && meta.is_some_and(|m| m.is_file());
            let (report, mut stamps) = analyze_timed(db, input, scan, opts.clone());
            if plain {
                // The last timestamp before an untimed failure, from every line before it
                // (the analysis reads only the lines a signature or marker picks).
                for (f, stamp) in report.findings.iter().zip(stamps.iter_mut()) {
                    if f.is_failure() && stamp.from != Some(TimeFrom::Line) {
                        if let Some(t) = time_before(&path, f.offset) {
                            *stamp = first::stamp_of(None, None, Some(t));
                        }
                    }
                }
            }
            Member {
                report,
                stamps,
                mtime,
                path: Some(path),
            }
        }
        Err(e) => Member {
            report: super::failed_input_report(db, &e),
            stamps: Vec::new(),
            mtime: None,
            path: None,
        },
    }
}

/// How far back before an untimed failure its input is read for the last timestamp.
const TIME_BEFORE_WINDOW: u64 = 1 << 20;

/// The last timestamp a line prints before byte `offset` of the plain file at `path`, within
/// [`TIME_BEFORE_WINDOW`] bytes (packed as [`super::line::LineInfo::timestamp`]).
fn time_before(path: &Path, offset: u64) -> Option<i64> {
    use std::io::{Read, Seek, SeekFrom};
    let start = offset.saturating_sub(TIME_BEFORE_WINDOW);
    let mut file = std::fs::File::open(path).ok()?;
    file.seek(SeekFrom::Start(start)).ok()?;
    let mut buf = vec![0; usize::try_from(offset - start).ok()?];
    file.read_exact(&mut buf).ok()?;
    // A window that starts inside a line leaves that line's head out.
    let whole = if start > 0 {
        buf.iter()
            .position(|&b| b == b'\n')
            .map_or(&buf[..0], |i| &buf[i + 1..])
    } else {
        &buf[..]
    };
    whole.rsplit(|&b| b == b'\n').find_map(|line| {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        super::line::parse_line(line).timestamp
    })
}

/// A modification time as a failure's time: the local calendar time (log lines print local
/// time), as a line's timestamp would pack it.
fn mtime_stamp(t: std::time::SystemTime) -> Option<Stamp> {
    let zoned = jiff::Timestamp::try_from(t)
        .ok()?
        .to_zoned(jiff::tz::TimeZone::system());
    let packed = first::pack(
        i64::from(zoned.month()),
        i64::from(zoned.day()),
        i64::from(zoned.hour()),
        i64::from(zoned.minute()),
        i64::from(zoned.second()),
        i64::from(zoned.millisecond()),
    );
    Some(Stamp::of_line(
        packed,
        Some(zoned.strftime("%Y-%m-%d %H:%M:%S").to_string()),
        TimeFrom::Mtime,
    ))
}

/// The node each input's path names under the job's root (the deepest directory holding
/// them all): its first directory below the root (`node-b` of `node-b/attempt_0/3/x.log`),
/// else its file name without extension.
fn path_nodes(members: &[Member]) -> Vec<Option<String>> {
    let dirs: Vec<&Path> = members
        .iter()
        .filter_map(|m| m.path.as_deref()?.parent())
        .collect();
    let root: Option<PathBuf> = dirs.split_first().map(|(first, rest)| {
        let mut root = first.to_path_buf();
        for d in rest {
            while !d.starts_with(&root) && root.pop() {}
        }
        root
    });
    members
        .iter()
        .map(|m| {
            let path = m.path.as_deref()?;
            let below = path.strip_prefix(root.as_deref()?).ok()?;
            let mut parts = below.components();
            let file = parts.next_back();
            match parts.next() {
                Some(top) => Some(top.as_os_str().to_string_lossy().into_owned()),
                None => Some(
                    file?
                        .as_os_str()
                        .to_string_lossy()
                        .split('.')
                        .next()
                        .unwrap_or_default()
                        .to_string(),
                ),
            }
        })
        .collect()
}

/// Every input's failures of its own first finding's run, each at its time (its line's, the
/// last before it in its input, or its input's modification time).
fn failures_of(db: &Database, members: &[Member]) -> Vec<Failure> {
    let mut out = Vec::new();
    for (mi, m) in members.iter().enumerate() {
        let Some(run) = m.report.root_cause().map(|f| f.run) else {
            continue;
        };
        for (i, f) in m.report.findings.iter().enumerate() {
            if !f.is_failure() || f.run != run {
                continue;
            }
            let mut stamp = m.stamps.get(i).cloned().unwrap_or_default();
            if stamp.ms.is_none() {
                stamp = m.mtime.clone().unwrap_or_default();
            }
            out.push(Failure::new(db, mi, i, f, stamp));
        }
    }
    out
}

/// The job's findings: the ordered failures first, then the rest by kind (other failures,
/// survived, symptoms, noise), input and rank; each with its input, the same message from
/// several inputs folded into its first.
fn merged(members: &[Member], failures: &[Failure], ord: &[usize]) -> Vec<Finding> {
    let mut placed = vec![Vec::new(); members.len()];
    for (mi, m) in members.iter().enumerate() {
        placed[mi] = vec![false; m.report.findings.len()];
    }
    let mut order: Vec<(usize, usize)> = Vec::new();
    for &o in ord {
        let f = &failures[o];
        placed[f.member][f.index] = true;
        order.push((f.member, f.index));
    }
    let kind = |f: &Finding| match f.role {
        _ if f.is_failure() => 0,
        _ if f.is_survived() => 1,
        FindingRole::Symptom => 2,
        _ => 3,
    };
    let mut rest: Vec<(u8, usize, usize)> = Vec::new();
    for (mi, m) in members.iter().enumerate() {
        for (i, f) in m.report.findings.iter().enumerate() {
            if !placed[mi][i] {
                rest.push((kind(f), mi, i));
            }
        }
    }
    rest.sort_unstable();
    order.extend(rest.into_iter().map(|(_, mi, i)| (mi, i)));
    fold(members, &order)
}

/// The findings at `order`, each with its input; a finding with the same signature, role,
/// survivability and masked message as an earlier one from another input folds into it.
fn fold(members: &[Member], order: &[(usize, usize)]) -> Vec<Finding> {
    let mut out: Vec<Finding> = Vec::with_capacity(order.len());
    let mut inputs: Vec<usize> = Vec::new();
    let mut index: HashMap<(Option<String>, FindingRole, bool, String), usize> = HashMap::new();
    for &(mi, i) in order {
        let m = &members[mi];
        let f = &m.report.findings[i];
        let message = super::line::parse_line(f.text.as_bytes()).message;
        let key = (
            f.signature.clone(),
            f.role,
            f.survivable,
            super::line::fold_key(&message),
        );
        if let Some(&into) = index.get(&key) {
            let g = &mut out[into];
            g.count += f.count;
            g.process_count += f.process_count;
            for p in &f.processes {
                if g.processes.len() < MAX_PROCESSES_LISTED && !g.processes.contains(p) {
                    g.processes.push(p.clone());
                }
            }
            inputs[into] += 1;
            continue;
        }
        index.insert(key, out.len());
        let mut f = f.clone();
        f.input = Some(m.report.input.clone());
        out.push(f);
        inputs.push(1);
    }
    for (f, n) in out.iter_mut().zip(inputs) {
        if n > 1 {
            f.why = format!("{}; folded from {n} inputs", f.why);
        }
    }
    out
}

/// Keeps at most `max` findings (0: all), never a failure for a lower one; renumbers them.
/// How many were left out.
fn bound(findings: &mut Vec<Finding>, max: usize) -> u64 {
    let failures = findings.iter().filter(|f| f.is_failure()).count();
    let keep = if max == 0 {
        findings.len()
    } else {
        max.max(failures.min(max)).min(findings.len())
    };
    let omitted = (findings.len() - keep) as u64;
    findings.truncate(keep);
    for (r, f) in findings.iter_mut().enumerate() {
        f.rank = r + 1;
    }
    omitted
}

/// The job's totals from its inputs' reports: `inputs`, sizes, runs, outcomes, counts, the
/// first error.
fn sum_into(report: &mut Report, members: &[Member]) {
    let reports = || members.iter().map(|m| &m.report);
    report.inputs = Some(
        reports()
            .map(|r| JobInput {
                input: r.input.clone(),
                bytes: r.bytes,
                lines: r.lines,
                runs: r.runs,
                run_outcomes: r.run_outcomes.clone(),
                error: r.error.clone(),
                ended_early: r.ended_early,
            })
            .collect(),
    );
    let errors: Vec<&String> = reports().filter_map(|r| r.error.as_ref()).collect();
    report.error = errors.first().map(|e| match errors.len() {
        1 => (*e).clone(),
        n => format!("{e} (and {} more inputs of the job with errors)", n - 1),
    });
    report.binary = reports().any(|r| r.binary);
    report.bytes = reports().map(|r| r.bytes).sum();
    report.lines = reports().map(|r| r.lines).sum();
    report.ended_early = reports().any(|r| r.ended_early);
    report.findings_omitted = reports().map(|r| r.findings_omitted).sum();
    report.runs = reports().map(|r| r.runs).max().unwrap_or(0);
    report.run_outcomes = (1..=report.runs)
        .map(|run| {
            run_outcome(
                run,
                reports().filter_map(|r| r.run_outcomes.get(run as usize - 1)),
            )
        })
        .collect();
    let mut c = Counts::default();
    for r in reports() {
        let o = &r.counts;
        c.matched_lines += o.matched_lines;
        c.cause_lines += o.cause_lines;
        c.symptom_lines += o.symptom_lines;
        c.noise_lines += o.noise_lines;
        c.unclassified_lines += o.unclassified_lines;
        c.unmatched_error_lines += o.unmatched_error_lines;
        c.noise_processes += o.noise_processes;
        c.evidence_lines += o.evidence_lines;
        c.baseline_lines += o.baseline_lines;
    }
    report.counts = c;
}

/// Run `run` of the job from its inputs' run `run`: failed if any failed, else running if
/// any runs on, else stopped if any was stopped, else completed if all completed, else
/// unknown; the line of the first input (in order) with that outcome.
fn run_outcome<'a>(run: u32, outcomes: impl Iterator<Item = &'a RunOutcome> + Clone) -> RunOutcome {
    let any = |s: RunState| outcomes.clone().find(|o| o.outcome == s);
    let state = [RunState::Failed, RunState::Running, RunState::Stopped]
        .into_iter()
        .find(|&s| any(s).is_some())
        .or_else(|| {
            outcomes
                .clone()
                .all(|o| o.outcome == RunState::Completed)
                .then_some(RunState::Completed)
        })
        .unwrap_or(RunState::Unknown);
    RunOutcome {
        run,
        outcome: state,
        line: any(state).and_then(|o| o.line),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::EmbeddedDatabase;

    #[test]
    fn a_run_outcome_of_the_job_is_the_worst_of_its_inputs() {
        let o = |s, l| RunOutcome {
            run: 1,
            outcome: s,
            line: Some(l),
        };
        let all = [
            o(RunState::Completed, 3),
            o(RunState::Failed, 9),
            o(RunState::Running, 5),
        ];
        assert_eq!(run_outcome(1, all.iter()), o(RunState::Failed, 9));
        let done = [o(RunState::Completed, 3), o(RunState::Completed, 4)];
        assert_eq!(run_outcome(1, done.iter()), o(RunState::Completed, 3));
    }

    #[test]
    fn path_nodes_are_directories_below_the_root_else_file_stems() {
        let m =
            |p: &str| Member {
                report: Analyzer::new(crate::Database::embedded(), AnalyzeOptions::default())
                    .finish(p, &ScanStats::default(), None),
                stamps: Vec::new(),
                mtime: None,
                path: Some(PathBuf::from(p)),
            };
        let nodes = path_nodes(&[m("job/node-a/out.log"), m("job/node-b/x/1/out.log")]);
        assert_eq!(nodes, [Some("node-a".into()), Some("node-b".into())]);
        let nodes = path_nodes(&[m("logs/rank0.log"), m("logs/rank1.log.gz")]);
        assert_eq!(nodes, [Some("rank0".into()), Some("rank1".into())]);
    }
}
