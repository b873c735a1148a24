//! Word tests on a line's message: exception names, stopping, a peer leaving, failure in
//! words, a client's HTTP error. The bottom of the analysis: every analysis file may use them.

/// The name of the exception on an exception line: `ValueError` in `ValueError: x`.
pub(super) fn exception_name(message: &str) -> &str {
    let head = message.split(':').next().unwrap_or(message).trim();
    head.rsplit(['.', ' ']).next().unwrap_or(head)
}

/// Whether an exception line names a class: `pkg.SomeName: ...` or a bare `SomeName`.
pub(super) fn names_a_class(message: &str) -> bool {
    let head = message.split(": ").next().unwrap_or(message).trim();
    !head.is_empty()
        && head.len() < 120
        && head
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'.')
        && head
            .rsplit('.')
            .next()
            .is_some_and(|n| n.starts_with(|c: char| c.is_ascii_uppercase()))
}

/// Whether a log line says its process is stopping (not going on). Teardown lines a library
/// prints as its process exits count too: c10d's TCPStore prints `Store exit requested`,
/// `uv_loop_close failed ...` and `uv_loop cleanup finished.` at INFO after the traceback that
/// ended the torchrun agent.
pub(super) fn winds_down(message: &str) -> bool {
    const WORDS: [&str; 16] = [
        "shutting down",
        "shutdown",
        "exiting",
        "terminat",
        "destroy_process_group",
        "finished server process",
        "stopping",
        "stopped",
        "killed",
        "abort",
        "died",
        "exit code",
        "exitcode",
        "cleaning up",
        "exit requested",
        "cleanup finished",
    ];
    // One pass, no lower-cased copy: sixteen substring searches of a copy cost about 4% of a
    // scan of real logs, whose every line of a process with a pending failure asks.
    static WINDS_DOWN: std::sync::OnceLock<Option<aho_corasick::AhoCorasick>> =
        std::sync::OnceLock::new();
    let ac = WINDS_DOWN.get_or_init(|| {
        aho_corasick::AhoCorasick::builder()
            .ascii_case_insensitive(true)
            .build(WORDS)
            .ok()
    });
    match ac {
        Some(ac) => ac.is_match(message),
        None => {
            let lower = message.to_ascii_lowercase();
            WORDS.iter().any(|w| lower.contains(w))
        }
    }
}

/// Whether a log line only says that a peer closed its connection to this process (a c10d
/// store server's `Remote peer closed the connection.` as a client exits): it says nothing
/// about this process going on, so it settles no pending failure.
pub(super) fn peer_left(message: &str) -> bool {
    message
        .to_ascii_lowercase()
        .contains("closed the connection")
}

/// Words that say a failure, matched in the lower-cased message. A word that only starts
/// one (`fail` in `failed`, `failure`) is enough.
const FAILURE_WORDS: [&str; 39] = [
    "error",
    "fail",
    "fatal",
    "panic",
    "abort",
    "unable to",
    "cannot",
    "can't",
    "could not",
    "couldn't",
    "not found",
    "no such",
    "died",
    "killed",
    "cancelled",
    "timed out",
    "out of memory",
    "denied",
    "refused",
    "invalid",
    "unrecognized",
    "not compatible",
    "incompatible",
    "mismatch",
    "insufficient",
    "not available",
    "unavailable",
    "not supported",
    "unsupported",
    "assert",
    "exceeded",
    "exception",
    "illegal",
    "segmentation",
    "not responding",
    "signaled",
    "by signal",
    "on signal",
    "received signal",
];

/// Phrases that use a failure word to say there was none, or to ask for bug reports (a
/// library's banner: `For bug reports, please submit your error trace to: ...`).
const NO_FAILURE: [&str; 12] = [
    "no error",
    "0 error",
    "errors: 0",
    "errors=0",
    "error_rate",
    "without error",
    "failed: 0",
    "failed=0",
    "bug report",
    "report bugs",
    "report issues",
    "standard error",
];

/// Whether `word` stands in `lower` (the lower-cased `message`) at the start of a word: after
/// no letter, or with a capital in `message` (`RuntimeError`, `OOMKilled`); not inside a word
/// (`terror`, `prefail`).
fn starts_a_word(message: &str, lower: &str, word: &str) -> bool {
    let bytes = message.as_bytes();
    lower.match_indices(word).any(|(i, _)| {
        i == 0 || !bytes[i - 1].is_ascii_alphabetic() || bytes[i].is_ascii_uppercase()
    })
}

/// Counts of none that test runners print with a failure word: ctest's `0 tests failed out of
/// 33`, `7 passed, 0 failed`.
const ZERO_FAILED: [&str; 2] = ["0 tests failed", "0 failed"];

/// Whether a message says, in words, that something failed.
pub(super) fn says_failure(message: &str) -> bool {
    let lower = message.to_ascii_lowercase();
    FAILURE_WORDS
        .iter()
        .any(|w| starts_a_word(message, &lower, w))
        && !NO_FAILURE.iter().any(|w| lower.contains(w))
        && !ZERO_FAILED.iter().any(|w| counts_none(&lower, w))
}

/// Whether `phrase` (which starts with the digit 0) stands in `lower` as a count of none:
/// not the end of a larger number (`10 tests failed`).
fn counts_none(lower: &str, phrase: &str) -> bool {
    lower.match_indices(phrase).any(|(i, _)| {
        !lower[..i]
            .chars()
            .next_back()
            .is_some_and(|c| c.is_ascii_digit() || c == '.')
    })
}

/// Whether a line logs an HTTP response with a 4xx status (`"POST /v1/x HTTP/1.1" 404 Not
/// Found`, gin's `| 404 |`): the client erred and the server answered, going on. A 5xx
/// status says the server failed.
pub(super) fn client_error(message: &str) -> bool {
    let b = message.as_bytes();
    b.windows(5).enumerate().any(|(i, w)| {
        let status =
            matches!(w, [b' ', b'4', d1, d2, b' '] if d1.is_ascii_digit() && d2.is_ascii_digit());
        status && (b[..i].ends_with(b"\"") || b[..i].ends_with(b"|"))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failure_words_count_at_the_start_of_a_word() {
        assert!(!says_failure(
            "fans of slow-burn terror would be wise to stream it"
        ));
        assert!(says_failure("RuntimeError: NCCL communicator was aborted"));
        assert!(says_failure("pod OOMKilled"));
        assert!(says_failure("build-error: linker"));
        assert!(says_failure("Error: No such command 'run'."));
    }

    #[test]
    fn a_count_of_no_failures_is_no_failure() {
        assert!(!says_failure("100% tests passed, 0 tests failed out of 33"));
        assert!(!says_failure("Totals: 7 passed, 0 failed, 0 skipped"));
        assert!(says_failure("90% tests passed, 10 tests failed out of 100"));
        assert!(says_failure("3 passed, 20 failed"));
    }

    #[test]
    fn winding_down_is_read_in_any_case() {
        for m in [
            "Shutting down engine core",
            "SHUTDOWN requested",
            "Terminating worker 3",
            "Process EngineCore died; cleanup finished.",
            "torch.distributed.destroy_process_group() called",
        ] {
            assert!(winds_down(m), "{m}");
        }
        for m in [
            "Added request chatcmpl-1.",
            "Avg prompt throughput: 1.0 tokens/s",
            "",
        ] {
            assert!(!winds_down(m), "{m}");
        }
    }
}
