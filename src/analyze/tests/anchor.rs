//! Issue 30, item 1 ("log text cannot choose the diagnosis"): the anchor rule over every
//! shipped signature's examples, and one test per injection mechanism, each from generated
//! lines.

use super::*;

/// Whether signature `sig` counts on line `raw` by the anchor and level rules
/// ([`Analyzer::counted`]).
fn counts(db: &Database, sig: u32, raw: &str) -> bool {
    let analyzer = Analyzer::new(db, AnalyzeOptions::default());
    let hit = Hit {
        line: 1,
        offset: 0,
        text: raw.as_bytes().to_vec(),
        text_truncated: false,
        matched: LineMatch {
            signatures: vec![sig],
            markers: 0,
        },
    };
    let info = line::parse_line(raw.as_bytes());
    analyzer
        .counted(&hit, &info)
        .is_none_or(|m| m.signatures == [sig])
}

/// Every example of every shipped signature counts where it is printed: the anchor rule
/// takes the message where the software prints it, and the signatures that match inside
/// other text say so (`anchor = "anywhere"`, with a reason).
#[test]
fn every_shipped_example_counts_by_the_anchor_and_level_rules() {
    let db = Database::embedded();
    let set = crate::embedded_signature_set().expect("the embedded set loads");
    let mut failing = Vec::new();
    for sig in &set.signatures {
        let Some(index) = db.signatures().iter().position(|s| s.id == sig.info.id) else {
            continue;
        };
        for ex in &sig.examples {
            if !counts(db, index as u32, &ex.value) {
                failing.push(format!("{}\t{}", sig.info.id, ex.value));
            }
        }
    }
    assert!(
        failing.is_empty(),
        "{} examples do not count:\n{}",
        failing.len(),
        failing.join("\n")
    );
}

const BANNER: &str =
    "(APIServer pid=1) INFO 02-20 21:00:00 [api_server.py:1] vLLM API server version 0.9.1";
const SERVING: &str = "(APIServer pid=1) INFO 02-20 21:00:09 [loggers.py:1] Engine 000: Avg prompt throughput: 1.0 tokens/s, Avg generation throughput: 9.0 tokens/s, Running: 1 reqs";

/// A request's prompt, logged by vLLM at INFO (`Received request ...: prompt: '...'`).
fn prompt(time: &str, text: &str) -> String {
    format!("(APIServer pid=1) INFO 02-20 21:00:{time} [logger.py:39] Received request cmpl-{time}: prompt: '{text}', params: SamplingParams(n=1, temperature=0.7), prompt_token_ids: None")
}

/// The same text in a JSON request body, logged unleveled by a proxy.
fn body(text: &str) -> String {
    format!("{{\"model\": \"m\", \"prompt\": \"{text}\", \"max_tokens\": 16}}")
}

/// Issue 30, item 1: a prompt holding an out-of-memory exception line, logged at INFO, leaves
/// a healthy server healthy (was: exit 0, "ROOT CAUSE: CUDA out of memory" and its Fix); the
/// same text at the start of an INFO message, and inside a JSON body, neither.
#[test]
fn an_injected_oom_in_a_prompt_makes_no_cause() {
    for line in [
        prompt("02", OOM),
        body(OOM),
        format!("(APIServer pid=1) INFO 02-20 21:00:02 [echo.py:1] {OOM}"),
    ] {
        let log = format!("{BANNER}\n{line}\n{SERVING}\n");
        let r = report(&log);
        assert!(!r.failed, "{line}: {:#?}", r.findings);
        assert!(
            r.findings
                .iter()
                .all(|f| f.signature.as_deref() != Some("pytorch.cuda.oom")),
            "{line}: {:#?}",
            r.findings
        );
    }
    // The real line is still found, and with it at WARNING or ERROR level.
    for real in [
        OOM.to_string(),
        format!("(EngineCore pid=5) ERROR 02-20 21:00:02 [core.py:1] {OOM}"),
    ] {
        let r = report(&format!("{BANNER}\n{real}\n"));
        assert_eq!(
            r.findings[0].signature.as_deref(),
            Some("pytorch.cuda.oom"),
            "{real}"
        );
    }
}

/// A prompt holding a `ModuleNotFoundError` for a made-up package yields no finding naming
/// it, so no Fix tells anyone to install it (was: the Fix "install evilpkg", a typosquatting
/// lure).
#[test]
fn an_injected_missing_module_names_no_package_to_install() {
    let lure = "ModuleNotFoundError: No module named 'evilpkg'";
    for line in [prompt("02", lure), body(lure)] {
        let r = report(&format!("{BANNER}\n{line}\n{SERVING}\n"));
        assert!(!r.failed, "{line}: {:#?}", r.findings);
        assert!(
            r.findings.iter().all(
                |f| !f.remediation.as_deref().unwrap_or("").contains("evilpkg")
                    && f.captures.values().all(|v| !v.contains("evilpkg"))
            ),
            "{line}: {:#?}",
            r.findings
        );
    }
}

/// In a failing log, an injected cause does not outrank the real one: placed earlier, it is
/// not the earliest failure; placed after the crash together with `restart_count=1`, it
/// opens no run 2 (was: the injected cause first in both).
#[test]
fn an_injected_cause_never_outranks_the_real_one() {
    let crash = "(EngineCore pid=5) ERROR 02-20 21:00:05 [core.py:1] RuntimeError: CUDA error: an illegal memory access was encountered";
    let earlier = format!("{BANNER}\n{}\n{crash}\n", prompt("02", OOM));
    let r = report(&earlier);
    assert_eq!(r.findings[0].line, 3, "{:#?}", r.findings);
    assert_eq!(
        r.findings[0].signature.as_deref(),
        Some("pytorch.cuda.illegal-memory-access")
    );
    let after = format!(
        "{BANNER}\n{crash}\n{}\n{}\n",
        prompt("06", "  restart_count=1"),
        prompt("07", OOM)
    );
    let r = report(&after);
    assert_eq!(r.runs, 1, "{:#?}", r.findings);
    assert_eq!(r.findings[0].line, 2, "{:#?}", r.findings);
    assert!(r
        .findings
        .iter()
        .all(|f| f.signature.as_deref() != Some("pytorch.cuda.oom")));
}

/// A survivable per-request error stays survivable when the next request's prompt says
/// "shutting down" (was: the prompt wound the server down, the error became fatal).
#[test]
fn a_prompt_that_says_shutting_down_keeps_a_survivable_error_survivable() {
    let too_long = "(APIServer pid=1) ERROR 02-20 21:00:02 [serving_chat.py:222] ValueError: This model's maximum context length is 32768 tokens. However, your prompt contains 40210 input tokens, which exceeds this limit even without any output tokens. Please reduce the length of the input prompt.";
    // The prompt is the server's last line: its process logged it and went on.
    let log = format!(
        "{BANNER}\n{too_long}\n{}\n",
        prompt("03", "the server is shutting down, killed, exiting")
    );
    let r = report(&log);
    assert!(!r.failed, "{:#?}", r.findings);
    // The same words outside quotes, the server's own, still wind it down.
    let stopping = log.replace(
        "prompt: 'the server is shutting down, killed, exiting'",
        "prompt: the server is shutting down, killed, exiting",
    );
    assert!(
        report(&stopping).failed,
        "{:#?}",
        report(&stopping).findings
    );
}

/// The tail rule takes a line at ERROR level over an earlier line that names no level (was:
/// the first line of the tail that said a failure, an echoed `fatal: ...` included).
#[test]
fn the_tail_rule_prefers_a_leveled_failure_to_an_unleveled_line() {
    let log = "started job 7\n\
               fatal: injected by a request, run ./fix.sh to repair the GPU\n\
               time=2024-01-01T10:00:02Z level=error msg=\"failed to load shard 3 of the checkpoint: checksum mismatch\"\n";
    let r = report(log);
    assert!(r.failed, "{:#?}", r.findings);
    assert_eq!(r.findings[0].line, 3, "{:#?}", r.findings);
    // Alone, the unleveled line still stands in.
    let r = report("started job 7\nfatal: the build cache is corrupt\n");
    assert_eq!(r.findings[0].line, 2, "{:#?}", r.findings);
}
