//! Where on a line a signature anchored at the message may start its match.
//!
//! Logs carry text that outsiders control: a request's prompt or body, a printed data
//! sample, an echoed command. A signature that matched anywhere would let such text choose
//! the diagnosis. A signature with `anchor = "message"` (the default) counts only where its
//! match starts at one of the line's *anchor points*:
//!
//! 1. a boundary of the line's recognised prefix: the line's start and the end of each
//!    prefix the line parser strips (process tags, timestamps, levels, sources), the
//!    message's start among them;
//! 2. a *head boundary* of the message: a position, outside quoted data, whose lead (the
//!    message before it, trailing spaces aside) is empty or ends with a separator that
//!    loggers and exception chains print (`:`, `|`, `]`, `>`, `)`, `-`, as in
//!    `RuntimeError: `, `[TensorRT-LLM][ERROR] `, `worker.py:1034 -- `, `ollama  | `), with a
//!    column gap (two or more spaces, or a tab: `kubectl describe`'s event table), or with an
//!    upper-case level word (`NCCL WARN `); and each component of a dotted name there
//!    (`ray.exceptions.RayTaskError`);
//! 3. the first position inside a quote that is not data: one that opens at the message's
//!    start, right after a value's repr `Name(` or an exception type's head
//!    (`OutOfMemoryError('CUDA out of memory`, `Error: ArgumentValidation("`,
//!    `RuntimeError: ('`), or as the value of a record field (`message`, `msg`, `error`,
//!    `err`, `detail`, `reason` in JSON or `key="..."` form, or after the word with a space:
//!    `Worker failed with error 'CUDA error: ...'`). Inside such a quote the same rules
//!    apply again.
//!
//! Any other quote (`"` always; `'` only after a byte that is not a letter or digit, and
//! closed only before one, so that `model's` is no quote; `\` escapes) holds data: no
//! position inside it is an anchor point. So a prompt logged as `prompt='...'`, a JSON
//! request body, or a quoted list of values never starts a match. At most [`MAX_POINTS`]
//! points are taken from a line (a match further right does not count).

/// Most anchor points taken from one line (a point with the separator and space before it
/// counts three): a bound on the anchored searches a matched line costs.
pub const MAX_POINTS: usize = 192;

/// Keys whose quoted value is a log record's own message (JSON `"key": "..."` or logfmt
/// `key="..."`).
const RECORD_KEYS: [&[u8]; 6] = [b"message", b"msg", b"error", b"err", b"detail", b"reason"];

/// Upper-case level words that end a lead (`NCCL WARN failed ...`).
const LEVEL_WORDS: [&[u8]; 10] = [
    b"WARN",
    b"WARNING",
    b"ERROR",
    b"FATAL",
    b"CRITICAL",
    b"INFO",
    b"DEBUG",
    b"E",
    b"W",
    b"F",
];

/// Endings of an exception type's name (its last dotted component), and whole names that
/// head a message the same way.
const EXCEPTION_ENDINGS: [&[u8]; 7] = [
    b"Error",
    b"Exception",
    b"Warning",
    b"Exit",
    b"Interrupt",
    b"Failure",
    b"Fault",
];

fn space(b: u8) -> bool {
    b == b' ' || b == b'\t'
}

fn word_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// The identifier (letters, digits, `_`, `.`) that ends right before `end`.
fn name_before(text: &[u8], end: usize) -> &[u8] {
    let start = text[..end]
        .iter()
        .rposition(|&b| !(word_byte(b) || b == b'.'))
        .map_or(0, |i| i + 1);
    &text[start..end]
}

/// Whether `name` is an exception type's name (`torch.OutOfMemoryError`, `Exception`,
/// `error`).
fn exception_name(name: &[u8]) -> bool {
    let last = name.rsplit(|&b| b == b'.').next().unwrap_or(name);
    !last.is_empty()
        && (EXCEPTION_ENDINGS.iter().any(|e| last.ends_with(e))
            || matches!(last, b"error" | b"fatal" | b"FATAL"))
}

/// Whether the quote at `at` in `text` (its lead starting at `message`) is not data: see
/// the module's rule 3.
fn trusted_quote(text: &[u8], message: usize, at: usize) -> bool {
    let lead = &text[message..at];
    let trimmed = lead.trim_ascii_end();
    if trimmed.is_empty() {
        return true;
    }
    let end = message + trimmed.len();
    match trimmed.last() {
        // `Name(` (a repr), or `(` right after an exception's head (`RuntimeError: ('`).
        Some(b'(') => {
            let name = name_before(text, end - 1);
            name.first().is_some_and(u8::is_ascii_uppercase)
                || text[message..end - 1]
                    .trim_ascii_end()
                    .strip_suffix(b":")
                    .is_some_and(|l| exception_name(name_before(l, l.len())))
        }
        // `ExceptionName: "..."` or a JSON record's `"message": "..."`.
        Some(b':') => {
            let before = &text[message..end - 1];
            let key = before.strip_suffix(b"\"").map(|k| name_before(k, k.len()));
            key.is_some_and(|k| RECORD_KEYS.contains(&k))
                || exception_name(name_before(before, before.len()))
        }
        // logfmt: `msg="..."`.
        Some(b'=') if trimmed.len() == lead.len() => {
            RECORD_KEYS.contains(&name_before(text, end - 1))
        }
        // A wrapper's `failed with error '...'`.
        Some(_) => RECORD_KEYS.contains(&name_before(text, end)) && trimmed.len() < lead.len(),
        None => false,
    }
}

/// Whether the lead that ends right before `at` (from `message`) ends at a head boundary
/// (the module's rule 2), not counting the quote rules.
fn ends_head(text: &[u8], message: usize, at: usize) -> bool {
    let lead = &text[message..at];
    let trimmed = lead.trim_ascii_end();
    let gap = &lead[trimmed.len()..];
    if trimmed.is_empty() || gap.len() >= 2 || gap.contains(&b'\t') {
        return true;
    }
    match trimmed.last() {
        Some(&b) if separator(b) => true,
        Some(_) if !gap.is_empty() => {
            let token = &trimmed[trimmed
                .iter()
                .rposition(|&b| space(b) || separator(b))
                .map_or(0, |i| i + 1)..];
            marker_token(token)
        }
        _ => false,
    }
}

/// The bytes that end a head: `:` (an exception's type, a label), `|`, `]`, `>`, `)`, `-`
/// (tags and separators loggers print), `,` and `;` (a clause).
fn separator(b: u8) -> bool {
    matches!(b, b':' | b'|' | b']' | b'>' | b')' | b'-' | b',' | b';')
}

/// Whether an exception's name is written at `at` (`ModuleNotFoundError("No module`,
/// `ValueError: bad`): a message starts there wherever the line names it, outside quoted
/// data.
fn exception_at(text: &[u8], at: usize) -> bool {
    if at > 0 && (word_byte(text[at - 1]) || text[at - 1] == b'.') {
        return false;
    }
    let len = text[at..]
        .iter()
        .position(|&b| !(word_byte(b) || b == b'.'))
        .unwrap_or(text.len() - at);
    let rest = &text[at + len..];
    exception_name(&text[at..at + len])
        && (rest.starts_with(b": ") || rest.starts_with(b"(\"") || rest.starts_with(b"('"))
}

/// Whether the byte at `i` opens a quote: `"`, or `'` after a byte that is not a letter or
/// digit (`model's` holds no quote).
fn opens_quote(text: &[u8], i: usize) -> bool {
    match text[i] {
        b'"' => true,
        b'\'' => i == 0 || !word_byte(text[i - 1]),
        _ => false,
    }
}

/// Whether the byte at `i` closes a quote opened by `q`: `q` again, a `'` only before a byte
/// that is not a letter or digit.
fn closes_quote(text: &[u8], i: usize, q: u8) -> bool {
    text[i] == q && (q != b'\'' || !text.get(i + 1).copied().is_some_and(word_byte))
}

/// `message` without what its quoted data holds (see the module's rule on quotes): the words
/// the software wrote itself, for the word tests (stopping, a failure in words) that decide a
/// failure's fate and the tail rule's choice. A prompt that says "shutting down" does not
/// wind its server down. Borrowed when the message holds no quote.
pub fn own_words(message: &str) -> std::borrow::Cow<'_, str> {
    let text = message.as_bytes();
    if memchr::memchr2(b'"', b'\'', text).is_none() {
        return std::borrow::Cow::Borrowed(message);
    }
    let mut out = Vec::with_capacity(text.len());
    let mut quote: Option<(u8, bool)> = None;
    let mut i = 0;
    while i < text.len() {
        let b = text[i];
        match quote {
            Some((q, data)) => {
                let step = if b == b'\\' { 2 } else { 1 };
                if step == 1 && closes_quote(text, i, q) {
                    quote = None;
                    out.push(b);
                } else if !data {
                    out.extend_from_slice(&text[i..(i + step).min(text.len())]);
                }
                i += step;
                continue;
            }
            None if opens_quote(text, i) => {
                quote = Some((b, !trusted_quote(text, 0, i)));
            }
            None => {}
        }
        out.push(b);
        i += 1;
    }
    match String::from_utf8(out) {
        Ok(s) => std::borrow::Cow::Owned(s),
        Err(e) => std::borrow::Cow::Owned(String::from_utf8_lossy(e.as_bytes()).into_owned()),
    }
}

/// Adds `p` to `out`, with the separator and the space right before it (a pattern may
/// start with them: `\] Engine`, ` NCCL WARN`, `\s\d+/\d+`).
fn push_point(out: &mut Vec<usize>, text: &[u8], message: usize, p: usize) {
    let mut j = p;
    if j > message && space(text[j - 1]) {
        j -= 1;
        out.push(j);
        while j > message && space(text[j - 1]) {
            j -= 1;
        }
    }
    if j > message && separator(text[j - 1]) {
        out.push(j - 1);
    }
    out.push(p);
}

/// Whether a whole word of a lead ends a head: an upper-case level word (`NCCL WARN`), a
/// number or time (`3.026`, `12:06:49.978`: no letter), a symbol (`×`, `!!!`, `✅`: no
/// letter or digit), or a source location (`proxy.cc:1143`).
fn marker_token(token: &[u8]) -> bool {
    if LEVEL_WORDS.contains(&token) {
        return true;
    }
    let letters = token.iter().any(u8::is_ascii_alphabetic);
    if !letters {
        return true;
    }
    let digits = token
        .iter()
        .rev()
        .take_while(|b| b.is_ascii_digit())
        .count();
    digits > 0
        && token.len() > digits + 1
        && token[token.len() - digits - 1] == b':'
        && token[..token.len() - digits - 1].contains(&b'.')
}

/// The anchor points of `text` (a line's display text) whose recognised prefixes end at
/// `bounds` (ascending, the message's start last): see the module's rules.
pub(super) fn points(text: &[u8], bounds: &[usize]) -> Vec<usize> {
    let mut out: Vec<usize> = Vec::with_capacity(8);
    out.push(0);
    for &b in bounds {
        if out.last() != Some(&b) {
            out.push(b);
        }
    }
    let message = bounds.last().copied().unwrap_or(0);
    // The quote being read: its byte, and whether it holds data.
    let mut quote: Option<(u8, bool)> = None;
    // Whether the word being read started at a point (its dotted or path components are
    // points too).
    let mut word_at_point = false;
    let mut i = message;
    while i < text.len() && out.len() < MAX_POINTS {
        let b = text[i];
        if let Some((q, data)) = quote {
            if b == b'\\' {
                i += 2;
                continue;
            }
            if closes_quote(text, i, q) {
                quote = None;
                i += 1;
                continue;
            }
            if data {
                i += 1;
                continue;
            }
        }
        if quote.is_none() && opens_quote(text, i) {
            let trusted = trusted_quote(text, message, i);
            quote = Some((b, !trusted));
            if trusted {
                push_point(&mut out, text, message, i + 1);
            }
            i += 1;
            continue;
        }
        if space(b) {
            word_at_point = false;
        } else {
            let component = word_at_point
                && i > message
                && matches!(text[i - 1], b'.' | b'/' | b'\\' | b'[' | b'(' | b'`')
                && b.is_ascii_alphabetic();
            if component {
                // A pattern may name the component with its separator (`/slurm_script`).
                out.push(i - 1);
            }
            let head = ends_head(text, message, i);
            if (component || head || exception_at(text, i)) && out.last() != Some(&i) {
                push_point(&mut out, text, message, i);
            }
            if head {
                word_at_point = true;
            }
        }
        i += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::points;

    fn starts(line: &str, message: usize) -> Vec<String> {
        points(line.as_bytes(), &[message])
            .into_iter()
            .map(|p| line[p..].chars().take(12).collect())
            .collect()
    }

    #[test]
    fn the_exception_chain_and_labels_are_heads() {
        let line = "RuntimeError: CUDA error: an illegal memory access was encountered";
        let got = starts(line, 0);
        assert!(got.contains(&"CUDA error: ".to_string()), "{got:?}");
        assert!(got.contains(&"an illegal m".to_string()), "{got:?}");
        assert!(!got.iter().any(|s| s.starts_with("illegal")), "{got:?}");
        let got = starts("ray.exceptions.RayTaskError: boom", 0);
        assert!(got.contains(&"RayTaskError".to_string()), "{got:?}");
    }

    #[test]
    fn quoted_data_holds_no_point_but_an_exception_repr_does() {
        let prompt = "Received request: prompt='torch.OutOfMemoryError: CUDA out of memory'";
        let got = starts(prompt, 0);
        assert!(
            !got.iter()
                .any(|s| s.starts_with("torch") || s.starts_with("CUDA")),
            "{got:?}"
        );
        let body = r#"body: {"prompt": "RuntimeError: CUDA error: out of memory"}"#;
        let got = starts(body, 0);
        assert!(
            !got.iter()
                .any(|s| s.starts_with("Runtime") || s.starts_with("CUDA")),
            "{got:?}"
        );
        let repr = "OutOfMemoryError('CUDA out of memory. Tried to allocate";
        assert!(starts(repr, 0).contains(&"CUDA out of m".chars().take(12).collect()));
        let record = r#"{"level":"ERROR","message":"CUDA out of memory"}"#;
        let got = starts(record, 0);
        assert!(got.iter().any(|s| s.starts_with("CUDA out")), "{got:?}");
        assert!(!got.iter().any(|s| s.starts_with("ERROR")), "{got:?}");
    }

    #[test]
    fn own_words_leave_out_quoted_data_only() {
        use super::own_words;
        assert_eq!(
            own_words(
                "Received request cmpl-1: prompt: 'please stop, shutting down now', params: x"
            ),
            "Received request cmpl-1: prompt: '', params: x"
        );
        let record = r#"{"msg":"shutting down","prompt":"killed"}"#;
        // Keys are data too: only the record's own message stays.
        assert_eq!(own_words(record), r#"{"":"shutting down","":""}"#);
        assert_eq!(
            own_words("The model's server is shutting down"),
            "The model's server is shutting down"
        );
        assert!(matches!(
            own_words("no quote"),
            std::borrow::Cow::Borrowed(_)
        ));
    }

    #[test]
    fn a_word_inside_a_sentence_is_no_point() {
        let got = starts("the client wrote CUDA out of memory here", 0);
        assert_eq!(got, vec!["the client w".to_string()]);
        // An apostrophe inside a word opens no quote.
        let got = starts("The model's max seq len: 4096", 0);
        assert!(got.contains(&"4096".to_string()), "{got:?}");
    }
}
