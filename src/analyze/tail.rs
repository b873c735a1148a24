//! The last resort for a log in which no failure was found: its last lines.
//!
//! Users paste, and programs leave, the end of a run that failed: the line that says why is
//! near the end, and nothing after it shows its process going on. When no rule found a
//! failure anywhere in the log and no signature a cause, and the input does not end inside a
//! traceback an ERROR record introduced, the first line of the tail that says a failure in
//! words (`error`, `failed`, `cannot`, `unable to`, `killed`, ...), is not logged at DEBUG,
//! INFO or WARNING level, is no stack line or Python warning, is not a line a signature
//! already knows, and after which its process logged nothing at INFO or DEBUG level (other
//! than a shutdown, a failure or a server error; a client's 4xx answered is going on), stands
//! in for the cause; a line at ERROR or CRITICAL level goes before any line whose level is
//! unknown (text a program echoed, such as a request, is unleveled). A heading (`Error Message Summary:`) gives way to the line under it.
//!
//! Counterexamples from healthy logs in the corpus: a server answering a bad request logs an
//! ERROR line and then serves the next ones at INFO (`vllm-healthy-404-model-not-found-requests`,
//! `tgi-survivable-sporadic-prefill-server-error`); a warning that a step failed and was
//! worked around is logged at WARNING (`onnxruntime-healthy-cuda-provider-fallback-warning`).

use std::collections::VecDeque;

use super::line::{self, Level, LineInfo};
use super::words::{client_error, says_failure, winds_down};

/// Most lines of the tail read, counted from the end.
pub(super) const TAIL_LINES: usize = 64;

/// The line numbers of the last [`TAIL_LINES`] lines a signature matched, and of the last
/// [`TAIL_LINES`] error lines no signature matched: what the tail rule must know of the lines
/// the scan delivered.
pub(super) struct Recent {
    pub known: VecDeque<u64>,
    pub errors: VecDeque<u64>,
}

impl Recent {
    pub(super) fn new() -> Recent {
        Recent {
            known: VecDeque::with_capacity(TAIL_LINES),
            errors: VecDeque::with_capacity(TAIL_LINES),
        }
    }

    /// A signature matched line `line`.
    pub(super) fn matched(&mut self, line: u64) {
        if self.known.len() == TAIL_LINES {
            self.known.pop_front();
        }
        self.known.push_back(line);
    }

    /// Line `line` is an error line no signature matched.
    pub(super) fn unmatched_error(&mut self, line: u64) {
        if self.errors.len() == TAIL_LINES {
            self.errors.pop_front();
        }
        self.errors.push_back(line);
    }
}

/// A tail line that stands in for an unknown cause.
pub(super) struct StandIn {
    pub line: u64,
    pub offset: u64,
    pub raw: Vec<u8>,
    pub info: LineInfo,
}

/// Whether a line is part of a stack or a list printed under another line: indented, a C++
/// `frame #N:` or a Python `File "..."` line (typographic quotes too, as pastes have them).
fn continuation(message: &str) -> bool {
    message.starts_with([' ', '\t'])
        || message.starts_with("frame #")
        || message.starts_with("File \"")
        || message.starts_with("File \u{201c}")
}

/// Whether a Python warning is printed: `path.py:8: RuntimeWarning: ...` or `UserWarning: ...`.
fn python_warning(message: &str) -> bool {
    message
        .split(": ")
        .take(3)
        .any(|part| part.ends_with("Warning") && !part.contains(' '))
}

/// The level a line names near its start in a format the prefix rules do not parse: a level
/// word (`WARN NativeCodeLoader:`, `[TensorRT-LLM][WARNING]`), logfmt's `level=info`, or
/// tornado's and ONNX Runtime's one letter (`[W 09:11:58.491 NotebookApp]`, `[W:onnxruntime:`),
/// spdlog's lower-case word in brackets (`[error]`).
fn loose_level(text: &str) -> Option<Level> {
    let head = &text.as_bytes()[..text.len().min(LEVEL_WITHIN)];
    let mut i = 0;
    while i < head.len() {
        if let [b'[', c, b' ' | b':', ..] = head[i..] {
            if let Some(l) = line_letter(c) {
                return Some(l);
            }
        }
        // TensorFlow's C++ logging: `2024-01-05 14:04:56.743208: W tensorflow/x.cc:38] ...`.
        if let [b':', b' ', c, b' ', ..] = head[i..] {
            let rest = &head[i + 4..];
            let path_end = rest.iter().position(|&b| b == b' ').unwrap_or(rest.len());
            if rest[..path_end].ends_with(b"]") {
                if let Some(l) = line_letter(c) {
                    return Some(l);
                }
            }
        }
        // spdlog's `[%l]`, lower case (Habana's Synapse: `[..][GC    ][error][tid:44F8A] `).
        if head[i] == b'[' {
            let word = &head[i + 1..];
            let n = word.iter().take_while(|b| b.is_ascii_lowercase()).count();
            if word.get(n) == Some(&b']') {
                let level = match &word[..n] {
                    b"trace" | b"debug" => Some(Level::Debug),
                    b"info" => Some(Level::Info),
                    b"warn" | b"warning" => Some(Level::Warning),
                    b"error" => Some(Level::Error),
                    b"critical" => Some(Level::Critical),
                    _ => None,
                };
                if level.is_some() {
                    return level;
                }
            }
        }
        let starts = i == 0 || !head[i - 1].is_ascii_alphanumeric();
        if !starts || !head[i].is_ascii_alphabetic() {
            i += 1;
            continue;
        }
        let end = i + head[i..]
            .iter()
            .position(|b| !b.is_ascii_alphanumeric())
            .unwrap_or(head.len() - i);
        let word = &head[i..end];
        let level = match word {
            b"TRACE" | b"DEBUG" => Some(Level::Debug),
            b"INFO" | b"NOTICE" => Some(Level::Info),
            b"WARN" | b"WARNING" => Some(Level::Warning),
            b"ERROR" | b"SEVERE" => Some(Level::Error),
            b"CRITICAL" | b"FATAL" => Some(Level::Critical),
            b"level" if head.get(end) == Some(&b'=') => {
                let value = &head[end + 1..];
                let value = value.strip_prefix(b"\"").unwrap_or(value);
                let n = value.iter().take_while(|b| b.is_ascii_alphabetic()).count();
                match value[..n].to_ascii_lowercase().as_slice() {
                    b"trace" | b"debug" => Some(Level::Debug),
                    b"info" => Some(Level::Info),
                    b"warn" | b"warning" => Some(Level::Warning),
                    b"error" => Some(Level::Error),
                    b"fatal" | b"panic" | b"critical" => Some(Level::Critical),
                    _ => None,
                }
            }
            _ => None,
        };
        if level.is_some() {
            return level;
        }
        i = end;
    }
    None
}

/// How far into a line [`loose_level`] looks.
const LEVEL_WITHIN: usize = 100;

fn line_letter(c: u8) -> Option<Level> {
    Some(match c {
        b'D' => Level::Debug,
        b'I' => Level::Info,
        b'W' => Level::Warning,
        b'E' => Level::Error,
        b'C' | b'F' => Level::Critical,
        _ => return None,
    })
}

/// A line's level: as its prefixes say, else as [`loose_level`] finds it in its message (the
/// line after the prefixes, already decoded).
pub(super) fn level(info: &LineInfo) -> Option<Level> {
    info.level.or_else(|| loose_level(&info.message))
}

/// Whether a line shows its process going on: logged at DEBUG or INFO, and neither about
/// stopping nor about a failure (ollama logs `level=INFO msg="NewLlamaServer failed"`) other
/// than a client's.
fn goes_on(level: Option<Level>, info: &LineInfo) -> bool {
    let own = line::own_words(&info.message);
    matches!(level, Some(Level::Debug | Level::Info))
        && !winds_down(&own)
        && (!says_failure(&own) || client_error(&own))
}

/// Whether a line could say why the log failed.
fn candidate(level: Option<Level>, info: &LineInfo) -> bool {
    !matches!(level, Some(Level::Debug | Level::Info | Level::Warning))
        && !info.message.trim().is_empty()
        && !continuation(&info.message)
        && !python_warning(&info.message)
        && !echoed_command(&info.message)
        && says_failure(&line::own_words(&info.message))
}

/// A command the shell echoes before it runs it (`set -x`: `+ ctest --output-on-failure`,
/// `++ make`): its words name options, not a failure.
fn echoed_command(message: &str) -> bool {
    let rest = message.trim_start_matches('+');
    rest.len() < message.len() && rest.starts_with(' ')
}

/// The line of `tail` (the input's last lines; its first line is line `first_line` at byte
/// `first_offset`) that stands in for the cause of a log in which no failure was found, if
/// any. `known` says whether a line number matched a signature.
pub(super) fn stand_in(
    tail: &[u8],
    first_line: u64,
    first_offset: u64,
    known: impl Fn(u64) -> bool,
) -> Option<StandIn> {
    let mut lines: Vec<(u64, u64, &[u8])> = Vec::new();
    let mut offset = first_offset;
    for (i, raw) in tail.split_inclusive(|&b| b == b'\n').enumerate() {
        let len = raw.len() as u64;
        let text = raw.strip_suffix(b"\n").unwrap_or(raw);
        let text = text.strip_suffix(b"\r").unwrap_or(text);
        lines.push((first_line + i as u64, offset, text));
        offset += len;
    }
    let skip = lines.len().saturating_sub(TAIL_LINES);
    let parsed: Vec<TailLine> = lines
        .into_iter()
        .skip(skip)
        .map(|(line, offset, raw)| {
            let info = line::parse_line(raw);
            let level = level(&info);
            TailLine {
                line,
                offset,
                raw,
                candidate: candidate(level, &info),
                goes_on: goes_on(level, &info),
                leveled: level.is_some(),
                info,
            }
        })
        .collect();
    let stands = |i: usize| {
        let l: &TailLine = &parsed[i];
        !known(l.line)
            && l.candidate
            && !parsed[i + 1..]
                .iter()
                .any(|later| later.goes_on && later.info.process == l.info.process)
    };
    // A line that names its level (ERROR, CRITICAL) goes before one that names none: an
    // unleveled line may be text a program echoed (a request, a command), never the log
    // record of a failure.
    let leveled = (0..parsed.len()).any(|i| parsed[i].leveled && stands(i));
    let mut found = (0..parsed.len()).filter(|&i| (parsed[i].leveled || !leveled) && stands(i));
    let first = found.next()?;
    // A heading (`Error Message Summary:`, `Shard complete standard error output:`) introduces
    // the failure printed under it: the next line that stands in says it.
    let pick = if heading(&parsed[first].info.message) {
        found.next().unwrap_or(first)
    } else {
        first
    };
    let l = &parsed[pick];
    Some(StandIn {
        line: l.line,
        offset: l.offset,
        raw: l.raw.to_vec(),
        info: l.info.clone(),
    })
}

/// Whether a message only announces what follows: it ends with a colon and holds no other.
fn heading(message: &str) -> bool {
    let m = message.trim_end();
    m.ends_with(':') && !m[..m.len() - 1].contains(": ")
}

/// A line of the tail, parsed.
struct TailLine<'a> {
    line: u64,
    offset: u64,
    raw: &'a [u8],
    info: LineInfo,
    /// Whether it could stand in ([`candidate`]), and whether it shows its process going on
    /// ([`goes_on`]): each read once, not once per earlier line.
    candidate: bool,
    goes_on: bool,
    /// Whether its level is known (a candidate's is ERROR or CRITICAL).
    leveled: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pick(log: &str) -> Option<u64> {
        stand_in(log.as_bytes(), 1, 0, |_| false).map(|s| s.line)
    }

    #[test]
    fn the_first_failure_line_nothing_went_on_after() {
        let log =
            "Collecting environment\nSolving environment: done\n\nError: No such command 'run'.\n";
        assert_eq!(pick(log), Some(4));
    }

    #[test]
    fn a_command_the_shell_echoes_says_no_failure() {
        // `set -x` echoes each command (a CI script's `+ ctest --output-on-failure`); a
        // failure the command then prints still stands in.
        assert_eq!(
            pick(
                "+ ctest --output-on-failure
100% tests passed
"
            ),
            None
        );
        assert_eq!(
            pick(
                "++ make -k || echo failed
"
            ),
            None
        );
        assert_eq!(
            pick(
                "+ ctest
Error: 3 tests failed
"
            ),
            Some(2)
        );
    }

    #[test]
    fn a_process_that_went_on_at_info_level_survived_it() {
        let log = "ERROR 03-18 09:02:03 [serving_chat.py:133] Error with model object='error'\n\
                   INFO 03-18 09:02:04 [logger.py:39] Received request chatcmpl-1\n";
        assert_eq!(pick(log), None);
    }

    #[test]
    fn another_process_going_on_does_not_count() {
        let log = "(VllmWorker rank=1 pid=7) ERROR 01-02 03:04:05 [multiproc.py:1] Worker proc died unexpectedly\n\
                   (APIServer pid=1) INFO 01-02 03:04:06 [loggers.py:1] Avg prompt throughput: 0.0 tokens/s\n";
        assert_eq!(pick(log), Some(1));
    }

    #[test]
    fn a_server_answering_a_client_error_goes_on_but_not_a_server_error() {
        let error = "ERROR 03-18 09:02:03 [serving_chat.py:133] Error with model object='error'\n";
        for (access, went_on) in [
            ("INFO:     10.0.0.1:5000 - \"POST /v1/chat/completions HTTP/1.1\" 404 Not Found\n", true),
            ("INFO:     10.0.0.1:5000 - \"POST /v1/completions HTTP/1.1\" 500 Internal Server Error\n", false),
        ] {
            let picked = pick(&format!("{error}{access}"));
            assert_eq!(picked, (!went_on).then_some(1), "{access}");
        }
        assert!(client_error(
            "[GIN] 2025/11/06 - 06:23:22 | 404 |  2.85s | 10.0.0.1 | POST \"/api/chat\""
        ));
        assert!(!client_error(
            "[GIN] 2025/11/06 - 06:23:22 | 500 |  2.85s | 10.0.0.1 | POST \"/api/chat\""
        ));
    }

    #[test]
    fn a_heading_gives_way_to_the_failure_under_it() {
        let log = "Error Message Summary:\n----------------------\n\
                   ExternalError: Cudnn error, CUDNN_STATUS_INTERNAL_ERROR at (conv.cc:99)\n";
        assert_eq!(pick(log), Some(3));
        // Alone, a heading still stands in; a line with a message of its own is no heading.
        assert_eq!(pick("RuntimeError:\n"), Some(1));
        assert!(!heading("RuntimeError: CUDA error: invalid argument"));
        assert!(heading("Shard complete standard error output:  "));
    }

    #[test]
    fn a_shutdown_line_is_not_going_on() {
        let log = "ERROR 01-02 03:04:05 [core.py:1] Unable to open the model file\n\
                   INFO 01-02 03:04:06 [core.py:2] Shutting down the engine\n";
        assert_eq!(pick(log), Some(1));
    }

    #[test]
    fn warnings_stacks_and_known_lines_do_not_stand_in() {
        let log = "WARNING 01-02 03:04:05 [x.py:1] Failed to read commit hash\n\
                   /x/connections.py:8: RuntimeWarning: Failed to read commit hash:\n\
                   frame #4: <unknown function> + 0x69db5ae (0x7f in libtorch_cpu.so)\n\
                   File \u{201c}/x/loader.py\u{201d}, line 9, in load_failed_shards\n\
                   \x20   raise ValueError(\"invalid\")\n\
                   cudaErrorNoDevice: no CUDA-capable device is detected\n";
        assert_eq!(pick(log), Some(6));
        assert_eq!(
            stand_in(log.as_bytes(), 1, 0, |n| n == 6).map(|s| s.line),
            None
        );
    }

    #[test]
    fn levels_in_other_formats_are_read() {
        for (line, level) in [
            ("[W 09:11:58.491 NotebookApp] No web browser found: could not locate runnable browser.", Level::Warning),
            ("2024-01-09 21:33:49.2971069 [W:onnxruntime:Default, x.cc:747] Failed to create CUDAExecutionProvider", Level::Warning),
            ("26/12/04 20:33:15 WARN NativeCodeLoader: Unable to load native-hadoop library", Level::Warning),
            ("[TensorRT-LLM][WARNING] likely to affect performance or even cause errors.", Level::Warning),
            ("time=2026-06-13T16:24:12.714Z level=INFO msg=\"Failed to ensure latest llama.cpp\"", Level::Info),
            ("time=\"2024-01-01\" level=error msg=\"failed to start\"", Level::Error),
            ("2024-01-05 14:04:56.743208: W tensorflow/compiler/tf2tensorrt/utils/py_utils.cc:38] TF-TRT Warning: Could not find TensorRT", Level::Warning),
            ("[19:08:34.164951][GC                    ][error][tid:44F8A] Failed to load tpc kernel for node: TPC634, GUID: constant_bf16. Got error: GLUE_FAILED", Level::Error),
            ("[2024-03-01 10:00:00.123] [console] [info] model loaded, failed requests: 0", Level::Info),
            ("[2024-03-01 10:00:00.123] [console] [warning] retrying after a failed probe", Level::Warning),
        ] {
            assert_eq!(loose_level(line), Some(level), "{line}");
        }
        assert_eq!(
            loose_level("Warning: CUDA warning: device-side assert triggered"),
            None
        );
        assert_eq!(loose_level("INFORMATION_SCHEMA lookup failed"), None);
        // Brackets around other lower-case words are not levels.
        assert_eq!(loose_level("[rank0] [hint] the load failed"), None);
    }

    #[test]
    fn words_that_say_no_failure_do_not_count() {
        assert!(!says_failure("Epoch 3 done: 0 errors"));
        assert!(!says_failure("validation finished without errors"));
        assert!(says_failure(
            "CUBLAS failure 13: CUBLAS_STATUS_EXECUTION_FAILED"
        ));
        assert!(says_failure("sbatch: error: Batch job submission failed"));
    }

    #[test]
    fn line_numbers_and_offsets_count_from_the_tail_start() {
        let log = "ok\r\nsegmentation violation in worker\n";
        let s = stand_in(log.as_bytes(), 41, 1000, |_| false).expect("a stand-in");
        assert_eq!((s.line, s.offset), (42, 1004));
        assert_eq!(s.raw, b"segmentation violation in worker");
    }
}
