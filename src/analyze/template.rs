//! Line templates: a message with the parts that differ between two runs of the same job
//! masked (numbers, hex ids, addresses, paths, pids, ports, times, sizes), so that a line of a
//! failed run can be looked up among the lines of a good run (`--baseline`).
//!
//! The template is not the fold key ([`super::line::mask`]): folding keeps paths and words
//! apart that a baseline lookup treats as the same line.

use std::hash::{Hash, Hasher};

/// The template of a message (the line after its prefix): each run of digits (with its
/// decimal point, as in `2.00`), each hexadecimal id (`0x7f3a`, or a run of at least 8 hex
/// digits holding a digit, as in a git hash or an actor id) becomes `<n>`; each path (a word
/// holding `/` that starts with `/`, `./`, `../` or `~/`, or `X:\`) becomes `<path>`.
///
/// ```
/// use faultline::line_template;
/// assert_eq!(
///     line_template("Saved model to /data/run-7/step_20.pt in 2.70s (pid 626895)"),
///     line_template("Saved model to /scratch/run-9/step_40.pt in 12.1s (pid 1234)"),
/// );
/// assert_eq!(line_template("port 8000 at 0x7f3a"), "port <n> at <n>");
/// ```
pub fn line_template(message: &str) -> String {
    let b = message.as_bytes();
    let mut out = String::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let word_start = i == 0 || !is_word(b[i - 1]);
        if word_start && starts_path(&b[i..]) {
            i += b[i..]
                .iter()
                .position(|&c| {
                    c.is_ascii_whitespace() || matches!(c, b'\'' | b'"' | b',' | b')' | b']')
                })
                .unwrap_or(b.len() - i);
            out.push_str("<path>");
            continue;
        }
        if word_start {
            let hex = hex_id_len(&b[i..]);
            if hex > 0 {
                out.push_str("<n>");
                i += hex;
                continue;
            }
        }
        if b[i].is_ascii_digit() {
            while i < b.len()
                && (b[i].is_ascii_digit()
                    || (b[i] == b'.' && b.get(i + 1).is_some_and(u8::is_ascii_digit)))
            {
                i += 1;
            }
            out.push_str("<n>");
            continue;
        }
        let ch_len = message[i..].chars().next().map_or(1, char::len_utf8);
        out.push_str(&message[i..i + ch_len]);
        i += ch_len;
    }
    out
}

/// The 64-bit hash of a message's template, as a baseline keeps it.
pub fn template_hash(message: &str) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    line_template(message).hash(&mut h);
    h.finish()
}

fn is_word(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

fn starts_path(s: &[u8]) -> bool {
    match s {
        [b'/', c, ..] => !c.is_ascii_whitespace(),
        [b'.', b'/', ..] | [b'.', b'.', b'/', ..] | [b'~', b'/', ..] => true,
        [d, b':', b'\\', ..] => d.is_ascii_alphabetic(),
        _ => false,
    }
}

/// The length of a hexadecimal id at the start of `s`: `0x` and hex digits, or at least 8 hex
/// digits holding at least one decimal digit that end the word; 0 when there is none.
fn hex_id_len(s: &[u8]) -> usize {
    if let [b'0', b'x' | b'X', rest @ ..] = s {
        let n = rest.iter().take_while(|c| c.is_ascii_hexdigit()).count();
        if n > 0 {
            return n + 2;
        }
    }
    let n = s.iter().take_while(|c| c.is_ascii_hexdigit()).count();
    let ends_word = s.get(n).is_none_or(|&c| !is_word(c));
    if n >= 8 && ends_word && s[..n].iter().any(u8::is_ascii_digit) {
        n
    } else {
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masks_what_differs_between_two_runs() {
        for (a, b) in [
            (
                "The actor d5a12869ca846683c2e9884001000000 is unavailable: RpcError: Socket closed rpc_code: 14",
                "The actor 0af3e2c9ca846683c2e9884001000000 is unavailable: RpcError: Socket closed rpc_code: 14",
            ),
            (
                "Connection refused 10.0.0.1:29500 after 30.5s",
                "Connection refused 10.0.0.7:29501 after 2s",
            ),
            (
                "Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.19 GiB",
                "Tried to allocate 512.00 GiB. GPU 3 has a total capacity of 79.19 GiB",
            ),
            (
                "FileNotFoundError: [Errno 2] No such file or directory: '/data/a/config.json'",
                "FileNotFoundError: [Errno 2] No such file or directory: '/models/b/config.json'",
            ),
            ("at 07:06:46,070 pid=626895", "at 11:00:01,999 pid=7"),
        ] {
            assert_eq!(line_template(a), line_template(b), "{a} / {b}");
            assert_eq!(template_hash(a), template_hash(b));
        }
    }

    #[test]
    fn keeps_the_words() {
        for (a, b) in [
            ("CUDA out of memory", "CUDA error: out of memory"),
            ("rank 1 failed", "rank 1 timed out"),
            ("cafebabe", "deadbeef"),
        ] {
            assert_ne!(line_template(a), line_template(b), "{a} / {b}");
        }
        assert_eq!(line_template("model_v2"), "model_v<n>");
        assert_eq!(line_template("a/b ratio"), "a/b ratio");
        assert_eq!(line_template("see ./logs/x.log, then"), "see <path>, then");
        assert_eq!(line_template("C:\\Users\\me\\x.py"), "<path>");
        assert_eq!(line_template("sha 0123abcd9"), "sha <n>");
    }
}
