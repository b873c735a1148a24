//! Properties of run outcomes over the real corpus: completion evidence after a survived error
//! never fails a log; an uncaught interpreter traceback appended to a healthy log fails its
//! last run with that exception first; per-request error blocks under a process of their own
//! never change a failing log's first finding or outcomes. Also: the shipped launch log twice
//! in one file is two runs, the MLA/FP8 finding first, in run 2.

use faultline::tools::{load_corpus, Case};
use faultline::{analyze_input, AnalyzeOptions, Database, EmbeddedDatabase};
use faultline::{Input, Report, RunState, ScanOptions};
use proptest::prelude::*;
use std::path::Path;
use std::sync::OnceLock;

fn report(log: &[u8]) -> Report {
    let input = Input::from_bytes(Path::new("t.log"), log.to_vec());
    analyze_input(
        Database::embedded(),
        input,
        &ScanOptions::default(),
        AnalyzeOptions::default(),
    )
}

/// Corpus logs with their text.
pub(crate) type Logs = Vec<(Case, Vec<u8>)>;

/// The fragments of the corpus, healthy and failing, with their text.
pub(crate) fn corpus() -> &'static (Logs, Logs) {
    static CORPUS: OnceLock<(Logs, Logs)> = OnceLock::new();
    CORPUS.get_or_init(|| {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus");
        let (healthy, failing) = load_corpus(&dir)
            .unwrap()
            .into_iter()
            .filter(|c| !c.expect.whole)
            .map(|c| {
                let text = std::fs::read(&c.log).unwrap();
                (c, text)
            })
            .partition(|(c, _)| c.expect.clean);
        (healthy, failing)
    })
}

fn with_newline(mut log: Vec<u8>) -> Vec<u8> {
    if log.last().is_some_and(|&b| b != b'\n') {
        log.push(b'\n');
    }
    log
}

/// Error lines of several kinds, each one a process could go on after: a per-request error, a
/// failed download, an out-of-memory error a trainer recovers from by lowering its batch.
const ERRORS: &[&str] = &[
    "ERROR 02-20 21:35:48 [serving_chat.py:200] ValueError: This model's maximum context length is 4096 tokens. However, you requested 5000 tokens (5000 in the messages, 0 in the completion). Please reduce the length of the messages or completion.",
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.19 GiB of which 1.01 GiB is free.",
    "ModuleNotFoundError: No module named 'flash_attn'",
    "Killed",
];

/// Completion evidence lines (the `completed` signatures' examples).
const COMPLETIONS: &[&str] = &[
    "I1204 20:25:15.308000 13491 torch/distributed/elastic/agent/server/api.py:984] Local worker group finished (WorkerState.SUCCEEDED). Waiting 300 seconds for other agents to finish",
    "Local worker group finished (WorkerState.SUCCEEDED). Waiting 300 seconds for other agents to finish",
];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Completion evidence of the same run after an error shows the error did not end the run.
    #[test]
    fn completion_after_a_survived_error_never_fails_a_log(
        i in any::<prop::sample::Index>(),
        e in 0..ERRORS.len(),
        c in 0..COMPLETIONS.len(),
    ) {
        let healthy = &corpus().0;
        let (case, text) = &healthy[i.index(healthy.len())];
        let mut log = with_newline(text.clone());
        log.extend_from_slice(format!("{}\n{}\n", ERRORS[e], COMPLETIONS[c]).as_bytes());
        let r = report(&log);
        // Of the same run: a completion line whose clock steps back opens another.
        prop_assume!(r.runs == report(text).runs.max(1));
        prop_assert!(!r.failed, "{}: {:?}", case.name, r.findings.first().map(|f| (&f.text, &f.why)));
        prop_assert_eq!(r.run_outcomes.last().map(|o| o.outcome), Some(RunState::Completed));
    }

    /// An exception that reached the program's entry point, printed by the interpreter, ends
    /// the program: appended to a healthy log whose last run was not stopped, it fails that
    /// run and is its first finding.
    #[test]
    fn an_uncaught_traceback_fails_a_healthy_logs_last_run(
        i in any::<prop::sample::Index>(),
        n in 0u32..1000,
    ) {
        let healthy = &corpus().0;
        let (case, text) = &healthy[i.index(healthy.len())];
        let before = report(text);
        prop_assume!(before.run_outcomes.last().is_some_and(|o| o.outcome != RunState::Stopped));
        let mut log = with_newline(text.clone());
        let exception = format!("ValueError: invalid literal for int() with base 10: 'x{n}'");
        log.extend_from_slice(
            format!("Traceback (most recent call last):\n  File \"train.py\", line 9, in <module>\n    main()\n  File \"train.py\", line 5, in main\n    int(s)\n{exception}\n").as_bytes(),
        );
        let r = report(&log);
        prop_assert!(r.failed, "{}", case.name);
        let last = r.run_outcomes.last().unwrap();
        prop_assert_eq!(last.outcome, RunState::Failed, "{}", case.name);
        prop_assert!(r.findings[0].text.contains(&exception), "{}: {:?}", case.name, r.findings[0].text);
        prop_assert_eq!(r.findings[0].run, last.run);
    }

    /// A request's error under a process tag the log does not use (logged, its traceback, the
    /// 400 it was answered with), inserted anywhere in a failing log, changes neither the
    /// first finding nor the run outcomes.
    #[test]
    fn per_request_error_blocks_never_change_a_failing_logs_diagnosis(
        i in any::<prop::sample::Index>(),
        at in any::<prop::sample::Index>(),
        n in 0u32..1000,
    ) {
        let failing = &corpus().1;
        let (case, text) = &failing[i.index(failing.len())];
        let before = report(text);
        // A failing log: one whose run failed (a few failing logs' root cause is survivable).
        prop_assume!(before.failed);
        let tag = "(APIServer_Z9 pid=99991)";
        let block = format!(
            "{tag} ERROR [serving_chat.py:200] Error in preprocessing prompt inputs\n\
             {tag} Traceback (most recent call last):\n\
             {tag}   File \"/vllm/entrypoints/openai/serving_chat.py\", line 180, in create_chat_completion\n\
             {tag}     self._validate_input(request, input_ids)\n\
             {tag} ValueError: This model's maximum context length is 4096 tokens. However, you requested {} tokens (5000 in the messages, 0 in the completion). Please reduce the length of the messages or completion.\n\
             {tag} INFO:     10.0.0.1:5000 - \"POST /v1/chat/completions HTTP/1.1\" 400 Bad Request\n",
            5000 + n
        );
        let text = with_newline(text.clone());
        let starts: Vec<usize> = std::iter::once(0)
            .chain(text.iter().enumerate().filter(|(_, &b)| b == b'\n').map(|(k, _)| k + 1))
            .collect();
        let cut = starts[at.index(starts.len())];
        let mut log = text[..cut].to_vec();
        log.extend_from_slice(block.as_bytes());
        log.extend_from_slice(&text[cut..]);
        let after = report(&log);
        let first = |r: &Report| r.findings.first().map(|f| (f.text.clone(), f.signature.clone(), f.run));
        prop_assert_eq!(first(&after), first(&before), "{}", case.name);
        let outcomes = |r: &Report| r.run_outcomes.iter().map(|o| o.outcome).collect::<Vec<_>>();
        prop_assert_eq!(outcomes(&after), outcomes(&before), "{}", case.name);
    }
}

/// The shipped launch log twice in one file: two launches, two runs, both failed, and the
/// last run's MLA/FP8 error first.
#[test]
fn two_launches_of_the_shipped_log_are_two_runs() {
    let one =
        std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/kimi-k2.5-launch.log"))
            .unwrap();
    let mut two = with_newline(one.clone());
    two.extend_from_slice(&one);
    let r = report(&two);
    assert_eq!(r.runs, 2);
    let states: Vec<RunState> = r.run_outcomes.iter().map(|o| o.outcome).collect();
    assert_eq!(states, [RunState::Failed, RunState::Failed]);
    let first = &r.findings[0];
    assert_eq!(
        first.signature.as_deref(),
        Some("vllm.attention.mla-fp8-kv-no-backend")
    );
    assert_eq!(first.run, 2);
    assert_eq!(r.run_outcomes[1].line, Some(first.line));
}

/// `run_outcomes` holds exactly one entry per run, none for an empty input.
#[test]
fn run_outcomes_has_one_entry_per_run() {
    let r = report(b"");
    assert_eq!((r.runs, r.run_outcomes.len()), (0, 0));
    for (_, text) in corpus().0.iter().chain(corpus().1.iter()) {
        let r = report(text);
        assert_eq!(r.run_outcomes.len() as u32, r.runs);
        assert_eq!(
            r.failed,
            r.run_outcomes.iter().any(|o| o.outcome == RunState::Failed)
        );
    }
}

/// Worker processes that print on after the main program exited on Ctrl-C are no new launch:
/// one run, stopped. A second launch that shows progress after the exit is one.
#[test]
fn lines_left_over_after_a_stop_exit_are_no_new_run() {
    let mut log = String::new();
    for i in 1..30 {
        log.push_str(&format!(
            "epoch 0 step {} loss {:.3}\n",
            i * 10,
            2.5 - f64::from(i) * 0.01
        ));
    }
    log.push_str("Traceback (most recent call last):\n  File \"tools/train.py\", line 210, in <module>\n    main()\n  File \"tools/train.py\", line 160, in main\n    train_model(model)\nKeyboardInterrupt\n");
    let mut leftovers = log.clone();
    leftovers.push_str("Frame :  000001\nUserWarning: something deprecated\nFrame :  000002\n");
    let r = report(leftovers.as_bytes());
    let states: Vec<RunState> = r.run_outcomes.iter().map(|o| o.outcome).collect();
    assert_eq!((r.runs, states), (1, vec![RunState::Stopped]));
    let mut relaunch = log.clone();
    relaunch.push_str("UserWarning: something deprecated\nepoch 0 step 10 loss 2.490\n");
    let r = report(relaunch.as_bytes());
    let states: Vec<RunState> = r.run_outcomes.iter().map(|o| o.outcome).collect();
    assert_eq!(states, [RunState::Stopped, RunState::Running]);
}

/// Every rank of one launch prints argparse's usage line and its error: one run, failed, the
/// first error first. A type function's own message (`ArgumentTypeError`) is as fatal as
/// argparse's.
#[test]
fn ranks_rejecting_one_command_line_are_one_failed_run() {
    let rank = |arg: &str| {
        format!(
            "usage: train.py [-h] [--fp16 FP16] [--lr LR]\n                [--epochs EPOCHS]\ntrain.py: error: argument {arg}\n"
        )
    };
    let log = rank("--fp16: Truthy value expected: got s")
        + &rank("--fp16: Truthy value expected: got s");
    let r = report(log.as_bytes());
    let states: Vec<RunState> = r.run_outcomes.iter().map(|o| o.outcome).collect();
    assert_eq!(states, [RunState::Failed]);
    assert_eq!(
        r.findings[0].signature.as_deref(),
        Some("python.argparse.bad-argument-value")
    );
    assert_eq!(r.findings[0].line, 3);
}
