//! Measuring a signature set over a corpus: throughput of the real pipeline (scan + analyze),
//! what each signature costs (prefilter candidates, confirmed matches, time in its regexes),
//! and top-1 accuracy per category where the corpus has sidecars (see [`crate::corpus`]).
//!
//! The cost profile comes from a second pass that repeats the scanner's two stages over each
//! candidate line with a clock around every regex, so the normal hot path carries no probes.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use aho_corasick::AhoCorasick;
use memchr::{memchr, memrchr};
use serde::Serialize;

use crate::analyze::{analyze_path, AnalyzeOptions};
use crate::compile::{Database, Owner};
use crate::corpus::{self, Case, Outcome};
use crate::error::{Error, Result};
use crate::report::DatabaseRef;
use crate::scan::{InputKind, ScanOptions};

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
    /// Loads `dir` (see [`corpus::load_dir`] and [`corpus::log_files`]).
    pub fn load(dir: &Path) -> Result<Corpus> {
        let logs = corpus::log_files(dir)?;
        if logs.is_empty() {
            return Err(Error::Usage(format!(
                "{}: no logs (*.log, *.log.gz, *.log.zst, *.gz, *.zst) in this corpus",
                dir.display()
            )));
        }
        Ok(Corpus {
            dir: dir.to_path_buf(),
            logs,
            cases: corpus::load_dir(dir)?,
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
    /// Logs that could not be read (`path: reason`); they are left out of every number.
    pub errors: Vec<String>,
}

/// Runs the benchmark of `db` over `corpus`.
pub fn run(db: &Database, corpus: &Corpus, opts: &BenchOptions) -> SetBench {
    // Pass 1 (untimed): reports for accuracy, and which logs can be read at all.
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
    // Pass 2 (timed): the real pipeline, repeated until `min_time` has passed.
    let mut passes = 0u32;
    let start = Instant::now();
    let (bytes, lines) = loop {
        let (mut bytes, mut lines) = (0, 0);
        for log in &readable {
            let r = analyze_path(db, log, &opts.scan, AnalyzeOptions::default());
            bytes += r.bytes;
            lines += r.lines;
        }
        passes += 1;
        if start.elapsed() >= opts.min_time {
            break (bytes, lines);
        }
    };
    let seconds = start.elapsed().as_secs_f64();
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
        bytes_per_second: rate(bytes),
        lines_per_second: rate(lines),
        candidate_lines: profile.candidate_lines,
        costs: profile.costs(),
        accuracy: accuracy(&corpus.cases, &outcomes),
        errors,
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

/// Reads a whole log, decompressing `.gz`/`.zst` (detected by magic bytes).
fn read_decoded(path: &Path) -> std::io::Result<Vec<u8>> {
    let raw = std::fs::read(path)?;
    let mut out = Vec::new();
    match InputKind::sniff(&raw) {
        InputKind::Plain => return Ok(raw),
        kind => {
            crate::scan::decode(kind, Box::new(std::io::Cursor::new(raw)))?.read_to_end(&mut out)?
        }
    };
    Ok(out)
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
            .matcher()
            .patterns
            .iter()
            .map(|pat| match pat.owner {
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
            ids,
            candidate_lines: 0,
            scratch: Vec::new(),
        }
    }

    fn scan(&mut self, buf: &[u8]) {
        let m = self.db.matcher();
        let mut pos = 0;
        while let Some(hit) = m.find_candidate(buf, pos) {
            let start = memrchr(b'\n', &buf[pos..hit]).map_or(pos, |i| pos + i + 1);
            let end = memchr(b'\n', &buf[hit..]).map_or(buf.len(), |i| hit + i);
            let line = &buf[start..end];
            self.confirm(line.strip_suffix(b"\r").unwrap_or(line));
            pos = end + 1;
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
        let matcher = self.db.matcher();
        for &p in &self.scratch {
            let t = Instant::now();
            let matched = matcher.is_match(p as usize, line);
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
            .map(|(id, &(candidates, matches, time))| Cost {
                id: id.clone(),
                candidates,
                matches,
                confirm_seconds: time.as_secs_f64(),
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
mod tests {
    use super::*;
    use crate::EmbeddedDatabase;

    fn corpus() -> Corpus {
        Corpus::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus")).unwrap()
    }

    #[test]
    fn profile_counts_candidates_and_matches() {
        let db = Database::embedded();
        let mut p = Profiler::new(db);
        let oom = b"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 3 has a total capacity of 79.19 GiB of which 1.01 GiB is free.";
        let mut buf = Vec::new();
        for _ in 0..3 {
            buf.extend_from_slice(oom);
            buf.extend_from_slice(b"\nok\n");
        }
        p.scan(&buf);
        assert_eq!(p.candidate_lines, 3);
        let costs = p.costs();
        let hit = db.match_line(oom);
        for &s in &hit.signatures {
            let id = &db.signature(s).id;
            let c = costs.iter().find(|c| &c.id == id).unwrap();
            assert_eq!((c.candidates, c.matches), (3, 3), "{c:?}");
        }
        let never: u64 = costs
            .iter()
            .filter(|c| c.id.starts_with("vllm.attention"))
            .map(|c| c.matches)
            .sum();
        assert_eq!(never, 0);
    }

    #[test]
    fn unreadable_logs_are_listed_and_left_out() {
        let dir = tempfile::tempdir().unwrap();
        let log = "ModuleNotFoundError: No module named 'flash_attn'\n";
        std::fs::write(dir.path().join("good.log"), log).unwrap();
        std::fs::write(
            dir.path().join("good.expect.toml"),
            "root_cause = \"No module named 'flash_attn'\"\ncategory = \"import\"\nsource = \"t\"\n",
        )
        .unwrap();
        let mut gz = vec![0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3];
        gz.extend([0xff; 32]);
        std::fs::write(dir.path().join("bad.log.gz"), gz).unwrap();
        let c = Corpus::load(dir.path()).unwrap();
        assert_eq!(c.logs.len(), 2);
        let opts = BenchOptions {
            min_time: Duration::ZERO,
            ..BenchOptions::default()
        };
        let b = run(Database::embedded(), &c, &opts);
        assert_eq!(b.inputs, 1);
        assert_eq!(b.bytes, log.len() as u64);
        assert_eq!(b.errors.len(), 1);
        assert!(b.errors[0].contains("bad.log.gz"), "{:?}", b.errors);
        assert_eq!((b.accuracy.cases, b.accuracy.passed), (1, 1));
        assert_eq!(b.accuracy.categories[0].category, "import");
    }

    #[test]
    fn bench_over_the_shipped_corpus() {
        let c = corpus();
        let opts = BenchOptions {
            min_time: Duration::ZERO,
            ..BenchOptions::default()
        };
        let b = run(Database::embedded(), &c, &opts);
        assert_eq!(b.inputs, c.logs.len());
        assert!(b.errors.is_empty(), "{:?}", b.errors);
        // Failing logs are scored top-1, healthy ones for false alarms: together every case.
        assert_eq!(
            (b.accuracy.cases + b.accuracy.healthy) as usize,
            c.cases.len()
        );
        let per_cat: u64 = b.accuracy.categories.iter().map(|c| c.cases).sum();
        assert_eq!(per_cat, b.accuracy.cases);
        assert_eq!(
            b.accuracy.cases - b.accuracy.passed,
            b.accuracy.misses.len() as u64
        );
        assert_eq!(b.passes, 1);
        assert!(b.bytes > 0 && b.lines > 0);
        let total_bytes: u64 = c
            .logs
            .iter()
            .map(|l| read_decoded(l).unwrap().len() as u64)
            .sum();
        assert_eq!(b.bytes, total_bytes);
    }
}
