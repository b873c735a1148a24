//! The one place where text from a log or a path is made safe to show on a terminal or to
//! write on stderr. A log line, a file name, a capture or an error message can hold bytes
//! that a terminal obeys instead of showing: escape sequences (CSI `ESC [`, OSC `ESC ]` that
//! sets the window title or a hyperlink, DCS `ESC P` that makes the terminal answer), C1
//! controls (`U+009B` is a one-character CSI), backspaces and carriage returns that
//! overwrite what was shown, newlines that forge a line of the report (`ROOT CAUSE: ...`),
//! and the bidirectional overrides that reorder what is shown. Each such character is shown
//! escaped instead: `\x1b`, `\x0a`, `\x7f`, `\u{9b}`, `\u{202e}`. TAB is kept. JSON output
//! never goes through here: it keeps the exact text.
//!
//! Here too is [`display_text`], what a terminal showed of a raw log line (its ANSI colour
//! sequences and carriage-return overwrites applied): the analysis parses it, and the human
//! report shows it, so it sits below both.

use std::borrow::Cow;

/// Whether `c` must be shown escaped: C0 controls but TAB, DEL, C1 controls, and the bidi
/// embeddings, overrides and isolates (U+202A–U+202E, U+2066–U+2069).
fn unsafe_char(c: char) -> bool {
    matches!(c, '\0'..='\x08' | '\x0a'..='\x1f' | '\x7f'..='\u{9f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// `text` with every character a terminal would obey shown escaped (see the module doc).
/// Borrowed when there is nothing to escape.
pub fn terminal_safe(text: &str) -> Cow<'_, str> {
    if !text.chars().any(unsafe_char) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if !unsafe_char(c) {
            out.push(c);
        } else if (c as u32) < 0x80 {
            out.push_str(&format!("\\x{:02x}", c as u32));
        } else {
            out.push_str(&format!("\\u{{{:x}}}", c as u32));
        }
    }
    Cow::Owned(out)
}

/// [`terminal_safe`] for text of several lines: each line escaped, the newlines between them kept
/// (tables and reports whose cells hold titles, paths or log text).
pub fn terminal_safe_lines(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for (i, line) in text.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out.push_str(&terminal_safe(line));
    }
    out
}

/// Removes ANSI escape sequences (`ESC [ ... letter`) and keeps what a terminal showed after
/// the last lone carriage return.
pub fn display_text(raw: &[u8]) -> std::borrow::Cow<'_, [u8]> {
    let shown = match memchr::memrchr(b'\r', raw) {
        Some(i) => &raw[i + 1..],
        None => raw,
    };
    if memchr::memchr(0x1b, shown).is_none() {
        return std::borrow::Cow::Borrowed(shown);
    }
    let mut out = Vec::with_capacity(shown.len());
    let mut i = 0;
    while i < shown.len() {
        if shown[i] == 0x1b && shown.get(i + 1) == Some(&b'[') {
            let mut j = i + 2;
            while j < shown.len() && !shown[j].is_ascii_alphabetic() {
                j += 1;
            }
            i = j + 1;
            continue;
        }
        out.push(shown[i]);
        i += 1;
    }
    std::borrow::Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_text_and_tabs_pass_unchanged() {
        let t = "torch.OutOfMemoryError:\tCUDA out of memory — 2.00 GiB (ünïcode ok)";
        assert!(matches!(terminal_safe(t), Cow::Borrowed(_)));
        assert_eq!(terminal_safe(t), t);
    }

    #[test]
    fn c0_controls_del_and_line_breaks_are_escaped() {
        assert_eq!(terminal_safe("a\x08b\x7fc\x07"), "a\\x08b\\x7fc\\x07");
        assert_eq!(
            terminal_safe("x.log\nROOT CAUSE: forged"),
            "x.log\\x0aROOT CAUSE: forged"
        );
        assert_eq!(terminal_safe("progress\rERROR"), "progress\\x0dERROR");
        assert_eq!(terminal_safe("nul\0"), "nul\\x00");
        assert_eq!(
            terminal_safe_lines("a\x1b[2J\nb\rc\n"),
            "a\\x1b[2J\nb\\x0dc\n"
        );
    }

    #[test]
    fn escape_sequences_lose_their_escape() {
        // CSI (clear screen), OSC (window title, hyperlink), DCS (a query the terminal answers).
        assert_eq!(terminal_safe("\x1b[2Jx"), "\\x1b[2Jx");
        assert_eq!(terminal_safe("\x1b]0;pwned\x07"), "\\x1b]0;pwned\\x07");
        assert_eq!(
            terminal_safe("\x1b]8;;http://evil/\x1b\\link\x1b]8;;\x1b\\"),
            "\\x1b]8;;http://evil/\\x1b\\link\\x1b]8;;\\x1b\\"
        );
        assert_eq!(terminal_safe("\x1bP$q\"p\x1b\\"), "\\x1bP$q\"p\\x1b\\");
    }

    #[test]
    fn c1_controls_are_escaped_from_utf8_and_lost_from_raw_bytes() {
        // U+009B is a one-character CSI, encoded in UTF-8 as c2 9b.
        assert_eq!(terminal_safe("a\u{9b}2Jb\u{85}"), "a\\u{9b}2Jb\\u{85}");
        let raw = |b: &[u8]| terminal_safe(&String::from_utf8_lossy(b)).into_owned();
        assert_eq!(raw(b"a\xc2\x9b2J"), "a\\u{9b}2J");
        // A lone 0x9b byte is not UTF-8: it is shown as U+FFFD, which a terminal only shows.
        assert_eq!(raw(b"a\x9b2J"), "a\u{fffd}2J");
    }

    #[test]
    fn bidi_overrides_and_isolates_are_escaped() {
        assert_eq!(terminal_safe("evil\u{202e}gol.exe"), "evil\\u{202e}gol.exe");
        for c in [
            '\u{202a}', '\u{202b}', '\u{202c}', '\u{202d}', '\u{2066}', '\u{2067}', '\u{2068}',
            '\u{2069}',
        ] {
            assert_eq!(
                terminal_safe(&c.to_string()),
                format!("\\u{{{:x}}}", c as u32)
            );
        }
        // Neighbours that are ordinary text stay.
        assert_eq!(
            terminal_safe("\u{2029}\u{206a}\u{a0}"),
            "\u{2029}\u{206a}\u{a0}"
        );
    }
}
