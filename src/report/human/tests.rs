use super::*;
use crate::analyze::{analyze_input, AnalyzeOptions};
use crate::scan::{Input, ScanOptions};
use crate::Database;
use crate::EmbeddedDatabase;
use std::path::Path;

fn render(path: &str, log: &[u8]) -> (Report, String) {
    let input = Input::from_bytes(Path::new(path), log.to_vec());
    let opts = ScanOptions::default();
    let r = analyze_input(
        Database::embedded(),
        input,
        &opts,
        AnalyzeOptions {
            all: true,
            ..AnalyzeOptions::default()
        },
    );
    let text = render_human(&r, true);
    (r, text)
}

/// Nothing a terminal obeys is left: no control character but TAB and newline, no DEL,
/// no C1 control, no bidi override or isolate.
fn assert_inert(text: &str) {
    for c in text.chars() {
        assert!(
            !(matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
                || c.is_control() && c != '\n' && c != '\t'),
            "{c:?} in {text}"
        );
    }
}

#[test]
fn log_text_captures_and_process_tags_cannot_drive_the_terminal() {
    let log = "(Worker\u{1b}]0;pwned\u{7}_TP0 pid=1) ERROR 12-29 15:21:11 [x.py:1] \
            ValueError: No valid attention backend found for cuda\u{1b}[2J with \
            AttentionSelectorConfig(head_size=576). Reasons: {\u{1b}P$q\"p\u{1b}\\ A\u{8}\u{8}B \
            \u{9b}31m C\u{202e}evil\u{2066} D\u{7f}}.\n";
    let (r, text) = render("x.log", log.as_bytes());
    assert_inert(&text);
    let f = r.root_cause().expect("a cause");
    // The quoted line, the Fix (a capture inside it, quoted as log text with its shell bytes
    // escaped) and the process tag, all escaped.
    // Colour/cursor (CSI) sequences are dropped from the quoted line too.
    assert!(text.contains("found for cuda with"), "{text}");
    assert!(
        text.contains("Fix: Read the per-backend reasons («{\\x1bP\\x24q\"p\\x1b\\x5c"),
        "{text}"
    );
    assert!(
        text.contains("A\\x08\\x08B \\u{9b}31m C\\u{202e}evil\\u{2066} D\\x7f"),
        "{text}"
    );
    assert!(
        text.contains("(Worker\\x1b]0;pwned\\x07_TP0 pid=1)"),
        "{text}"
    );
    // Process tags (here set by hand: the prefix parser takes no control characters).
    let mut tagged = r.clone();
    tagged.findings[0].processes = vec!["rank\u{1b}[2J0".into(), "rank\u{202e}1".into()];
    let text = render_human(&tagged, false);
    assert_inert(&text);
    assert!(text.contains(" · rank\\x1b[2J0, rank\\u{202e}1"), "{text}");
    // JSON keeps the exact text.
    assert!(f.text.contains("\u{1b}[2J") && f.text.contains('\u{202e}'));
    let json = r.to_json_line();
    let back: Report = serde_json::from_str(&json).unwrap();
    assert_eq!(back.findings[0].text, f.text);
    assert_eq!(back.findings[0].processes, f.processes);
}

#[test]
fn a_file_name_cannot_forge_a_report_line() {
    let log = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 3 has a total capacity of 79.19 GiB of which 1.01 GiB is free.\n";
    let (_, text) = render(
        "a.log\nROOT CAUSE: all is well  [forged]\r\u{1b}[1A",
        log.as_bytes(),
    );
    assert_inert(&text);
    assert_eq!(
        text.lines().filter(|l| l.starts_with("ROOT CAUSE")).count(),
        1,
        "{text}"
    );
    assert!(
        text.starts_with("a.log\\x0aROOT CAUSE: all is well  [forged]\\x0d\\x1b[1A: "),
        "{text}"
    );
}

#[test]
fn an_error_before_a_lone_carriage_return_is_shown() {
    let oom = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 3 has a total capacity of 79.19 GiB of which 1.01 GiB is free.";
    let log = format!("{oom}\rLoading 100%|##########|\n");
    let (r, text) = render("x.log", log.as_bytes());
    assert_eq!(
        r.root_cause().expect("a cause").signature.as_deref(),
        Some("pytorch.cuda.oom")
    );
    let quoted = text
        .lines()
        .find(|l| l.starts_with("  > "))
        .expect("quoted line");
    assert_eq!(
        quoted,
        format!(
            "  > Loading 100%|##########|  [before a carriage return, hidden on a terminal: {oom}]"
        )
    );
    // Progress-bar frames before the last one are kept, their carriage returns escaped.
    let (_, text) = render("y.log", b"10%\r\x1b[32m20%\x1b[0m\rdone\r\n");
    assert_inert(&text);
}

#[test]
fn the_report_ends_with_each_runs_outcome() {
    let failed = b"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.19 GiB of which 1.01 GiB is free.\n";
    let (_, text) = render("x.log", failed);
    assert!(text.ends_with("Run: failed at line 1.\n"), "{text}");
    let (_, text) = render("x.log", b"hello\n");
    assert!(
        text.ends_with("Run: unknown (no line says how it went).\n"),
        "{text}"
    );
    let two = b"INFO 02-20 21:00:00 [api_server.py:1] vLLM API server version 0.9.1\nINFO:     Shutting down\nINFO 02-20 22:00:00 [api_server.py:1] vLLM API server version 0.9.1\nINFO:     Application startup complete.\n";
    let (_, text) = render("x.log", two);
    assert!(
        text.ends_with("Runs: 1 stopped at line 2; 2 running at line 4.\n"),
        "{text}"
    );
}
