use super::*;
use crate::report::{render_human, MAX_PROCESSES_LISTED};
use crate::scan::{Input, ScanOptions};
use crate::EmbeddedDatabase;
use line::process_key;
use std::path::Path;

fn report(log: &str) -> Report {
    let input = Input::from_bytes(Path::new("t.log"), log.as_bytes().to_vec());
    analyze_input(
        Database::embedded(),
        input,
        &ScanOptions::default(),
        AnalyzeOptions {
            all: true,
            ..AnalyzeOptions::default()
        },
    )
}

fn first(log: &str) -> Finding {
    report(log).findings.into_iter().next().expect("a finding")
}

const OOM: &str = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 3 has a total capacity of 79.19 GiB of which 1.01 GiB is free.";
const WRAPPER: &str = "RuntimeError: Engine core initialization failed. See root cause above. Failed core proc(s): {}";
const VIT: &str = "INFO 02-20 21:35:48 [cuda.py:456] Using backend AttentionBackendEnum.FLASH_ATTN for vit attention";

#[test]
fn cause_outranks_an_earlier_symptom_and_noise() {
    let log = format!("(A pid=1) {VIT}\n{WRAPPER}\n(B pid=2) {OOM}\n");
    let r = report(&log);
    let roles: Vec<_> = r.findings.iter().map(|f| f.role).collect();
    assert_eq!(
        roles,
        [FindingRole::Cause, FindingRole::Symptom, FindingRole::Noise]
    );
    assert_eq!(r.findings[0].line, 3);
}

#[test]
fn noise_never_becomes_a_cause() {
    let r = report(&format!("{VIT}\n{VIT}\n"));
    assert!(r.findings.iter().all(|f| f.role == FindingRole::Noise));
    assert!(!r.diagnosed());
}

#[test]
fn innermost_exception_of_a_chain_comes_first() {
    // The wrapper is known (a cause signature too); the inner exception is printed first.
    let log = format!(
            "Traceback (most recent call last):\n  File \"a.py\", line 1, in f\n{OOM}\n\nThe above exception was the direct cause of the following exception:\n\nTraceback (most recent call last):\n  File \"b.py\", line 2, in g\nRuntimeError: Failed to load model - not enough GPU memory. Try lowering --gpu-memory-utilization to free memory for weights, increasing --tensor-parallel-size, or using --quantization. See https://docs.vllm.ai/en/latest/configuration/conserving_memory/ for more tips. (original error: CUDA out of memory)\n"
        );
    let r = report(&log);
    assert_eq!(r.findings[0].line, 3, "{:#?}", r.findings);
    assert!(r.findings[0].why.contains("innermost"));
    let tb = r.findings[0].traceback.as_ref().unwrap();
    assert_eq!(tb[0], "File \"a.py\", line 1, in f");
}

#[test]
fn earliest_failure_by_timestamp_across_processes() {
    // B's failure is printed later but happened first.
    let log = "(A pid=1) ERROR 02-20 21:35:50 [x.py:1] torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.19 GiB of which 1.01 GiB is free.\n\
                   (B pid=2) ERROR 02-20 21:35:40 [x.py:1] ModuleNotFoundError: No module named 'flash_attn'\n";
    let f = first(log);
    assert_eq!(f.line, 2);
    assert!(f.why.contains("timestamp"));
}

#[test]
fn earliest_failure_by_position_without_timestamps() {
    let log = format!("ModuleNotFoundError: No module named 'flash_attn'\n{OOM}\n");
    assert_eq!(first(&log).line, 1);
}

#[test]
fn a_warning_can_be_the_root_cause() {
    let log = format!(
            "/usr/lib/python3/site-packages/torch/cuda/__init__.py:128: UserWarning: CUDA initialization: Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions before calling NumCudaDevices() that might have already set an error? Error 804: forward compatibility was attempted on non supported HW (Triggered internally at ../c10/cuda/CUDAFunctions.cpp:108.)\n\
             Traceback (most recent call last):\n  File \"x.py\", line 1, in f\nRuntimeError: Found no NVIDIA driver on your system.\n{WRAPPER}\n"
        );
    let f = first(&log);
    assert_eq!(f.line, 1, "{f:#?}");
    assert_eq!(f.category, "driver");
}

#[test]
fn the_same_message_from_many_ranks_folds_into_one() {
    let log: String = (0..8)
        .map(|r| format!("[rank{r}]: {}\n", OOM.replace("GPU 3", &format!("GPU {r}"))))
        .collect();
    let r = report(&log);
    assert_eq!(r.findings.len(), 1);
    let f = &r.findings[0];
    assert_eq!((f.count, f.line, f.last_line), (8, 1, 8));
    assert_eq!(f.processes.len(), 8);
    assert_eq!(f.captures.get("gpu").map(String::as_str), Some("0"));
}

#[test]
fn interleaved_tracebacks_are_rebuilt_per_process() {
    let log = "(A pid=1) Traceback (most recent call last):\n\
                   (B pid=2) Traceback (most recent call last):\n\
                   (A pid=1)   File \"a.py\", line 1, in a_fn\n\
                   (B pid=2)   File \"b.py\", line 2, in b_fn\n\
                   (B pid=2) KeyError: 'weight'\n\
                   (A pid=1) ValueError: something nobody knows\n";
    let r = report(log);
    assert_eq!(r.findings.len(), 2);
    let f = &r.findings[0];
    assert_eq!(f.role, FindingRole::Unclassified);
    assert_eq!(f.line, 5);
    assert_eq!(
        f.traceback.as_ref().unwrap()[0],
        "File \"b.py\", line 2, in b_fn"
    );
    let g = &r.findings[1];
    assert_eq!(
        g.traceback.as_ref().unwrap()[0],
        "File \"a.py\", line 1, in a_fn"
    );
    assert!(g.title.contains("ValueError"));
}

#[test]
fn unknown_failures_fall_back_to_unclassified() {
    // An ERROR line alone does not fail a log...
    let r = report("INFO start\nERROR 02-20 21:35:48 [x.py:1] the flux capacitor broke\n");
    assert!(!r.failed && !r.diagnosed(), "{:#?}", r.findings);
    assert_eq!(r.counts.unmatched_error_lines, 1);
    // ...but in a failed log it stands in for the unknown cause, before the terminal line.
    let r = report(
            "INFO start\nERROR 02-20 21:35:48 [x.py:1] the flux capacitor broke\nvllm-1 exited with code 1\n",
        );
    let f = &r.findings[0];
    assert_eq!(
        (f.role, f.line, f.survivable),
        (FindingRole::Unclassified, 2, false)
    );
    assert!(r.failed);
    let f = first(&format!("{WRAPPER}\n"));
    assert_eq!(f.role, FindingRole::Unclassified);
    assert!(f.title.contains("shows its symptom"), "{}", f.title);
    assert!(report("all fine\n").findings.is_empty());
}

/// A symptom standing in for an unknown cause keeps its signature, and an error-severity
/// symptom that does not let its process go on stands in like a fatal one (real lines:
/// nnU-Net's torch elastic agent, pip building flash-attention for ROCm).
#[test]
fn only_symptoms_stand_in_with_their_signature() {
    for (log, id, line) in [
            (
                "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: 1) local_rank: 2 (pid: 68788) of binary: /usr/bin/python\nERROR:torch.distributed.elastic.agent.server.local_elastic_agent:[default] Worker group failed\n",
                "pytorch.distributed.elastic-worker-failed",
                1,
            ),
            (
                "  note: This error originates from a subprocess, and is likely not a problem with pip.\n  ERROR: Failed building wheel for flash_attn\nFailed to build flash_attn\n",
                "pip.build.wheel-build-failed",
                2,
            ),
            (
                &format!("{WRAPPER}\n"),
                "vllm.engine.core-init-failed",
                1,
            ),
        ] {
            let r = report(log);
            let f = &r.findings[0];
            assert_eq!(
                (f.role, f.signature.as_deref(), f.line, f.survivable),
                (FindingRole::Unclassified, Some(id), line, false),
                "{log}"
            );
            assert!(r.failed && f.remediation.is_some());
            // The symptom is not listed twice.
            assert_eq!(r.findings.iter().filter(|g| g.line == line).count(), 1);
        }
    // A known cause in the run leaves the symptom a symptom.
    let r = report(&format!("{OOM}\n{WRAPPER}\n"));
    assert_eq!(r.findings[0].role, FindingRole::Cause);
    assert_eq!(r.findings[1].role, FindingRole::Symptom);
}

/// Every terminal marker on a real line, and a near miss from a healthy log.
#[test]
fn terminal_markers_on_real_lines_and_healthy_near_misses() {
    let db = Database::embedded();
    let terminal = |l: &str| db.match_line(l.as_bytes()).has(Marker::Terminal);
    for line in [
            "Segmentation fault (core dumped)",
            "SIGSEGV: segmentation violation",
            "[host-a:00172] Signal: Aborted (6)",
            "Aborted (core dumped)",
            "Bus error (core dumped)",
            "/bin/bash: line 1:  2817 Killed                  python3 -m vllm.entrypoints.openai.api_server --model m",
            "Loading safetensors checkpoint shards:  60% Completed | 3/5 [00:10<00:07,  3.50s/it]Killed",
            "Killed",
            "Fatal Python error: Segmentation fault",
            "vllm-1 exited with code 137",
            "subprocess.CalledProcessError: Command '['/usr/bin/gcc', 'x.c']' returned non-zero exit status 1.",
            "  exitcode  : -9 (pid: 2817)",
            "panic: runtime error: invalid memory address or nil pointer dereference",
            "fatal error: all goroutines are asleep - deadlock!",
            "terminate called after throwing an instance of 'c10::Error'",
            // libc++abi's terminate handler on macOS (mlc-llm #2994)
            "libc++abi: terminating due to uncaught exception of type tvm::runtime::InternalError: [12:42:06] /Users/user/mlc-llm/cpp/serve/model.cc:41: InternalError: Check failed: (config_istream) is false:",
            "thread 'main' panicked at 'called `Result::unwrap()` on an `Err` value', src/main.rs:10:5",
            "Exception in thread \"main\" java.lang.OutOfMemoryError: Java heap space",
            "csrc/flash_attn/src/flash_fwd_kernel.h:5:10: fatal error: cute/tensor.hpp: No such file or directory",
            "/tmp/tmpx/kernel.cu(12): error: identifier \"__hmax\" is undefined",
            "ptxas fatal   : Value 'sm_90a' is not defined for option 'gpu-name'",
            "nvcc fatal   : Unsupported gpu architecture 'compute_120'",
            "collect2: error: ld returned 1 exit status",
            "  error: subprocess-exited-with-error",
            "  Failed building wheel for flash-attn",
            // glibc's psiginfo() via backward-cpp (libtorch C++ program, GS-SDF)
            "Aborted (Signal sent by tkill() 1733323 1000)",
            // abseil's failure signal handler in a Ray worker (vLLM #14652)
            "(RayWorkerWrapper pid=239, ip=10.0.0.1) *** SIGSEGV received at time=1741685673 on cpu 53 ***",
        ] {
            assert!(terminal(line), "{line}");
        }
    for line in [
            "INFO 02-20 21:35:48 [metrics.py:1] error_rate=0.0, p99=1.2s",
            "non-default args: {'disable_log_stats': True} --disable-log-errors",
            "Ran 12 tests: 0 errors, 3 warnings",
            "Killed 0 processes left over from the previous run",
            "pytest: exit status 0",
            "vllm-1 exited with code 0",
            "  exitcode  : 0 (pid: 2817)",
            "Don't panic: retrying the download",
            "Building wheel for flash-attn (setup.py) ... done",
            "INFO:     Application startup complete.",
            "NCCL INFO NET/IB : No device found. NCCL INFO NET/Socket : Using [0]eth0",
            // a finished vLLM benchmark stopped with SIGTERM: abseil reports it too
            "0: *** SIGTERM received at time=1759954468 on cpu 5 ***",
            "host-a:14057:14823 [6] NCCL INFO comm 0xaf19000 rank 14 nranks 16 cudaDev 6 busId db000 - Abort COMPLETE",
            // the C++ runtime library named in a healthy macOS run, and a clean shutdown
            "dyld: loaded: /usr/lib/libc++abi.dylib",
            "INFO:     Received SIGTERM, terminating workers",
        ] {
            assert!(!terminal(line), "{line}");
        }
}

#[test]
fn a_traceback_ends_at_its_next_unindented_line_whatever_it_says() {
    // A class not ending in Error, and a bare message with no class at all.
    let r = report(
            "Traceback (most recent call last):\n  File \"k.py\", line 3, in run\n    kernel[grid](x)\n    ^^^^^^^^^^^^^^\nmylib.errors.ResourceExhausted: out of SRAM: Required: 98304, Hardware limit: 65536\n",
        );
    let f = &r.findings[0];
    assert_eq!(
        (f.role, f.line, f.survivable),
        (FindingRole::Unclassified, 5, false)
    );
    assert!(f.title.contains("ResourceExhausted"), "{}", f.title);
    assert!(f.ended_process);
    let r = report(
            "Traceback (most recent call last):\n  File \"t.py\", line 9, in <module>\n    tok = Tokenizer.from_file(p)\nunexpected end of JSON input at line 1 column 2\n",
        );
    assert_eq!(r.findings[0].line, 4, "{:#?}", r.findings);
    assert!(r.failed);
}

const CTX: &str = "ValueError: This model's maximum context length is 4096 tokens. However, you requested 5000 tokens (4000 in the messages, 1000 in the completion). Please reduce the length of the messages or completion.";

fn request_error(ts: &str) -> String {
    format!(
            "ERROR {ts} [serving_chat.py:200] Error in preprocessing prompt inputs\nTraceback (most recent call last):\n  File \"serving_chat.py\", line 180, in create_chat_completion\n    self._validate_input(request)\n{CTX}\nINFO:     127.0.0.1:5000 - \"POST /v1/chat/completions HTTP/1.1\" 400 Bad Request\nINFO {ts} [metrics.py:1] Avg prompt throughput: 1.0 tokens/s\n"
        )
}

#[test]
fn a_per_request_error_the_engine_went_on_after_never_outranks_the_crash() {
    let log = format!(
        "{}{}Traceback (most recent call last):\n  File \"w.py\", line 1, in f\n    g()\n{OOM}\n",
        request_error("02-20 21:35:48"),
        request_error("02-20 21:36:00"),
    );
    let r = report(&log);
    assert!(
        r.findings[0].text.contains("CUDA out of memory"),
        "{:#?}",
        r.findings
    );
    assert!(r.failed);
    // The per-request errors are listed as survived, not as failures.
    let survived: Vec<_> = r.findings.iter().filter(|f| f.is_survived()).collect();
    assert!(!survived.is_empty(), "{:#?}", r.findings);
    assert!(survived
        .iter()
        .all(|f| f.text.contains("maximum context length")));
    // Alone, they leave the log not failed (exit status 1).
    let r = report(&request_error("02-20 21:35:48"));
    assert!(!r.failed, "{:#?}", r.findings);
    assert!(r.findings.iter().any(|f| f.is_survived()));
}

#[test]
fn an_unknown_exception_whose_process_went_on_is_survivable() {
    let went_on = "Traceback (most recent call last):\n  File \"a.py\", line 1, in f\n    g()\nKeyError: 'x'\nINFO 02-20 21:35:49 [engine.py:1] Added request 7\n";
    let r = report(went_on);
    assert!(!r.failed, "{:#?}", r.findings);
    assert!(r.findings[0].survivable && !r.findings[0].ended_process);
    // The same exception followed by a kill, or by nothing, ended its process.
    let killed = format!("{went_on}Killed\n");
    let r = report(&killed);
    assert!(r.failed);
    let r = report("Traceback (most recent call last):\n  File \"a.py\", line 1, in f\n    g()\nKeyError: 'x'\n");
    assert!(r.failed && r.findings[0].ended_process);
    // A shutdown message is not going on.
    let r = report("Traceback (most recent call last):\n  File \"a.py\", line 1, in f\n    g()\nKeyError: 'x'\nINFO:     Shutting down\n");
    assert!(r.failed);
}

/// A terminal line a logger records (a child command's non-zero exit, logged at ERROR) fails
/// the log only when its process did not go on: lines at INFO after it (read by the prefix
/// rules or by a level word near the start) make it survivable. The same line with nothing
/// after it, or before a traceback, and a terminal line no logger wrote (`Killed`), still end
/// their run.
#[test]
fn a_logged_child_exit_is_fatal_unless_its_process_went_on() {
    let logged = ">> ext.loader: ERROR - ext failed to load or compile (Command 'make clean && make' returned non-zero exit status 2.).\n";
    let went_on = format!(
        "{logged}>> ext.loader: INFO - Refer to the install docs for instructions.\n[2023-08-04 13:02:34,181]::[App]::INFO --> Ext not loaded (nonfatal)\n"
    );
    let r = report(&went_on);
    assert!(!r.failed, "{:#?}", r.findings);
    assert!(r.findings[0].survivable && !r.findings[0].ended_process);
    // The Python logging module's `ERROR:name:` form, then the logger's own INFO line.
    let r = report("ERROR:setup:build step failed: Command 'cmake --build .' returned non-zero exit status 1.\nINFO:setup:falling back to the pure-Python implementation\n");
    assert!(!r.failed, "{:#?}", r.findings);
    // Nothing after it: the process said nothing more.
    let r = report(logged);
    assert!(r.failed && r.findings[0].ended_process, "{:#?}", r.findings);
    // A traceback after it is not going on.
    let r = report(&format!(
        "{logged}Traceback (most recent call last):\n  File \"a.py\", line 1, in f\n"
    ));
    assert!(r.failed, "{:#?}", r.findings);
    // A shell's `Killed` records nothing: INFO lines after it do not make it survivable.
    let r = report("Killed\nINFO 02-20 21:35:49 [engine.py:1] Added request 7\n");
    assert!(r.failed, "{:#?}", r.findings);
    // What comes next reports the failure (torch elastic's agent, before it restarts the
    // group) or winds down: not going on.
    let r = report("ERROR:agent:failed (exitcode: 1) local_rank: 2 (pid: 68788) of binary: /usr/bin/python\nINFO:agent:[default] Worker group FAILED. 3/3 attempts left; will restart worker group\nINFO:agent:[default] Stopping worker group\n");
    assert!(r.failed && r.findings[0].ended_process, "{:#?}", r.findings);
    // Logged at CRITICAL: the logger says its own end.
    let r = report(
        "CRITICAL:setup:Command 'make' returned non-zero exit status 2.\nINFO:setup:cleaning up\n",
    );
    assert!(r.failed, "{:#?}", r.findings);
}

/// An uncaught C++ exception: the terminate line names its type, the `what():` line after it
/// its message, which stands for the failure when no signature knows it (as a Python
/// exception line does); a `what():` line anywhere else is not a finding.
#[test]
fn the_message_of_an_uncaught_cxx_exception_comes_first() {
    let log = "terminate called after throwing an instance of 'std::out_of_range'\n  what():  vector::_M_range_check: __n (which is 5) >= this->size() (which is 3)\nAborted (core dumped)\n";
    let r = report(log);
    assert!(r.failed);
    let f = &r.findings[0];
    assert_eq!(
        (f.role, f.line, f.signature.as_deref()),
        (FindingRole::Unclassified, 2, None),
        "{:#?}",
        r.findings
    );
    assert!(f.ended_process && f.why.contains("C++ terminate"), "{f:#?}");
    // Another process's line between them: the message is not the terminate's.
    let r = report("[rank0]: terminate called after throwing an instance of 'std::out_of_range'\n[rank1]: INFO step 7\n  what():  vector::_M_range_check\n");
    assert!(r.findings.iter().all(|f| f.line != 3), "{:#?}", r.findings);
    // A `what():` line with no terminate before it.
    let r = report("INFO 02-20 21:35:49 [x.py:1] step 7\n  what():  vector::_M_range_check\n");
    assert!(!r.failed && r.findings.is_empty(), "{:#?}", r.findings);
}

#[test]
fn runs_from_banners_and_timestamps_stepping_back() {
    let banner = "INFO 02-20 21:00:00 [api_server.py:1] vLLM API server version 0.9.1\n";
    let crash = format!("ERROR 02-20 21:10:00 [core.py:1] {OOM}\n");
    let healthy =
        "INFO 02-20 22:00:00 [api_server.py:1] Starting vLLM API server 0 on http://0.0.0.0:8000\n";
    // Failed run 1, healthy run 2: the failure stays, in run 1; the log still failed.
    let log = format!("{banner}{crash}{banner}{healthy}");
    let r = report(&log);
    assert_eq!(r.runs, 2);
    assert!(r.failed);
    assert_eq!((r.findings[0].run, r.findings[0].line), (1, 2));
    let text = render_human(&r, false);
    assert!(
        text.contains("run 1 of 2 failed; the last run shows no failure"),
        "{text}"
    );
    // Two failed runs: the last run's failure is the root cause.
    let crash2 =
        "ERROR 02-20 22:10:00 [core.py:1] ModuleNotFoundError: No module named 'flash_attn'\n";
    let r = report(&format!("{banner}{crash}{banner}{crash2}"));
    assert_eq!((r.findings[0].run, r.findings[0].line), (2, 4));
    assert_eq!(r.findings[1].run, 1);
    // A banner with nothing before it, or one right after another kind, starts no run.
    assert_eq!(report(&format!("{banner}{healthy}{crash}")).runs, 1);
    // A process's clock stepping back over 5 minutes starts a run; interleaved ranks
    // stepping back by milliseconds, or the New Year wrap, do not.
    let r = report(
        "[rank0]: ERROR 02-20 21:10:00 [x.py:1] a\n[rank0]: ERROR 02-20 21:00:00 [x.py:1] b\n",
    );
    assert_eq!(r.runs, 2);
    let r = report("[rank0]: ERROR 02-20 21:10:00.500 [x.py:1] a\n[rank1]: ERROR 02-20 21:10:00.100 [x.py:1] b\n[rank0]: ERROR 02-20 21:10:00.200 [x.py:1] c\n");
    assert_eq!(r.runs, 1);
    let r = report("ERROR 12-31 23:59:59 [x.py:1] a\nERROR 01-01 00:00:01 [x.py:1] b\n");
    assert_eq!(r.runs, 1);
    // torch elastic restarting its worker group (restart_count=1) starts a run, even after
    // its launcher's banner; its first rendezvous (restart_count=0) does not.
    let rendezvous = |n: u32| {
        format!("INFO:torch.distributed.elastic.agent.server.api:[default] Rendezvous complete for workers. Result:\n  restart_count={n}\n  master_addr=127.0.0.1\n\nINFO:torch.distributed.elastic.agent.server.api:[default] Starting worker group\n")
    };
    let failed = "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: 1) local_rank: 2 (pid: 68788) of binary: /usr/bin/python\n";
    let launch =
        "INFO:torch.distributed.launcher.api:Starting elastic_operator with launch configs:\n";
    let r = report(&format!(
        "{launch}{}{failed}{}",
        rendezvous(0),
        rendezvous(1)
    ));
    assert_eq!(r.runs, 2);
    assert_eq!((r.findings[0].run, r.findings[0].line), (1, 7));
    assert_eq!(report(&format!("{launch}{}", rendezvous(0))).runs, 1);
}

#[test]
fn findings_carry_timestamps_runs_and_process_counts() {
    let r = report(&format!("(A pid=1) ERROR 02-20 21:35:50 [x.py:1] {OOM}\n"));
    let f = &r.findings[0];
    assert_eq!(f.timestamp.as_deref(), Some("02-20 21:35:50"));
    assert_eq!((f.run, f.process_count, r.runs), (1, 1, 1));
}

#[test]
fn a_hundred_thousand_processes_fold_in_linear_time() {
    // Counting work: the folding cost per line must not grow with the processes seen.
    let mut log = String::with_capacity(100_000 * 160);
    for pid in 0..100_000 {
        log.push_str(&format!("(Worker pid={pid}) {VIT}\n"));
    }
    let start = std::time::Instant::now();
    let r = report(&log);
    let f = &r.findings[0];
    assert_eq!(f.processes.len(), MAX_PROCESSES_LISTED);
    let n = f.process_count as f64;
    assert!((n - 100_000.0).abs() < 5_000.0, "{n}");
    assert!((r.counts.noise_processes as f64 - 100_000.0).abs() < 5_000.0);
    // The fixed cost of this scan in a debug build is about a second; quadratic folding
    // took minutes. A generous deadline, not a tight timing.
    assert!(start.elapsed() < std::time::Duration::from_secs(60));
}

#[test]
fn max_findings_evicts_the_lowest_ranked_never_a_failure() {
    // 40 distinct unknown exceptions the process went on after (survivable), then 5
    // distinct fatal causes; a cap of 10 keeps the 5 failures and the 5 best others.
    let mut log = String::new();
    for i in 0..40 {
        let name = "k".repeat(i + 1);
        log.push_str(&format!(
                "Traceback (most recent call last):\n  File \"a.py\", line 1, in f\n    g()\nKeyError: '{name}'\nINFO 02-20 21:35:49 [engine.py:1] Added request {i}\n"
            ));
    }
    for i in 0..5 {
        let name = "m".repeat(i + 1);
        log.push_str(&format!("ModuleNotFoundError: No module named '{name}'\n"));
    }
    let input = Input::from_bytes(Path::new("t.log"), log.into_bytes());
    let r = analyze_input(
        Database::embedded(),
        input,
        &ScanOptions::default(),
        AnalyzeOptions {
            all: false,
            max_findings: 10,
            ..AnalyzeOptions::default()
        },
    );
    assert_eq!(r.findings.len(), 10, "{:#?}", r.findings);
    assert_eq!(r.findings_omitted, 35);
    assert_eq!(r.findings.iter().filter(|f| f.is_failure()).count(), 5);
    assert!(
        r.findings[0].text.contains("named 'm'"),
        "{}",
        r.findings[0].text
    );
    // The survivable ones kept are the earliest.
    assert!(
        r.findings[5].text.contains("KeyError: 'k'"),
        "{}",
        r.findings[5].text
    );
    assert!(r.failed);
}

#[test]
fn an_input_cut_inside_a_traceback_ended_early() {
    let r = report("ERROR 02-20 21:35:48 [x.py:1] something odd\nTraceback (most recent call last):\n  File \"a.py\", line 1, in f\n    g()\n");
    assert!(r.ended_early);
    assert!(r
        .findings
        .iter()
        .filter(|f| f.signature.is_none())
        .all(|f| f.tentative));
    assert!(!r.findings.is_empty());
    assert!(!r.failed, "a cut traceback alone is a guess, not a failure");
    assert!(!report(&format!("{OOM}\n")).ended_early);
}

/// A cut traceback from the program's entry point that no ERROR record introduced is an
/// exception nothing caught (EasyR1's driver, real lines); the same stack printed by a
/// logger right after its ERROR line is a caught one (TGI's shard serving on, real lines).
#[test]
fn a_cut_traceback_from_the_entry_point_is_fatal_unless_a_logger_printed_it() {
    let tb = "Traceback (most recent call last):\n  File \"/usr/lib/python3.10/runpy.py\", line 196, in _run_module_as_main\n    return _run_code(code, main_globals, None,\n  File \"/usr/lib/python3.10/runpy.py\", line 86, in _run_code\n    exec(code, run_globals)\n";
    let r = report(&format!("Compute log probs:  76%\n{tb}"));
    assert!(r.failed && r.ended_early);
    let f = &r.findings[0];
    assert_eq!(
        (f.role, f.survivable, f.tentative),
        (FindingRole::Unclassified, false, true)
    );
    let logged = "2024-08-01T17:14:52.644814Z ERROR text_generation_launcher: Method Prefill encountered an error.\nTraceback (most recent call last):\n  File \"/opt/conda/bin/text-generation-server\", line 8, in <module>\n    sys.exit(app())\n";
    let r = report(logged);
    assert!(!r.failed, "{:#?}", r.findings);
    // Not from the entry point: a guess as before.
    assert!(!report("Traceback (most recent call last):\n  File \"/app/server.py\", line 408, in run_asgi\n    result = await app(\n").failed);
}

/// A served request's exception as vLLM's API server logs it (every line under its ERROR
/// prefix, `code` the raising line), then the request's 400 access line: the server went on.
fn served_request_error(code: &str, exception: &str) -> String {
    let p = "(APIServer pid=1) ERROR 08-25 12:24:19 [serving_chat.py:200]";
    format!(
        "{p} Error in preprocessing prompt inputs\n{p} Traceback (most recent call last):\n{p}   File \"serving_chat.py\", line 180, in create_chat_completion\n{p}     {code}\n{p} {exception}\n(APIServer pid=1) INFO:     127.0.0.1:5000 - \"POST /v1/chat/completions HTTP/1.1\" 400 Bad Request\n"
    )
}

/// In a failed run with no known cause, a survivable cause logged at ERROR whose process
/// was not seen going on stands in (keeping its signature); one whose process went on
/// does not.
#[test]
fn a_survivable_error_line_whose_process_stopped_stands_in() {
    let kill = "(raylet) [2025-04-02 15:02:00,117 E 135782 135782] (raylet) node_manager.cc:3069: 1 Workers (tasks / actors) killed due to memory pressure (OOM), 0 Workers crashed due to other reasons at node";
    let died = "Traceback (most recent call last):\n  File \"/app/main.py\", line 3, in <module>\n    main()\n";
    let r = report(&format!("{kill}\n{died}"));
    let f = &r.findings[0];
    assert_eq!(
        (f.role, f.signature.as_deref(), f.line, f.survivable),
        (
            FindingRole::Unclassified,
            Some("ray.raylet.workers-killed-oom"),
            1,
            false
        )
    );
    // A per-request error logged at ERROR whose server went on (its 400 access line)
    // does not stand in for the crash after it.
    let served = served_request_error("self._validate_input(request)", CTX) + "Killed\n";
    let r = report(&served);
    let f = &r.findings[0];
    assert_eq!(
        (f.signature.as_deref(), f.text.as_str()),
        (Some("system.signal.killed"), "Killed"),
        "{:#?}",
        r.findings
    );
    assert!(r
        .findings
        .iter()
        .any(|g| g.text.contains("maximum context length") && g.is_survived()));
    // Alone (no failure after it) it stays survivable: the log is not failed.
    assert!(!report(&format!("{kill}\n")).failed);
}

/// A fatal symptom right after an unknown exception (TGI's `Error: ShardCannotStart` after
/// a shard's traceback) says the exception's process ended: the next shard's WARNING lines
/// after it do not make the exception survivable, and it comes before the wrapper.
/// Counterexample (a served request, as in the healthy corpus log
/// `vllm-survivable-preprocessing-error-after-health`): an exception whose process went on
/// before a fatal symptom stays survived, and the symptom stands in.
#[test]
fn a_fatal_symptom_after_an_exception_ends_its_process() {
    let shards = "  File \"/opt/conda/lib/python3.9/site-packages/text_generation_server/utils/weights.py\", line 84, in get_sharded\n    assert (\nAssertionError: The choosen size 50432 is not compatible with sharding on 3 shards\n rank=0\nError: ShardCannotStart\n2023-06-07T16:07:50.177973Z ERROR text_generation_launcher: Shard 1 failed to start:     \nWARNING: Compute capability < 7.5 detected! Only slow 8-bit matmul is supported for your \n";
    let r = report(shards);
    let f = &r.findings[0];
    assert_eq!(
        (f.role, f.line, f.survivable),
        (FindingRole::Unclassified, 3, false),
        "{:#?}",
        r.findings
    );
    assert!(f.text.contains("not compatible with sharding"));

    let served = served_request_error("messages = request['messages']", "KeyError: 'messages'");
    assert!(!report(&served).failed);
    let dead = format!(
        "{served}(APIServer pid=1) vllm.v1.engine.exceptions.EngineDeadError: EngineCore encountered an issue. See stack trace (above) for the root cause.\n"
    );
    let r = report(&dead);
    assert_eq!(
        r.findings[0].signature.as_deref(),
        Some("vllm.engine.dead"),
        "{:#?}",
        r.findings
    );
    assert!(r
        .findings
        .iter()
        .any(|g| g.text.contains("KeyError: 'messages'") && g.is_survived()));
}

/// NCCL's generic `unhandled system error` is a wrapper: the NCCL WARN line of the failing call
/// names the cause even when it is printed after the exception (modelscope/ms-swift#6107); alone,
/// the wrapper still stands in for the cause and keeps its signature.
#[test]
fn the_nccl_warn_line_outranks_the_system_error_wrapper_printed_before_it() {
    let wrapper = "[rank10]: RuntimeError: NCCL Error 2: unhandled system error (run with NCCL_DEBUG=INFO for details)";
    let warn = "[2025-10-13 10:12:54] host-a:1458548:1480527 [0] misc/ibvwrap.cc:182 NCCL WARN Call to ibv_reg_mr_iova2 failed with error Invalid argument";
    let r = report(&format!("{wrapper}\n\n{warn}\n"));
    assert_eq!(
        (r.findings[0].signature.as_deref(), r.findings[0].line),
        (Some("nccl.ib.verbs-call-failed"), 3),
        "{:#?}",
        r.findings
    );
    let r = report(&format!("{wrapper}\n"));
    assert!(r.failed);
    assert_eq!(
        r.findings[0].signature.as_deref(),
        Some("nccl.error.unhandled-system")
    );
}

#[test]
fn long_tracebacks_are_trimmed_with_a_count() {
    let mut log = String::from("Traceback (most recent call last):\n");
    for i in 0..20 {
        log.push_str(&format!(
            "  File \"f{i}.py\", line {i}, in g{i}\n    code()\n"
        ));
    }
    log.push_str(OOM);
    log.push('\n');
    let tb = first(&log).traceback.unwrap();
    assert_eq!(tb.len(), 1 + 1 + 4 + 1);
    assert_eq!(tb[1], "... 15 frames omitted ...");
    assert!(tb[5].contains("f19.py"));
}

#[test]
fn priority_decides_a_line_and_all_shows_the_rest() {
    let r = report("RuntimeError: CUDA error: an illegal memory access was encountered\n");
    let m = &r.matches.as_ref().unwrap()[0];
    assert_eq!(m.finding, Some(1));
    assert_eq!(
        m.signature.as_deref(),
        Some("pytorch.cuda.illegal-memory-access")
    );
    assert_eq!(m.outranked, ["pytorch.cuda.cuda-error-generic"]);
    assert_eq!(r.counts.matched_lines, 1);
    assert_eq!(r.findings.len(), 1);
}

const GLOO_PEER_CLOSED: &str = "[rank0]: RuntimeError: [/__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:561] Connection closed by peer [127.0.0.1]:23211. This is typically caused by a remote worker crashing. Check the logs of the remote worker before reporting an error. GLHF!";
const AGENT_FAILED: &str = "E1204 20:25:34.063000 13624 torch/distributed/elastic/multiprocessing/api.py:1002] failed (exitcode: -11) local_rank: 1 (pid: 13635) of binary: /usr/bin/python3";

#[test]
fn a_peer_symptom_yields_to_the_exit_line_of_the_rank_that_died() {
    // Rank 0's gloo error (a peer's death) is printed before the agent's line for rank 1.
    let tb = "[rank0]: Traceback (most recent call last):\n[rank0]:   File \"train.py\", line 57, in <module>\n[rank0]:     dist.all_reduce(t)\n";
    for peer in [
        GLOO_PEER_CLOSED,
        "[rank0]: RuntimeError: [/__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:545] Read error [127.0.0.1]:14228: Connection reset by peer. This is typically caused by a remote worker hanging or bugs in the application.",
        "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:328, remote process exited or there was a network error, NCCL version 2.21.5",
    ] {
        let log = format!("{tb}{peer}\nW1204 20:25:33.999000 13624 torch/distributed/elastic/multiprocessing/api.py:1028] Sending process 13634 closing signal SIGTERM\n{AGENT_FAILED}\n");
        let r = report(&log);
        let f = &r.findings[0];
        assert_eq!(
            (f.signature.as_deref(), f.line),
            (Some("pytorch.distributed.elastic-worker-failed"), 6),
            "{peer}\n{:#?}",
            r.findings
        );
        assert!(r.failed);
    }
    // Alone, a peer symptom still stands in: the log shows it failed.
    let r = report(&format!("{tb}{GLOO_PEER_CLOSED}\n"));
    let f = &r.findings[0];
    assert_eq!(
        (f.role, f.signature.as_deref(), f.line),
        (
            FindingRole::Unclassified,
            Some("pytorch.distributed.gloo-peer-closed"),
            4
        )
    );
    assert!(r.failed);
    // Healthy: the c10d store's own disconnect notices at a clean exit are no failure.
    // (The end of tools/reallogs' healthy torchrun run.)
    let healthy = "2026-12-04 20:25:13,654 INFO [rank0] ddp_train: training finished: final loss 0.02212\n[I1204 20:25:15.949759055 TCPStoreLibUvBackend.cpp:130] [c10d - debug] Remote peer closed the connection.\nI1204 20:25:15.308000 13491 torch/distributed/elastic/agent/server/api.py:931] [default] worker group successfully finished. Waiting 300 seconds for other agents to finish.\n[I1204 20:25:15.992229218 TCPStoreLibUvBackend.cpp:130] [c10d - debug] Remote peer closed the connection.\n[I1204 20:25:15.992348516 TCPStoreLibUvBackend.cpp:1253] [c10d - debug] Store exit requested\n[I1204 20:25:15.992391991 TCPStoreLibUvBackend.cpp:1329] [c10d - debug] UV main loop done: res:1\n";
    let r = report(healthy);
    assert!(!r.failed && !r.diagnosed(), "{:#?}", r.findings);
}

#[test]
fn teardown_lines_and_a_peers_disconnect_are_not_going_on() {
    let tb = "Traceback (most recent call last):\n  File \"/venv/bin/torchrun\", line 8, in <module>\n    sys.exit(main())\nRuntimeError: rendezvous stalled\n";
    let disconnect = "[I1204 20:26:04.134521998 TCPStoreLibUvBackend.cpp:130] [c10d - debug] Remote peer closed the connection.\n";
    // The store's teardown as the agent exits: the exception ended its process.
    for teardown in [
        "[I1204 20:26:04.134652262 TCPStoreLibUvBackend.cpp:1253] [c10d - debug] Store exit requested\n",
        "[I1204 20:26:04.134834534 TCPStoreLibUvBackend.cpp:1364] [c10d] uv_loop cleanup finished.\n",
    ] {
        let r = report(&format!("{tb}{disconnect}{teardown}[I1204 20:26:04.134703028 TCPStoreLibUvBackend.cpp:1316] [c10d - debug] UV live handle type 12 active:1 is-closing:0\n"));
        assert!(r.failed, "{teardown}{:#?}", r.findings);
        assert!(r.findings[0].ended_process && !r.findings[0].survivable);
    }
    // Healthy counterexample: a traceback printed from inside the program (not from its entry
    // point) whose process logs on after the disconnect: survived.
    let caught = "Traceback (most recent call last):\n  File \"/venv/lib/python3.11/site-packages/torch/distributed/elastic/agent/server/api.py\", line 700, in _rendezvous\n    self._store.wait()\nRuntimeError: rendezvous stalled\n";
    let went_on = "I1204 20:26:05.091000 13755 torch/distributed/elastic/agent/server/api.py:706] [default] Rendezvous'ing worker group\n";
    let r = report(&format!("{caught}{disconnect}{went_on}"));
    assert!(!r.failed, "{:#?}", r.findings);
    assert!(r.findings[0].survivable);
    // From the entry point, no ERROR record before it: the interpreter printed it as the
    // program died, whatever is logged after it.
    let r = report(&format!("{tb}{disconnect}{went_on}"));
    assert!(r.failed && r.findings[0].ended_process, "{:#?}", r.findings);
}

/// A process key owns a buffer even when empty, so that comparing it never hands `memcmp` a
/// dangling address (see `process_key`).
#[test]
fn process_keys_own_a_buffer_even_when_empty() {
    for name in ["", "rank3", "Worker_TP1 pid=7"] {
        let key = process_key(name);
        assert_eq!(key, name);
        assert!(key.capacity() >= 1, "{name:?}");
    }
}

// The retry-loop rule: wandb's real lines (wandb/wandb#10044; ultralytics/yolov5#4015).
const LOOP: &str = "wandb: Network error (ConnectTimeout), entering retry loop.";
const RESOLVED: &str =
    "wandb: Network error resolved after 0:01:38.877099, resuming normal operation.";
const INIT_TIMEOUT: &str = "wandb: ERROR Run initialization has timed out after 90.0 sec. Please try increasing the timeout with the `init_timeout` setting: `wandb.init(settings=wandb.Settings(init_timeout=120))`.";
const CANCELLED: &str = "Traceback (most recent call last):\n  File \"/x/asyncio/tasks.py\", line 456, in wait_for\n    return fut.result()\nasyncio.exceptions.CancelledError\n";

#[test]
fn an_unresolved_retry_loop_before_the_failure_is_its_cause() {
    let r = report(&format!("{LOOP}\n{INIT_TIMEOUT}\n{CANCELLED}"));
    let f = &r.findings[0];
    assert_eq!(f.signature.as_deref(), Some("wandb.network.retry-loop"));
    assert_eq!(
        (f.role, f.survivable, f.line),
        (FindingRole::Cause, false, 1)
    );
    assert!(f.why.contains("no recovery followed"), "{}", f.why);
    assert!(r.failed);
}

#[test]
fn a_resolved_retry_loop_stays_survivable_and_the_failure_stays_first() {
    // Counterexample: the loop recovered, so the later failure is not its doing.
    loop_survives_below_the_failure(
        &format!("{LOOP}\n{RESOLVED}\n{INIT_TIMEOUT}\n{CANCELLED}"),
        1,
    );
}

/// The first finding is the unclassified failure; the retry loop at `line` stays survivable.
fn loop_survives_below_the_failure(log: &str, line: u64) {
    let r = report(log);
    assert_eq!(
        r.findings[0].role,
        FindingRole::Unclassified,
        "{:#?}",
        r.findings
    );
    let l = r
        .findings
        .iter()
        .find(|f| f.line == line)
        .expect("the loop");
    assert!(l.survivable);
}

#[test]
fn a_retry_loop_in_a_healthy_run_stays_clean() {
    // Counterexample: no failure after the loop (resolved or not): nothing is diagnosed.
    let progress = "   27/99     2.57G   0.01694   0.01456   0.06814   0.09964         3       832:  18%|▎ | 334/1860 [01:20<06:34,  3.87it/s]";
    for log in [
        format!("{LOOP}\n{progress}\n{progress}{RESOLVED}\n{progress}\n"),
        format!("{LOOP}\n{progress}\n"),
    ] {
        let r = report(&log);
        assert!(!r.failed, "{:#?}", r.findings);
    }
}

#[test]
fn a_retry_loop_entered_again_after_a_recovery_is_open_again() {
    let r = report(&format!(
        "{LOOP}\n{RESOLVED}\n{LOOP}\n{INIT_TIMEOUT}\n{CANCELLED}"
    ));
    assert_eq!(
        r.findings[0].signature.as_deref(),
        Some("wandb.network.retry-loop")
    );
    assert_eq!(r.findings[0].count, 2);
}

#[test]
fn an_unresolved_retry_loop_never_outranks_a_known_fatal_cause_or_an_earlier_failure() {
    // A known fatal cause after the loop: the cause wins, the loop stays survivable.
    let r = report(&format!("{LOOP}\n{OOM}\n"));
    assert_eq!(r.findings[0].line, 2, "{:#?}", r.findings);
    assert!(r.findings.iter().any(|f| f.line == 1 && f.survivable));
    // The run failed before the loop began: the loop (teardown uploads) is not its cause.
    loop_survives_below_the_failure(&format!("{CANCELLED}{LOOP}\n"), 5);
}

#[test]
fn progress_of_other_processes_is_not_parsed_while_a_tagged_failure_waits() {
    // A worker's survivable error that its process never follows up, then 10,000 progress
    // lines of the driver: each is counted, none parsed; the worker's own progress still
    // reaches the failure.
    let db = Database::embedded();
    let mut log = String::from("(WorkerDict pid=7) WARNING:2025-09-17 10:35:23,848:HTTP Error 429 thrown while requesting HEAD https://huggingface.co/x/resolve/main/tokenizer_config.json\n");
    for i in 0..10_000 {
        log.push_str(&format!(
            "(TaskRunner pid=5) Training Progress:   0%|          | {i}/15625 [34:38<288:57:10, 66.71s/it]\n"
        ));
    }
    log.push_str(
        "(WorkerDict pid=7) Training Progress:   0%|          | 3/9 [00:01<00:02, 2.00it/s]\n",
    );
    let mut a = Analyzer::new(db, AnalyzeOptions::default());
    let input = Input::from_bytes(Path::new("t.log"), log.into_bytes());
    let (stats, _) = input.scan(db, &ScanOptions::default(), &mut |hit| a.push(&hit));
    assert!(a.parsed < 10, "{} lines parsed", a.parsed);
    let r = a.finish("t.log", &stats, None);
    assert_eq!(r.counts.evidence_lines, 10_001);
    assert!(
        r.findings[0].why.contains("made progress after it"),
        "{}",
        r.findings[0].why
    );
}

#[test]
fn a_known_survivable_cause_of_an_earlier_run_does_not_block_the_last_runs_tail() {
    // Run 1 (a healthy launch) logs GStreamer's skipped plugin (a survivable cause a
    // signature knows); run 2 ends in a failure no signature knows: the tail rule still
    // speaks for run 2 (found by the baseline property test, which inserts a good run first).
    let banner = "INFO 10-10 10:23:00 api_server.py:526] vLLM API server version 0.6.1\n";
    let gst = "(gst-plugin-scanner:7): GStreamer-WARNING **: 18:43:36.486: Failed to load plugin '/usr/lib/x86_64-linux-gnu/gstreamer-1.0/deepstream/libnvdsgst_inferserver.so': libtritonserver.so: cannot open shared object file: No such file or directory\n";
    let tail = "api_1  | 8:39AM INF [llama-cpp] Fails: could not load model: rpc error: code = Unavailable desc = error reading from server: EOF\n";
    let alone = report(tail);
    let r = report(&format!("{banner}{gst}{banner}{tail}"));
    assert_eq!(r.runs, 2);
    assert!(r.failed, "{:#?}", r.findings);
    assert_eq!(
        r.findings[0].text, alone.findings[0].text,
        "{:#?}",
        r.findings
    );
    assert_eq!(r.findings[0].run, 2);
}

mod anchor;
mod one_line;
