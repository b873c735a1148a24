//! `--job`: the inputs of one distributed job make one report whose root cause is the first
//! failure in time that does not wait on a peer, and whose `first_failure` says which rank or
//! node that was; the same inside one log whose lines carry rank or node prefixes.

use crate::common::{faultline, stderr, stdout};
use faultline::{analyze_job, AnalyzeOptions, Database, EmbeddedDatabase, Input};
use faultline::{Report, ScanOptions};
use serde_json::Value;
use std::path::Path;
use std::time::{Duration, SystemTime};

/// A rank's ordinary first line, at 12:00:00 on its clock.
fn step(rank: usize) -> String {
    format!(
        "[rank{rank}]:[I1207 12:00:00.000000 {} train.py:10] step 100 loss 2.31\n",
        700 + rank
    )
}

/// A rank that raises its own exception: a warning at `at` (its clock), then an untimed
/// traceback.
fn raises(rank: usize, at: &str, exception: &str) -> String {
    format!(
        "{}[rank{rank}]:[W1207 {at} {} train.py:20] batch 17 looks odd\n\
         [rank{rank}]: Traceback (most recent call last):\n\
         [rank{rank}]:   File \"train.py\", line 40, in <module>\n\
         [rank{rank}]:     main()\n\
         [rank{rank}]:   File \"train.py\", line 30, in main\n\
         [rank{rank}]:     check(batch)\n\
         [rank{rank}]: {exception}\n",
        step(rank),
        700 + rank
    )
}

/// A rank whose collective timed out at `at` (its clock), waiting for a peer.
fn times_out(rank: usize, at: &str) -> String {
    format!(
        "{}[rank{rank}]:[E1207 {at} {} ProcessGroupNCCL.cpp:607] [Rank {rank}] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1580, OpType=ALLREDUCE, NumelIn=466119168, NumelOut=466119168, Timeout(ms)=600000) ran for 600060 milliseconds before timing out.\n",
        step(rank),
        700 + rank
    )
}

const VALUE_ERROR: &str = "ValueError: batch 17 has 3 labels for 4 inputs";
const OOM: &str = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.19 GiB of which 1.01 GiB is free.";

/// Writes `files` (path under `dir`, text) and returns the directory's path as text.
fn job_dir(dir: &Path, files: &[(String, String)]) -> String {
    for (name, text) in files {
        let path = dir.join(name);
        std::fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
        std::fs::write(&path, text).expect("write");
    }
    dir.display().to_string()
}

fn json(args: &[&str]) -> (Value, i32) {
    let out = faultline(args);
    let v = serde_json::from_str(stdout(&out).trim()).expect("one JSON report");
    (v, out.status.code().unwrap_or(-1))
}

/// Eight ranks on two nodes: rank 5 raises, the seven others time out ten minutes later.
fn eight_ranks(dir: &Path) -> String {
    let files: Vec<(String, String)> = (0..8)
        .map(|r| {
            let node = if r < 4 { "node-a" } else { "node-b" };
            let text = if r == 5 {
                raises(r, "12:00:03.200000", VALUE_ERROR)
            } else {
                times_out(r, "12:10:03.000000")
            };
            (format!("{node}/rank{r}.log"), text)
        })
        .collect();
    job_dir(dir, &files)
}

#[test]
fn one_rank_raises_and_the_others_time_out_waiting() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let root = eight_ranks(tmp.path());
    let (r, code) = json(&["scan", "--job", "--format", "json", &root]);
    assert_eq!(code, 0, "a failed job");
    assert_eq!(r["input"], root.as_str());
    let inputs = r["inputs"].as_array().expect("inputs");
    assert_eq!(inputs.len(), 8);
    let names: Vec<&str> = inputs
        .iter()
        .map(|i| i["input"].as_str().unwrap_or(""))
        .collect();
    let mut sorted = names.clone();
    sorted.sort();
    assert_eq!(names, sorted, "in path order");
    for key in [
        "bytes",
        "lines",
        "runs",
        "run_outcomes",
        "error",
        "ended_early",
    ] {
        assert!(inputs[0].get(key).is_some(), "{key}");
    }
    let sum = |k: &str| {
        inputs
            .iter()
            .map(|i| i[k].as_u64().unwrap_or(0))
            .sum::<u64>()
    };
    assert_eq!(r["bytes"].as_u64(), Some(sum("bytes")));
    assert_eq!(r["lines"].as_u64(), Some(sum("lines")));
    let rank5 = format!("{root}/node-b/rank5.log");
    let ff = &r["first_failure"];
    assert_eq!(ff["input"], rank5.as_str());
    assert_eq!(ff["process"], "rank5");
    assert_eq!(ff["node"], "node-b");
    assert_eq!(ff["line"], 8);
    assert_eq!(ff["timestamp_from"], "before", "{ff}");
    assert_eq!(ff["waits_on_peer"], false);
    assert_eq!(ff["others_waiting"], 7);
    let findings = r["findings"].as_array().expect("findings");
    assert_eq!(findings[0]["input"], rank5.as_str());
    assert_eq!(findings[0]["line"], ff["line"]);
    assert!(findings[0]["text"]
        .as_str()
        .unwrap_or("")
        .contains("ValueError"));
    // The seven timeouts fold into one finding, listed after the own failure.
    let timeout = &findings[1];
    assert_eq!(
        timeout["signature"],
        "pytorch.distributed.nccl-watchdog-timeout"
    );
    assert_eq!(timeout["count"], 7);
    assert_eq!(timeout["process_count"], 7);
    assert!(timeout["why"]
        .as_str()
        .unwrap_or("")
        .contains("folded from 7 inputs"));
    let human = stdout(&faultline(&["scan", "--job", &root]));
    assert!(
        human.contains("rank 5 on node-b failed first at 12:00:03 (the last time its log printed before it); 7 other ranks timed out waiting"),
        "{human}"
    );
}

#[test]
fn without_the_job_view_each_rank_is_its_own_report() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let root = eight_ranks(tmp.path());
    let out = stdout(&faultline(&["scan", "--format", "json", &root]));
    let reports: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).expect("json"))
        .collect();
    assert_eq!(reports.len(), 8);
    for r in &reports {
        assert!(r.get("first_failure").is_some_and(Value::is_null), "{r}");
        assert!(r.get("inputs").is_none());
        assert!(r["findings"][0].get("input").is_none());
    }
}

/// Two ranks with failures of their own 1.5 s apart on their clocks: rank 1's unknown
/// exception first by the clocks, rank 0's out-of-memory error at 12:00:03.5.
fn two_own_failures(dir: &Path) -> String {
    job_dir(
        dir,
        &[
            ("rank0.log".into(), raises(0, "12:00:03.500000", OOM)),
            (
                "rank1.log".into(),
                raises(1, "12:00:02.000000", VALUE_ERROR),
            ),
            // A waiting rank whose clock runs 1.5 s early: never the root cause.
            ("rank2.log".into(), times_out(2, "12:00:01.000000")),
        ],
    )
}

#[test]
fn skewed_clocks_inside_the_tolerance_are_simultaneous() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let root = two_own_failures(tmp.path());
    // Within the default 2 s the two failures are simultaneous: the known cause leads.
    let (r, _) = json(&["scan", "--job", "--format", "json", &root]);
    assert_eq!(
        r["first_failure"]["process"], "rank0",
        "{}",
        r["first_failure"]
    );
    assert_eq!(r["findings"][0]["signature"], "pytorch.cuda.oom");
    assert_eq!(r["first_failure"]["others_waiting"], 1);
    // With 1 s of skew they are not: the earlier one leads.
    let (r, _) = json(&[
        "scan",
        "--job",
        "--clock-skew",
        "1s",
        "--format",
        "json",
        &root,
    ]);
    assert_eq!(r["first_failure"]["process"], "rank1");
    let (r, _) = json(&[
        "scan",
        "--job",
        "--clock-skew",
        "500ms",
        "--format",
        "json",
        &root,
    ]);
    assert_eq!(r["first_failure"]["process"], "rank1");
    let bad = faultline(&["scan", "--job", "--clock-skew", "soon", &root]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(stderr(&bad).contains("not a duration"), "{}", stderr(&bad));
}

/// A rank's log with no timestamp at all: a traceback that ends in `exception`.
fn untimed(rank: usize, exception: &str) -> String {
    format!(
        "[rank{rank}]: Traceback (most recent call last):\n\
         [rank{rank}]:   File \"train.py\", line 30, in main\n\
         [rank{rank}]:     check(batch)\n\
         [rank{rank}]: {exception}\n"
    )
}

#[test]
fn untimed_tracebacks_are_ordered_by_modification_time_then_path() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let root = job_dir(
        tmp.path(),
        &[
            ("rank0.log".into(), untimed(0, "KeyError: 'labels'")),
            ("rank1.log".into(), untimed(1, VALUE_ERROR)),
        ],
    );
    // rank1's file was last written a minute before rank0's.
    let now = SystemTime::now();
    for (name, age) in [("rank0.log", 60), ("rank1.log", 120)] {
        let f = std::fs::File::options()
            .write(true)
            .open(tmp.path().join(name))
            .expect("open");
        f.set_modified(now - Duration::from_secs(age))
            .expect("mtime");
    }
    let (r, _) = json(&["scan", "--job", "--format", "json", &root]);
    assert_eq!(
        r["first_failure"]["process"], "rank1",
        "{}",
        r["first_failure"]
    );
    assert_eq!(r["first_failure"]["timestamp_from"], "mtime");
    // Without a file (and so without a modification time) they are untimed: after a timed
    // failure, then in path order.
    let member =
        |name: &str, text: String| Ok(Input::from_bytes(Path::new(name), text.into_bytes()));
    let r = job(vec![
        member("job/rank0.log", untimed(0, "KeyError: 'labels'")),
        member("job/rank1.log", untimed(1, VALUE_ERROR)),
        member(
            "job/rank2.log",
            format!("[rank2]:[E1207 12:30:00.000000 9 train.py:50] {OOM}\n"),
        ),
    ]);
    let order: Vec<&str> = r
        .findings
        .iter()
        .take(3)
        .filter_map(|f| f.input.as_deref())
        .collect();
    assert_eq!(order, ["job/rank2.log", "job/rank0.log", "job/rank1.log"]);
    let ff = r.first_failure.expect("a first failure");
    assert_eq!(ff.process.as_deref(), Some("rank2"));
    assert_eq!(
        ff.node.as_deref(),
        Some("rank2"),
        "the file name under the job's root"
    );
}

fn job(members: Vec<faultline::Result<Input>>) -> Report {
    analyze_job(
        Database::embedded(),
        "job",
        members,
        &ScanOptions::default(),
        AnalyzeOptions::default(),
    )
}

#[test]
fn when_every_failure_waits_the_earliest_is_first_and_the_report_says_so() {
    let member = |r: usize, at: &str| {
        Ok(Input::from_bytes(
            Path::new(&format!("job/rank{r}.log")),
            times_out(r, at).into_bytes(),
        ))
    };
    let r = job(vec![
        member(0, "12:10:09.000000"),
        member(1, "12:10:03.000000"),
        member(2, "12:10:06.000000"),
    ]);
    let ff = r.first_failure.clone().expect("a first failure");
    assert!(ff.waits_on_peer);
    assert_eq!(ff.process.as_deref(), Some("rank1"));
    assert_eq!(ff.others_waiting, 2);
    let human = faultline::render_human(&r, false);
    assert!(
        human.contains("no rank shows its own failure: every failure waits on a peer; rank 1 was first at 12:10:03; 2 other ranks timed out waiting"),
        "{human}"
    );
}

#[test]
fn an_unreadable_member_sets_the_error_and_the_rest_is_analysed() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let root = eight_ranks(tmp.path());
    let missing = tmp.path().join("node-c/rank8.log");
    let (r, code) = json(&[
        "scan",
        "--job",
        "--format",
        "json",
        &root,
        &missing.display().to_string(),
    ]);
    assert_eq!(code, 2, "an error");
    assert!(
        r["error"].as_str().unwrap_or("").contains("rank8.log"),
        "{}",
        r["error"]
    );
    let inputs = r["inputs"].as_array().expect("inputs");
    assert_eq!(inputs.len(), 9);
    assert!(inputs[8]["error"].is_string());
    assert_eq!(
        r["first_failure"]["process"], "rank5",
        "the rest is analysed"
    );
    // A walked directory's member that cannot be read: a gzip file cut short.
    let cut = tmp.path().join("node-b/rank9.log.gz");
    std::fs::write(&cut, [0x1f, 0x8b, 0x08, 0x00, 0x00]).expect("write");
    let (r, code) = json(&["scan", "--job", "--format", "json", &root]);
    assert_eq!(code, 2);
    assert!(
        r["error"].as_str().unwrap_or("").contains("rank9.log.gz"),
        "{}",
        r["error"]
    );
    assert_eq!(r["first_failure"]["process"], "rank5");
}

#[test]
fn job_with_shard_is_a_usage_error() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let root = eight_ranks(tmp.path());
    let out = faultline(&["scan", "--job", "--shard", "1/2", &root]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stdout(&out).is_empty());
    assert!(stderr(&out).contains("--job"), "{}", stderr(&out));
}

#[test]
fn with_summary_a_job_is_one_row() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let root = eight_ranks(tmp.path());
    let out = faultline(&["scan", "--job", "--summary", "--format", "json", &root]);
    assert_eq!(out.status.code(), Some(0));
    let s: Value = serde_json::from_str(stdout(&out).trim()).expect("json");
    assert_eq!(s["inputs"], 1, "{s}");
}

/// One log, the ranks' lines interleaved: rank 3 raises, the others time out later.
#[test]
fn inside_one_log_rank_prefixes_name_the_first_failure() {
    let mut log = String::new();
    for r in 0..4 {
        log.push_str(&step(r));
    }
    // The timeout lines come first in the log (a pipe flushed them first) but later in time.
    for r in [0, 1, 2] {
        log.push_str(times_out(r, "12:10:03.000000").lines().nth(1).unwrap_or(""));
        log.push('\n');
    }
    log.push_str(
        &raises(3, "12:00:03.000000", OOM)
            .lines()
            .skip(1)
            .collect::<Vec<_>>()
            .join("\n"),
    );
    log.push('\n');
    let r = report("ranks.log", &log);
    assert_eq!(
        r.findings[0].signature.as_deref(),
        Some("pytorch.cuda.oom"),
        "{:#?}",
        r.findings
    );
    let ff = r.first_failure.expect("several ranks");
    assert_eq!(ff.process.as_deref(), Some("rank3"));
    assert_eq!(ff.node, None);
    assert_eq!(ff.others_waiting, 3);
    assert_eq!(ff.line, r.findings[0].line);
    assert!(
        r.findings[0].why.contains("does not wait on a peer"),
        "{}",
        r.findings[0].why
    );
}

/// In one log, a failure printed before any timestamp happened before every timed line.
#[test]
fn inside_one_log_a_failure_before_the_first_timestamp_comes_first() {
    let log = format!(
        "{}{}",
        untimed(1, VALUE_ERROR),
        raises(0, "12:00:09.000000", OOM)
    );
    let r = report("ranks.log", &log);
    let ff = r.first_failure.expect("two ranks");
    assert_eq!(ff.process.as_deref(), Some("rank1"), "{:#?}", r.findings);
    assert_eq!(ff.timestamp, None);
    assert_eq!(r.findings[0].line, 4);
}

/// A torchrun console with `--tee`: each rank's lines relayed as `[defaultN]:[rankM]:`, and
/// the agent's own untagged report of the worker that failed.
#[test]
fn a_console_names_the_global_rank_and_counts_ranks_not_the_agent() {
    let mut log = String::new();
    for line in times_out(0, "12:10:03.000000").lines() {
        log.push_str(&format!("[default0]:{line}\n"));
    }
    for line in raises(1, "12:00:03.000000", VALUE_ERROR).lines() {
        log.push_str(&format!("[default1]:{line}\n"));
    }
    log.push_str("E1207 12:10:09.000000 80740 torch/distributed/elastic/multiprocessing/api.py:869] failed (exitcode: 1) local_rank: 1 (pid: 80746) of binary: /usr/bin/python3\n");
    let r = report("console.log", &log);
    let ff = r.first_failure.expect("two ranks");
    assert_eq!(ff.process.as_deref(), Some("rank1"), "{:#?}", r.findings);
    assert_eq!(ff.others_waiting, 1, "rank 0; the agent's line is no rank");
    // As one input of a job, its first failure says once why it is first.
    let job = job(vec![Ok(Input::from_bytes(
        Path::new("job/console.log"),
        log.into_bytes(),
    ))]);
    let why = &job.findings[0].why;
    assert_eq!(why.matches("does not wait on a peer").count(), 1, "{why}");
}

fn report(name: &str, log: &str) -> Report {
    faultline::analyze_input(
        Database::embedded(),
        Input::from_bytes(Path::new(name), log.as_bytes().to_vec()),
        &ScanOptions::default(),
        AnalyzeOptions::default(),
    )
}

#[test]
fn srun_labels_and_ray_prefixes_name_nodes() {
    let srun = "0: step 1 ok\n\
                1: Traceback (most recent call last):\n\
                1:   File \"train.py\", line 30, in main\n\
                1: ValueError: bad shard\n\
                0: gloo/transport/tcp/pair.cc:561] Connection closed by peer [10.0.0.2]:23211. This is typically caused by a remote worker crashing.\n";
    let r = report("srun.log", srun);
    let ff = r.first_failure.expect("two tasks");
    assert_eq!(ff.process.as_deref(), Some("task 1"));
    assert_eq!(ff.node.as_deref(), Some("task 1"));
    assert_eq!(ff.others_waiting, 1, "task 0 lost its peer");
    let ray = "(RayTrainWorker pid=123, ip=10.0.0.1) Traceback (most recent call last):\n\
               (RayTrainWorker pid=123, ip=10.0.0.1)   File \"train.py\", line 30, in main\n\
               (RayTrainWorker pid=123, ip=10.0.0.1) ValueError: bad shard\n\
               (RayTrainWorker pid=456, ip=10.0.0.2) RuntimeError: [/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:561] Connection closed by peer [10.0.0.1]:23211. This is typically caused by a remote worker crashing.\n";
    let ff = report("ray.log", ray).first_failure.expect("two nodes");
    assert_eq!(ff.node.as_deref(), Some("10.0.0.1"));
    assert_eq!(ff.others_waiting, 1);
    // One process's failure, however many ranks print noise: no first failure to name.
    let one = format!("{}{}", step(0), raises(0, "12:00:03.000000", OOM));
    assert!(report("one.log", &one).first_failure.is_none());
}
