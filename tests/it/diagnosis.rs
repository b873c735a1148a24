//! Properties of the diagnosis: per-request errors the engine goes on after and ordinary INFO
//! lines inserted before a fatal failure never change the root cause, and a healthy run
//! appended after a failed one (after the server's banner or a torch elastic restart) keeps
//! the failure (in run 1) and the failed status. A log whose end says a failure no signature
//! knows is never silent; one whose process went on after its error lines stays clean.

use faultline::Database;
use faultline::EmbeddedDatabase;
use faultline::Report;
use faultline::{analyze_input, AnalyzeOptions};
use faultline::{Input, ScanOptions};
use proptest::prelude::*;
use std::path::Path;

pub(crate) fn report(log: &str) -> Report {
    let input = Input::from_bytes(Path::new("t.log"), log.as_bytes().to_vec());
    analyze_input(
        Database::embedded(),
        input,
        &ScanOptions::default(),
        AnalyzeOptions::default(),
    )
}

const TS: &str = "02-20 21:35:48";

/// A vLLM per-request error: logged at ERROR with the request's traceback, answered with a
/// 400, and the engine goes on.
fn request_error(n: usize, prompt: usize) -> String {
    format!(
        "ERROR {TS} [serving_chat.py:200] Error in preprocessing prompt inputs\n\
         Traceback (most recent call last):\n  File \"/vllm/entrypoints/openai/serving_chat.py\", line 180, in create_chat_completion\n    self._validate_input(request, input_ids)\n\
         ValueError: This model's maximum context length is 4096 tokens. However, you requested {prompt} tokens ({prompt} in the messages, 0 in the completion). Please reduce the length of the messages or completion.\n\
         INFO:     10.0.0.{n}:5000 - \"POST /v1/chat/completions HTTP/1.1\" 400 Bad Request\n\
         INFO {TS} [metrics.py:1] Avg prompt throughput: 1.0 tokens/s, Running: 1 reqs\n"
    )
}

/// An ordinary INFO line, as a seeded serving log has them.
fn info(n: usize) -> String {
    format!("INFO {TS} [engine.py:275] Added request chatcmpl-{n:08x}.\n")
}

/// Fatal failures: a known cause inside a traceback, an unknown exception that ends its
/// process, a known cause with no traceback.
const FAILURES: [(&str, &str); 3] = [
    (
        "Traceback (most recent call last):\n  File \"/vllm/worker.py\", line 1, in execute_model\n    out = self.model(x)\n",
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.19 GiB of which 1.01 GiB is free.",
    ),
    (
        "Traceback (most recent call last):\n  File \"/app/k.py\", line 3, in run\n    kernel[grid](x)\n",
        "mylib.errors.ResourceExhausted: out of SRAM: Required: 98304, Hardware limit: 65536",
    ),
    ("", "ModuleNotFoundError: No module named 'flash_attn'"),
];

/// Healthy lines before the failure: some INFO lines and a per-request error.
fn prefix() -> String {
    format!("{}{}{}", info(1), request_error(1, 5000), info(2))
}

/// A per-request error with no traceback, as vLLM logs a request for a model it does not
/// serve, answered with a 404; the server goes on.
fn not_found(n: usize) -> String {
    format!(
        "ERROR {TS} [serving_chat.py:133] Error with model object='error' message='The model `m{n}` does not exist.' type='NotFoundError' param=None code=404\n\
         INFO:     10.0.0.{n}:5000 - \"POST /v1/chat/completions HTTP/1.1\" 404 Not Found\n"
    )
}

/// Lines no signature knows that say a failure, as a program's last words.
const LAST_WORDS: [&str; 4] = [
    "frobtool: error: cannot open /dev/frob0: No such device",
    "ERROR 02-20 21:35:48 [loader.py:88] Unable to read shard 3 of the checkpoint",
    "Fatal: the scheduler refused the job: quota exceeded",
    "time=2026-01-02T03:04:05Z level=error msg=\"runner failed to start\" err=\"exit status 2\"",
];

#[test]
fn a_log_that_ends_in_a_failure_no_signature_knows_is_not_silent() {
    for last in LAST_WORDS {
        let log = format!("{}{}{last}\n", info(1), info(2));
        let got = report(&log);
        let first = got.findings.first();
        assert!(
            first.is_some_and(|f| f.is_failure() && f.text == last && f.line == 3),
            "{log}\n{:#?}",
            got.findings
        );
        assert!(got.failed);
        // Counted once: as the finding's line, not also as an error line no finding took.
        assert_eq!(
            (
                got.counts.unclassified_lines,
                got.counts.unmatched_error_lines
            ),
            (1, 0),
            "{log}"
        );
        // Stack lines and a shutdown after it change nothing.
        let log = format!(
            "{}{last}\n    at frob.c:12\nINFO {TS} [api.py:9] Shutting down\n",
            info(1)
        );
        assert_eq!(
            report(&log).findings.first().map(|f| f.line),
            Some(2),
            "{log}"
        );
    }
}

#[test]
fn a_log_that_ends_in_a_warning_is_not_a_failure() {
    let log = format!(
        "{}WARNING {TS} [x.py:1] Failed to read commit hash: no git\n",
        info(1)
    );
    let got = report(&log);
    assert!(!got.failed, "{:#?}", got.findings);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// The tail rule's counterexample: error lines its process went on after (lines at INFO).
    #[test]
    fn errors_a_server_went_on_after_leave_a_healthy_log_clean(
        lines in proptest::collection::vec((any::<bool>(), 1usize..250), 1..40),
    ) {
        let mut log = String::new();
        for (error, n) in &lines {
            log.push_str(&if *error { not_found(*n) } else { info(*n) });
        }
        let got = report(&log);
        prop_assert!(!got.failed, "{log}\n{:#?}", got.findings);
    }

    #[test]
    fn request_errors_and_info_lines_before_a_failure_never_change_the_root_cause(
        which in 0usize..FAILURES.len(),
        inserts in proptest::collection::vec((any::<prop::sample::Index>(), any::<bool>(), 1usize..50, 4097usize..90_000), 0..12),
    ) {
        let (tb, failure) = FAILURES[which];
        let base = prefix();
        let base_lines: Vec<&str> = base.split_inclusive('\n').collect();
        let tail = format!("{tb}{failure}\n");
        let want = report(&format!("{base}{tail}"));
        let first = want.findings.first().cloned();
        prop_assert!(first.as_ref().is_some_and(|f| f.is_failure() && f.text == failure), "{:#?}", want.findings);
        // Insert at line boundaries outside any traceback: before a line that starts a block.
        let boundaries: Vec<usize> = base_lines
            .iter()
            .enumerate()
            .filter(|(_, l)| l.starts_with("INFO ") || l.starts_with("ERROR "))
            .map(|(i, _)| i)
            .chain(std::iter::once(base_lines.len()))
            .collect();
        let mut pieces: Vec<Vec<String>> = vec![Vec::new(); base_lines.len() + 1];
        for (at, is_error, n, prompt) in &inserts {
            let b = boundaries[at.index(boundaries.len())];
            pieces[b].push(if *is_error { request_error(*n, *prompt) } else { info(*n) });
        }
        let mut log = String::new();
        for (i, line) in base_lines.iter().enumerate() {
            log.extend(pieces[i].iter().cloned());
            log.push_str(line);
        }
        log.extend(pieces[base_lines.len()].iter().cloned());
        log.push_str(&tail);
        let got = report(&log);
        let f = &got.findings[0];
        prop_assert!(f.is_failure() && f.text == failure, "{log}\n{:#?}", got.findings);
        prop_assert!(got.failed);
    }

    #[test]
    fn a_healthy_run_after_a_failed_one_keeps_the_failure_in_run_1(
        which in 0usize..FAILURES.len(),
        healthy in 0usize..20,
        restart in any::<bool>(),
    ) {
        let (tb, failure) = FAILURES[which];
        let banner = format!("INFO {TS} [api_server.py:1] vLLM API server version 0.9.1\n");
        let failed_run = format!("{banner}{}{tb}{failure}\n", prefix());
        let one = report(&failed_run);
        // The second run starts with the server's banner again, or with torch elastic
        // restarting the worker group (its agent's lines as nnU-Net's paste has them).
        let second = if restart {
            "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: 1) local_rank: 2 (pid: 68788) of binary: /usr/bin/python\n\
             ERROR:torch.distributed.elastic.agent.server.local_elastic_agent:[default] Worker group failed\n\
             INFO:torch.distributed.elastic.agent.server.api:[default] Worker group FAILED. 3/3 attempts left; will restart worker group\n\
             INFO:torch.distributed.elastic.agent.server.api:[default] Stopping worker group\n\
             INFO:torch.distributed.elastic.agent.server.api:[default] Rendezvous'ing worker group\n\
             INFO:torch.distributed.elastic.agent.server.api:[default] Rendezvous complete for workers. Result:\n  restart_count=1\n  master_addr=127.0.0.1\n\n\
             INFO:torch.distributed.elastic.agent.server.api:[default] Starting worker group\n".to_string()
        } else {
            banner.clone()
        };
        let mut log = format!("{failed_run}{second}");
        for n in 0..healthy {
            log.push_str(&info(n));
        }
        let two = report(&log);
        prop_assert_eq!(two.runs, 2);
        prop_assert!(two.failed, "exit status stays 0");
        let (a, b) = (&one.findings[0], &two.findings[0]);
        prop_assert_eq!((&a.text, a.line, a.run), (&b.text, b.line, 1));
        prop_assert!(b.is_failure());
        let text = faultline::render_human(&two, false);
        prop_assert!(text.contains("run 1 of 2 failed; the last run shows no failure"), "{}", text);
    }
}

/// The report on the corpus log `name` by the embedded set without the signatures `off`
/// selects: how the analysis's generic rules do where no signature knows the lines.
fn corpus_report_without(name: &str, off: impl Fn(&str) -> bool) -> Report {
    let mut set = faultline::embedded_signature_set().unwrap();
    let ids: Vec<String> = set
        .signatures
        .iter()
        .map(|s| s.info.id.clone())
        .filter(|id| off(id))
        .collect();
    set.disable(&ids).unwrap();
    let db = Box::leak(Box::new(Database::compile(&set).unwrap()));
    let log = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/corpus")
        .join(name);
    analyze_input(
        db,
        faultline::open(&log).unwrap(),
        &ScanOptions::default(),
        AnalyzeOptions::default(),
    )
}

/// The generic logged-terminal rule on a real healthy log, with the noise signature that
/// names its line switched off: InvokeAI logs PyPatchMatch's failed `make` at ERROR
/// (`returned non-zero exit status 2`) and goes on at INFO, so the log is not failed.
#[test]
fn a_logged_child_exit_the_process_went_on_after_does_not_fail_a_real_log() {
    let report = corpus_report_without(
        "invokeai-healthy-patchmatch-not-loaded-nonfatal-startup.log",
        |id| id == "noise.patchmatch.load-failed-nonfatal",
    );
    assert!(!report.failed, "{:#?}", report.findings);
    let first = report
        .findings
        .first()
        .expect("the survived line is listed");
    assert_eq!(first.line, 5);
    assert!(first.survivable && !first.ended_process);
}

/// The same rule's counterexample on a real failing log, with the signatures that name its
/// lines (pytorch's) switched off: torch elastic's agent logs a worker's `failed (exitcode:
/// 1)` at ERROR, then `Worker group FAILED ... will restart` and `Stopping worker group`: a
/// failure report and a wind-down, not going on, so run 1 still failed.
#[test]
fn a_logged_child_exit_followed_by_failure_reports_still_fails_a_real_log() {
    let report = corpus_report_without("nnunet-torchelastic-restart-after-exitcode-1.log", |id| {
        id.starts_with("pytorch.")
    });
    assert!(report.failed, "{:#?}", report.findings);
    let exit = report
        .findings
        .iter()
        .find(|f| f.line == 1)
        .expect("the exit line is a finding");
    assert!(exit.ended_process && !exit.survivable, "{exit:#?}");
}

/// An uncaught C++ exception in a real log, with the signatures of its program (LMDeploy)
/// switched off: TurboMind's `what():  [TM][ERROR] CUDA runtime error: out of memory` line,
/// not the `terminate called after throwing an instance of 'std::runtime_error'` before it.
#[test]
fn the_message_of_an_uncaught_cxx_exception_stands_in_on_a_real_log() {
    let report = corpus_report_without("lmdeploy-turbomind-oom-terminate.log", |id| {
        id.starts_with("lmdeploy.")
    });
    assert!(report.failed);
    let first = &report.findings[0];
    assert!(
        first
            .text
            .contains("[TM][ERROR] CUDA runtime error: out of memory"),
        "{first:#?}"
    );
    assert_eq!(first.signature, None);
}

/// Tiers: a fatal unclassified finding outranks a cause whose signature says survivable but
/// that ended its process; a cause whose signature is fatal outranks both.
/// An uncaught exception no signature knows, as the interpreter prints it.
const UNCAUGHT_ZERO_DIVISION: &str = "Traceback (most recent call last):\n  File \"serve.py\", line 9, in <module>\n    main()\nZeroDivisionError: division by zero\n";

#[test]
fn a_survivable_cause_that_ended_its_process_ranks_below_a_fatal_unknown() {
    // A request handler's error that a terminal marker of its own process follows.
    let survivable_then_aborted = "(APIServer pid=7) ERROR 01-01 10:00:00 [serving.py:1] ValueError: This model's maximum context length is 4096 tokens. However, you requested 5000 tokens (5000 in the messages, 0 in the completion). Please reduce the length of the messages or completion.\n(APIServer pid=7) Aborted (core dumped)\n";
    let unknown = UNCAUGHT_ZERO_DIVISION;
    let r = report(&format!("{survivable_then_aborted}{unknown}"));
    assert!(r.failed);
    let first = &r.findings[0];
    assert!(
        first.text.starts_with("ZeroDivisionError"),
        "{:#?}",
        r.findings
    );
    let ended = r
        .findings
        .iter()
        .find(|f| f.signature.as_deref() == Some("vllm.request.context-length-exceeded"))
        .expect("the survivable cause is listed");
    assert!(!ended.survivable && ended.ended_process, "{ended:#?}");
    assert_eq!(
        r.findings[1].signature, ended.signature,
        "{:#?}",
        r.findings
    );
    let oom = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.19 GiB of which 1.01 GiB is free.\n";
    let r = report(&format!("{survivable_then_aborted}{unknown}{oom}"));
    assert_eq!(r.findings[0].signature.as_deref(), Some("pytorch.cuda.oom"));
}

#[test]
fn a_survivable_cause_is_fatal_only_when_a_terminal_marker_of_its_process_follows() {
    // Issue 35, item 3: a request's traceback that its process printed nothing after is not
    // the run's failure by itself (the signature says survivable); the unknown crash is.
    let survivable = "Traceback (most recent call last):\n  File \"serving.py\", line 180, in create_chat_completion\n    self._validate_input(request, input_ids)\nValueError: This model's maximum context length is 4096 tokens. However, you requested 5000 tokens (5000 in the messages, 0 in the completion). Please reduce the length of the messages or completion.\n";
    let unknown = UNCAUGHT_ZERO_DIVISION;
    let r = report(&format!("{survivable}{unknown}"));
    assert!(r.failed);
    assert!(
        r.findings[0].text.starts_with("ZeroDivisionError"),
        "{:#?}",
        r.findings
    );
    let request = r
        .findings
        .iter()
        .find(|f| f.signature.as_deref() == Some("vllm.request.context-length-exceeded"))
        .expect("the survivable cause is listed");
    assert!(request.survivable, "{request:#?}");
}
