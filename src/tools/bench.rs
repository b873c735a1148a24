//! Measuring a signature set over a corpus: throughput of the real pipeline (scan + analyze),
//! what each signature costs (prefilter candidates, confirmed matches, time in its regexes),
//! and top-1 accuracy per category where the corpus has sidecars (see [`super::corpus`]).
//!
//! The cost profile comes from a second pass that repeats the scanner's two stages over each
//! candidate line with a clock around every regex, so the normal hot path carries no probes.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use aho_corasick::AhoCorasick;
use serde::Serialize;

use super::corpus::{self, read_decoded, Case, Composition, Outcome};
use crate::analyze::{analyze_path, AnalyzeOptions};
use crate::error::{Result, Usage};
use crate::report::DatabaseRef;
use crate::scan::ScanOptions;
use faultline_db::{Database, Owner};

/// A corpus ready to benchmark: every log, and the cases among them with sidecars.
#[derive(Clone, Debug)]
pub struct Corpus {
    /// The corpus directory.
    pub dir: PathBuf,
    /// Every log in it, sorted.
    pub logs: Vec<PathBuf>,
    /// The logs with a sidecar (expected answers).
    pub cases: Vec<Case>,
}

impl Corpus {
    /// Loads `dir` (see [`corpus::load_corpus`] and [`corpus::corpus_logs`]).
    pub fn load(dir: &Path) -> Result<Corpus> {
        let logs = corpus::corpus_logs(dir)?;
        if logs.is_empty() {
            return Err(Usage::EmptyCorpus(dir.to_path_buf()).into());
        }
        Ok(Corpus {
            dir: dir.to_path_buf(),
            logs,
            cases: corpus::load_corpus(dir)?,
        })
    }
}

/// How a benchmark runs.
#[derive(Clone, Debug)]
pub struct BenchOptions {
    /// Repeat the throughput pass over the whole corpus until this much time has passed
    /// (at least once).
    pub min_time: Duration,
    /// How each log is scanned.
    pub scan: ScanOptions,
}

impl Default for BenchOptions {
    fn default() -> Self {
        BenchOptions {
            min_time: Duration::from_secs(1),
            scan: ScanOptions::default(),
        }
    }
}

/// What one signature (or internal structural marker) cost over the corpus.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Cost {
    /// The signature id, or `marker:NAME` for the analysis' structural patterns.
    pub id: String,
    /// Candidate lines: lines the prefilter flagged that hold one of its required literals,
    /// so its regex had to run.
    pub candidates: u64,
    /// Candidate lines its regex confirmed.
    pub matches: u64,
    /// Time spent in its regexes, in seconds.
    pub confirm_seconds: f64,
    /// Candidate lines charged to it: each candidate line is charged to exactly one
    /// signature or marker (see `Matcher::charged_pattern`), so these add up to the set's
    /// `candidate_lines`, and a line that only an anchor of its literals made a candidate is
    /// charged to it, not to the markers that then ran on the line.
    pub charged: u64,
}

/// Top-1 accuracy over the cases of one category.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct CategoryAccuracy {
    /// The category name.
    pub category: String,
    /// Failing logs of the category.
    pub cases: u64,
    /// Those whose first finding is the expected one.
    pub passed: u64,
}

/// A case whose first finding was not the expected one.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Miss {
    /// The log's path relative to the corpus.
    pub case: String,
    /// What was expected and what was found.
    pub reason: String,
}

/// Top-1 accuracy on failing logs (the first finding is the one the sidecar names), and
/// false alarms on healthy logs (`expect = "clean"`: some finding is a failure).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Accuracy {
    /// Failing logs, and those whose first finding is the expected one.
    pub cases: u64,
    /// Failing logs whose first finding is the expected one.
    pub passed: u64,
    /// Healthy logs, and those with a failure reported (a false alarm).
    pub healthy: u64,
    /// Healthy logs with a failure reported.
    pub false_alarms: u64,
    /// By category name.
    pub categories: Vec<CategoryAccuracy>,
    /// The failing logs whose first finding was not the expected one.
    pub misses: Vec<Miss>,
}

/// The benchmark of one signature set.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SetBench {
    /// The database measured.
    pub database: DatabaseRef,
    /// Its signatures.
    pub signatures: usize,
    /// Its patterns.
    pub patterns: usize,
    /// Logs in the corpus, and the bytes and lines of one pass (decompressed).
    pub inputs: usize,
    /// Bytes of one pass (decompressed).
    pub bytes: u64,
    /// Lines of one pass.
    pub lines: u64,
    /// Passes over the corpus in the throughput measurement, and their total time.
    pub passes: u32,
    /// Total time of the timed passes, in seconds.
    pub seconds: f64,
    /// Each timed pass's time in seconds, in order. With two sets the passes alternate
    /// (A B, B A, ...), so the i-th passes of the two sets ran moments apart.
    pub pass_seconds: Vec<f64>,
    /// The median pass time, in seconds.
    pub median_pass_seconds: f64,
    /// The spread of the pass times: interquartile range over the median.
    pub spread: f64,
    /// Throughput in bytes per second.
    pub bytes_per_second: f64,
    /// Throughput in lines per second.
    pub lines_per_second: f64,
    /// Candidate lines the prefilter passed to confirmation, in one pass.
    pub candidate_lines: u64,
    /// Sorted by time spent confirming, most costly first.
    pub costs: Vec<Cost>,
    /// Top-1 accuracy and false alarms.
    pub accuracy: Accuracy,
    /// What the corpus holds (fragments, whole logs by size and expectation, repositories).
    pub corpus: Composition,
    /// Logs that could not be read (`path: reason`); they are left out of every number.
    pub errors: Vec<String>,
}

/// Fewest alternating pairs of timed passes when two sets are compared: with fewer than 6,
/// no difference can be called significant (see [`compare_pass_times`]).
const MIN_PAIRS: usize = 9;

/// Runs the benchmark of `db` over `corpus`.
pub fn profile_corpus(db: &Database, corpus: &Corpus, opts: &BenchOptions) -> SetBench {
    profile_corpus_sets(&[db], corpus, opts).remove(0)
}

/// Runs the benchmark of each set over the same `corpus`. The timed passes alternate
/// between the sets (A B, B A, A B, ...) so that each pair of passes shares the machine's
/// load; each set gets at least `min_time` and two sets at least `MIN_PAIRS` pairs.
pub fn profile_corpus_sets(
    dbs: &[&Database],
    corpus: &Corpus,
    opts: &BenchOptions,
) -> Vec<SetBench> {
    // Pass 1 (untimed): reports for accuracy, and which logs can be read at all.
    let prepared: Vec<_> = dbs.iter().map(|db| prepare(db, corpus, opts)).collect();
    // Pass 2 (timed): the real pipeline, alternating between the sets.
    let n = dbs.len();
    let mut times: Vec<Vec<f64>> = vec![Vec::new(); n];
    let mut sizes = vec![(0u64, 0u64); n];
    let min_rounds = if n > 1 { MIN_PAIRS } else { 1 };
    let start = Instant::now();
    let mut round = 0;
    loop {
        for k in 0..n {
            let i = if round % 2 == 0 { k } else { n - 1 - k };
            let t = Instant::now();
            sizes[i] = timed_pass(dbs[i], &prepared[i].1, opts);
            times[i].push(t.elapsed().as_secs_f64());
        }
        round += 1;
        if round >= min_rounds && start.elapsed() >= opts.min_time * n as u32 {
            break;
        }
    }
    dbs.iter()
        .zip(prepared)
        .zip(times.into_iter().zip(sizes))
        .map(
            |((db, (errors, readable, outcomes)), (pass_seconds, (bytes, lines)))| {
                finish(
                    db,
                    corpus,
                    errors,
                    readable,
                    &outcomes,
                    pass_seconds,
                    bytes,
                    lines,
                )
            },
        )
        .collect()
}

/// Pass 1: reports for accuracy, and which logs can be read at all.
fn prepare(
    db: &Database,
    corpus: &Corpus,
    opts: &BenchOptions,
) -> (Vec<String>, Vec<PathBuf>, BTreeMap<PathBuf, Outcome>) {
    let mut errors = Vec::new();
    let mut readable = Vec::new();
    let mut outcomes: BTreeMap<PathBuf, Outcome> = BTreeMap::new();
    for log in &corpus.logs {
        let report = analyze_path(db, log, &opts.scan, AnalyzeOptions::default());
        if let Some(e) = &report.error {
            errors.push(e.clone());
            continue;
        }
        readable.push(log.clone());
        if let Some(case) = corpus.cases.iter().find(|c| &c.log == log) {
            outcomes.insert(log.clone(), case.check(&report));
        }
    }
    (errors, readable, outcomes)
}

/// One timed pass of the real pipeline over `logs`: their bytes and lines.
fn timed_pass(db: &Database, logs: &[PathBuf], opts: &BenchOptions) -> (u64, u64) {
    let (mut bytes, mut lines) = (0, 0);
    for log in logs {
        let r = analyze_path(db, log, &opts.scan, AnalyzeOptions::default());
        bytes += r.bytes;
        lines += r.lines;
    }
    (bytes, lines)
}

/// The median of `v` (0 for none).
fn median(v: &[f64]) -> f64 {
    quantile(v, 0.5)
}

/// The `q`-quantile of `v`, interpolated between order statistics (0 for none).
fn quantile(v: &[f64], q: f64) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    match s.len() {
        0 => 0.0,
        n => {
            let x = q * (n - 1) as f64;
            let (lo, hi) = (x.floor() as usize, x.ceil() as usize);
            s[lo] + (s[hi] - s[lo]) * (x - lo as f64)
        }
    }
}

/// Pass 3 and the figures of one set.
#[allow(clippy::too_many_arguments)]
fn finish(
    db: &Database,
    corpus: &Corpus,
    errors: Vec<String>,
    readable: Vec<PathBuf>,
    outcomes: &BTreeMap<PathBuf, Outcome>,
    pass_seconds: Vec<f64>,
    bytes: u64,
    lines: u64,
) -> SetBench {
    let passes = pass_seconds.len() as u32;
    let seconds: f64 = pass_seconds.iter().sum();
    let median_pass_seconds = median(&pass_seconds);
    let spread = if median_pass_seconds > 0.0 {
        (quantile(&pass_seconds, 0.75) - quantile(&pass_seconds, 0.25)) / median_pass_seconds
    } else {
        0.0
    };
    let rate = |n: u64| {
        if seconds > 0.0 {
            n as f64 * f64::from(passes) / seconds
        } else {
            0.0
        }
    };
    // Pass 3: the cost profile. One unrecorded pass warms the regexes' lazy DFA caches (as a
    // long sweep would have them), then each signature keeps its fastest of PROFILE_PASSES
    // passes, so that a preempted thread does not make a cheap signature look costly.
    let profile_pass = || {
        let mut p = Profiler::new(db);
        for log in &readable {
            if let Ok(buf) = read_decoded(log) {
                p.scan(&buf);
            }
        }
        p
    };
    profile_pass();
    let mut profile = profile_pass();
    for _ in 1..PROFILE_PASSES {
        profile = profile.fastest(profile_pass());
    }
    SetBench {
        database: DatabaseRef {
            name: db.name().into(),
            version: db.version().into(),
            hash: db.hash().into(),
        },
        signatures: db.signatures().len(),
        patterns: db.pattern_sources().len(),
        inputs: readable.len(),
        bytes,
        lines,
        passes,
        seconds,
        pass_seconds,
        median_pass_seconds,
        spread,
        bytes_per_second: rate(bytes),
        lines_per_second: rate(lines),
        candidate_lines: profile.candidate_lines,
        costs: profile.costs(),
        accuracy: accuracy(&corpus.cases, outcomes),
        corpus: Composition::of(&corpus.cases),
        errors,
    }
}

/// Whether two sets' pass times differ by more than the noise.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Verdict {
    /// Pairs of passes the verdict rests on.
    pub pairs: usize,
    /// The median over pairs of the first set's pass time over the second's.
    pub median_ratio: f64,
    /// A distribution-free 95% confidence interval of that median (order statistics of the
    /// pair ratios, by the sign test); null with fewer than 6 pairs.
    pub interval: Option<(f64, f64)>,
    /// Whether the interval excludes 1 and the median ratio is off 1 by at least
    /// [`MIN_EFFECT`].
    pub significant: bool,
}

/// Smallest difference called significant, however many pairs: below it, a pass's timer and
/// cache effects are of the same order.
pub const MIN_EFFECT: f64 = 0.02;

/// The verdict on recorded pass times of two sets, paired by index (the i-th passes ran
/// moments apart). Pure: the same vectors give the same verdict.
pub fn compare_pass_times(first: &[f64], second: &[f64]) -> Verdict {
    let mut ratios: Vec<f64> = first
        .iter()
        .zip(second)
        .filter(|(a, b)| a.is_finite() && b.is_finite() && **b > 0.0)
        .map(|(a, b)| a / b)
        .collect();
    ratios.sort_by(f64::total_cmp);
    let n = ratios.len();
    let median_ratio = median(&ratios);
    // Largest k with P(Bin(n, 1/2) < k) <= 2.5%: [r_k, r_(n+1-k)] covers the median with
    // at least 95% confidence.
    let mut k = 0;
    let mut below = 0.0; // P(X <= k - 1)
    let mut pk = 0.5f64.powi(n as i32); // P(X = k)
    while k < n / 2 && below + pk <= 0.025 {
        below += pk;
        pk *= (n - k) as f64 / (k + 1) as f64;
        k += 1;
    }
    let interval = (k >= 1).then(|| (ratios[k - 1], ratios[n - k]));
    let significant = interval.is_some_and(|(lo, hi)| lo > 1.0 || hi < 1.0)
        && (median_ratio - 1.0).abs() >= MIN_EFFECT;
    Verdict {
        pairs: n,
        median_ratio,
        interval,
        significant,
    }
}

impl Verdict {
    /// One line for people: the difference, or that it is inside the noise.
    pub fn describe(&self, first: &str, second: &str) -> String {
        let interval = self
            .interval
            .map_or("too few pairs for an interval".into(), |(lo, hi)| {
                format!("95% interval {lo:.3}-{hi:.3}")
            });
        let basis = format!(
            "median pass-time ratio {:.3}, {interval}, {} alternating pairs",
            self.median_ratio, self.pairs
        );
        if self.significant {
            let (how, by) = if self.median_ratio > 1.0 {
                ("slower", self.median_ratio)
            } else {
                ("faster", 1.0 / self.median_ratio)
            };
            format!("{first} is {by:.2}x {how} than {second} ({basis})")
        } else {
            format!("no significant difference ({basis})")
        }
    }
}

fn accuracy(cases: &[Case], outcomes: &BTreeMap<PathBuf, Outcome>) -> Accuracy {
    let mut by_cat: BTreeMap<&str, (u64, u64)> = BTreeMap::new();
    let mut misses = Vec::new();
    let (mut healthy, mut false_alarms) = (0, 0);
    for case in cases {
        let Some(outcome) = outcomes.get(&case.log) else {
            continue;
        };
        if case.expect.clean {
            healthy += 1;
            if let Outcome::Fail(reason) = outcome {
                false_alarms += 1;
                misses.push(Miss {
                    case: case.name.clone(),
                    reason: reason.clone(),
                });
            }
            continue;
        }
        let e = by_cat.entry(&case.expect.category).or_default();
        e.0 += 1;
        match outcome {
            Outcome::Pass => e.1 += 1,
            Outcome::Fail(reason) => misses.push(Miss {
                case: case.name.clone(),
                reason: reason.clone(),
            }),
        }
    }
    Accuracy {
        cases: by_cat.values().map(|v| v.0).sum(),
        passed: by_cat.values().map(|v| v.1).sum(),
        healthy,
        false_alarms,
        categories: by_cat
            .into_iter()
            .map(|(c, (cases, passed))| CategoryAccuracy {
                category: c.to_string(),
                cases,
                passed,
            })
            .collect(),
        misses,
    }
}

/// Recorded passes of the cost profile (after one warm-up pass).
const PROFILE_PASSES: usize = 3;

/// The scanner's two stages again, with a clock around every confirming regex.
struct Profiler<'db> {
    db: &'db Database,
    literals: Option<AhoCorasick>,
    owners_of_literal: Vec<Vec<u32>>,
    /// Per compiled pattern: the slot of its signature or marker.
    slot_of: Vec<usize>,
    /// Per slot: its id, candidate lines, matched lines, time; and the last line counted.
    ids: Vec<String>,
    totals: Vec<(u64, u64, Duration)>,
    counted: Vec<(u64, u64)>,
    /// Per slot: candidate lines charged to it (each line to one slot).
    charged: Vec<u64>,
    candidate_lines: u64,
    scratch: Vec<u32>,
}

impl<'db> Profiler<'db> {
    fn new(db: &'db Database) -> Profiler<'db> {
        let (members, owners): (Vec<&[u8]>, Vec<Vec<u32>>) = db
            .required_literals()
            .map(|(lit, pats)| (lit, pats.to_vec()))
            .unzip();
        let mut ids: Vec<String> = db.signatures().iter().map(|s| s.id.clone()).collect();
        let slot_of = db
            .pattern_owners()
            .map(|owner| match owner {
                Owner::Signature(s) => s as usize,
                Owner::Marker(m) => {
                    let id = format!("marker:{m:?}");
                    ids.iter().position(|i| *i == id).unwrap_or_else(|| {
                        ids.push(id);
                        ids.len() - 1
                    })
                }
            })
            .collect();
        Profiler {
            db,
            literals: AhoCorasick::new(members).ok(),
            owners_of_literal: owners,
            slot_of,
            totals: vec![(0, 0, Duration::ZERO); ids.len()],
            counted: vec![(0, 0); ids.len()],
            charged: vec![0; ids.len()],
            ids,
            candidate_lines: 0,
            scratch: Vec::new(),
        }
    }

    fn scan(&mut self, buf: &[u8]) {
        let db = self.db;
        for candidate in db.candidate_lines(buf) {
            let line = &buf[candidate.line];
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            if let Some(p) = db.charged_pattern(line) {
                if let Some(&slot) = self.slot_of.get(p as usize) {
                    self.charged[slot] += 1;
                }
            }
            self.confirm(line);
        }
    }

    fn confirm(&mut self, line: &[u8]) {
        self.candidate_lines += 1;
        let n = self.candidate_lines;
        let Some(lits) = &self.literals else { return };
        self.scratch.clear();
        for found in lits.find_overlapping_iter(line) {
            self.scratch
                .extend_from_slice(&self.owners_of_literal[found.pattern().as_usize()]);
        }
        self.scratch.sort_unstable();
        self.scratch.dedup();
        for &p in &self.scratch {
            let t = Instant::now();
            let matched = self.db.pattern_matches(p as usize, line);
            let elapsed = t.elapsed();
            let slot = self.slot_of[p as usize];
            let (total, counted) = (&mut self.totals[slot], &mut self.counted[slot]);
            total.2 += elapsed;
            // A line counts once per signature, however many of its patterns ran.
            if counted.0 != n {
                counted.0 = n;
                total.0 += 1;
            }
            if matched && counted.1 != n {
                counted.1 = n;
                total.1 += 1;
            }
        }
    }

    /// Keeps, per signature, the lower confirm time of two passes over the same input.
    fn fastest(mut self, other: Profiler) -> Profiler<'db> {
        for (mine, theirs) in self.totals.iter_mut().zip(&other.totals) {
            mine.2 = mine.2.min(theirs.2);
        }
        self
    }

    /// Every signature and marker, most costly first.
    fn costs(&self) -> Vec<Cost> {
        let mut out: Vec<Cost> = self
            .ids
            .iter()
            .zip(&self.totals)
            .zip(&self.charged)
            .map(|((id, &(candidates, matches, time)), &charged)| Cost {
                id: id.clone(),
                candidates,
                matches,
                confirm_seconds: time.as_secs_f64(),
                charged,
            })
            .collect();
        out.sort_by(|a, b| {
            b.confirm_seconds
                .total_cmp(&a.confirm_seconds)
                .then_with(|| a.id.cmp(&b.id))
        });
        out
    }
}

#[cfg(test)]
mod tests;
