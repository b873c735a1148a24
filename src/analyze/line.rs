//! The structure of a log line: launcher prefixes (process tags, levels, timestamps, source
//! locations) stripped from the front, so that ranking and folding see the message itself.

mod anchor;
mod rules;

use rules::{match_rule, rules_for, Groups, Rule};

use crate::sanitize::display_text;
use faultline_db::{Database, Marker};

pub use anchor::own_words;

/// A log level, as far as the prefix tells.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    /// DEBUG and glog/abseil `D` lines.
    Debug,
    /// INFO and glog `I` lines.
    Info,
    /// WARNING/WARN and glog `W` lines.
    Warning,
    /// ERROR and glog `E` lines.
    Error,
    /// CRITICAL/FATAL and glog `F` lines.
    Critical,
}

/// What the prefixes of a line said.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LineInfo {
    /// The process tag, e.g. `Worker_TP7 pid=207086` or `rank3`.
    pub process: Option<String>,
    /// The log level the prefix named, if any.
    pub level: Option<Level>,
    /// Milliseconds since the start of the year (years are ignored: many formats omit them).
    pub timestamp: Option<i64>,
    /// The timestamp as the line prints it, e.g. `02-20 21:35:48` or `2025-01-01T12:00:00.5Z`.
    pub timestamp_text: Option<String>,
    /// The source location the logger printed, e.g. `core.py:708`.
    pub source: Option<String>,
    /// The message: the line after its prefixes, ANSI codes and progress-bar rewrites.
    pub message: String,
}

fn level_of(word: &[u8]) -> Option<Level> {
    Some(match word {
        b"DEBUG" | b"D" => Level::Debug,
        b"INFO" | b"I" => Level::Info,
        b"WARNING" | b"WARN" | b"W" => Level::Warning,
        b"ERROR" | b"E" => Level::Error,
        b"CRITICAL" | b"FATAL" | b"F" => Level::Critical,
        _ => return None,
    })
}

fn num(bytes: &[u8]) -> i64 {
    bytes
        .iter()
        .take(9)
        .fold(0i64, |n, &b| n * 10 + i64::from(b.wrapping_sub(b'0') % 10))
}

/// Month, day, hour, minute, second and fraction digits → milliseconds in the year.
fn timestamp(parts: [&[u8]; 6]) -> i64 {
    let frac = parts[5];
    let ms = if frac.is_empty() {
        0
    } else {
        let mut digits = frac.iter().take(3).copied().collect::<Vec<u8>>();
        while digits.len() < 3 {
            digits.push(b'0');
        }
        num(&digits)
    };
    ((((num(parts[0]) * 32 + num(parts[1])) * 24 + num(parts[2])) * 60 + num(parts[3])) * 60
        + num(parts[4]))
        * 1000
        + ms
}

fn apply(rule: Rule, groups: &Groups, text: &[u8], info: &mut LineInfo) {
    let span = |i: usize| groups.get(i).copied().flatten();
    let g = |i: usize| -> &[u8] { span(i).map_or(&[][..], |(s, e)| &text[s..e]) };
    // The printed timestamp: from its first group (or the year before it) to its last.
    let stamp = |first: usize, last: usize, year: bool| -> Option<String> {
        let start = span(first)?.0;
        let end = (first..=last).filter_map(span).map(|s| s.1).max()?;
        let start = if year && start >= 5 { start - 5 } else { start };
        let mut end = end;
        if matches!(text.get(end), Some(b'Z')) {
            end += 1;
        }
        Some(String::from_utf8_lossy(&text[start..end]).into_owned())
    };
    let s = |i: usize| String::from_utf8_lossy(g(i)).into_owned();
    match rule {
        Rule::Compose | Rule::Paren | Rule::Rank | Rule::Task => {
            if info.process.is_none() {
                info.process = process_of(rule, g(0));
            }
        }
        Rule::Vllm => {
            info.level = level_of(g(1)).or(info.level);
            info.timestamp = Some(timestamp([g(2), g(3), g(4), g(5), g(6), g(7)]));
            info.timestamp_text = stamp(2, 7, false);
            info.source = Some(s(8));
        }
        Rule::RayCore => {
            info.timestamp = Some(timestamp([g(1), g(2), g(3), g(4), g(5), g(6)]));
            info.timestamp_text = stamp(1, 6, true);
            info.level = level_of(g(7)).or(info.level);
        }
        Rule::Sglang => {
            info.timestamp = Some(timestamp([g(1), g(2), g(3), g(4), g(5), g(6)]));
            info.timestamp_text = stamp(1, 6, true);
            let tag = s(7).trim().to_string();
            if !tag.is_empty() {
                info.process.get_or_insert(tag);
            }
        }
        Rule::PyLogging => {
            info.timestamp = Some(timestamp([g(1), g(2), g(3), g(4), g(5), g(6)]));
            info.timestamp_text = stamp(1, 6, true);
            info.level = level_of(g(8)).or(info.level);
        }
        Rule::Iso => {
            info.timestamp = Some(timestamp([g(1), g(2), g(3), g(4), g(5), g(6)]));
            info.timestamp_text = stamp(1, 6, true);
        }
        Rule::TensorRt => {
            info.timestamp = Some(timestamp([g(1), g(2), g(3), g(4), g(5), &[]]));
            info.timestamp_text = stamp(1, 5, false);
            // TensorRT's `V` (verbose) is below INFO.
            info.level = match g(6) {
                b"V" => Some(Level::Debug),
                l => level_of(l).or(info.level),
            };
        }
        Rule::Glog => {
            info.level = level_of(g(1)).or(info.level);
            info.timestamp = Some(timestamp([g(2), g(3), g(4), g(5), g(6), g(7)]));
            // From right after the level letter: the year, when glog printed one, is there.
            info.timestamp_text = span(1).and_then(|(_, date)| {
                let end = (2..=7).filter_map(span).map(|s| s.1).max()?;
                Some(String::from_utf8_lossy(&text[date..end]).into_owned())
            });
            info.source = Some(s(8));
        }
        Rule::Level => {
            info.level = level_of(g(1)).or(info.level);
        }
    }
}

/// The process a prefix names, read off its whole match (what group 1 of its rule holds);
/// `None` for rules that name none. Sglang's tag needs its capture and is not handled here.
fn process_of(rule: Rule, m: &[u8]) -> Option<String> {
    let name = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    match rule {
        Rule::Compose => {
            let end = m
                .iter()
                .position(|b| b.is_ascii_whitespace() || *b == b'|')?;
            Some(name(&m[..end]))
        }
        Rule::Task => Some(format!(
            "task {}",
            name(&m[..m.iter().position(|&b| b == b':')?])
        )),
        Rule::Paren => Some(name(&m[1..memchr::memrchr(b')', m)?])),
        Rule::Rank => Some(name(&m[1..memchr::memchr(b']', m)?])),
        _ => None,
    }
}

/// Parses the prefixes of a raw line (without its terminator).
pub fn parse_line(raw: &[u8]) -> LineInfo {
    let text = display_text(raw);
    let (mut info, pos) = prefixes(&text, false, None);
    info.message = lossy(&text[pos..]);
    info
}

/// A line as the anchor rule reads it (see `line/anchor.rs`): what a terminal showed of it
/// and, when a lone carriage return hid part of it, each part it hid, each with its anchor
/// points.
pub(super) struct Anchored {
    /// Per view: its text, where its message starts, and its anchor points.
    views: Vec<(Vec<u8>, usize, Vec<usize>)>,
}

impl Anchored {
    /// Reads `raw` (a line without its terminator).
    pub(super) fn new(raw: &[u8]) -> Anchored {
        let mut views = Vec::with_capacity(1);
        let mut view = |part: &[u8]| {
            let text = display_text(part).into_owned();
            let mut bounds = Vec::with_capacity(4);
            let (_, message) = prefixes(&text, false, Some(&mut bounds));
            bounds.push(message);
            let points = anchor::points(&text, &bounds);
            views.push((text, message, points));
        };
        view(raw);
        if memchr::memchr(b'\r', raw).is_some() {
            for part in raw.split(|&b| b == b'\r').filter(|p| !p.is_empty()) {
                view(part);
            }
        }
        Anchored { views }
    }

    /// Whether signature `sig` of `db` matches from an anchor point of one of the views.
    pub(super) fn matches(&self, db: &Database, sig: u32) -> bool {
        self.views
            .iter()
            .any(|(text, message, points)| db.matches_from(sig, text, *message, points))
    }

    /// Whether `marker` is on the line at an anchor point of one of the views.
    pub(super) fn has_marker(&self, marker: Marker) -> bool {
        self.views.iter().any(|(text, message, points)| {
            Database::marker_matches_from(marker, text, *message, points)
        })
    }
}

/// `bytes` as text, invalid UTF-8 replaced (as `String::from_utf8_lossy`), through the
/// standard library's word-at-a-time validation when the bytes are valid, which they nearly
/// always are (the lossy decoder goes byte by byte: 12% of a scan of a log with long lines).
pub fn lossy(bytes: &[u8]) -> String {
    match std::str::from_utf8(bytes) {
        Ok(s) => s.to_owned(),
        Err(_) => String::from_utf8_lossy(bytes).into_owned(),
    }
}

/// The process tag of a raw line, without building its message: the prefixes are read only
/// as far as the first one that names a process (later ones cannot change it).
pub fn process(raw: &[u8]) -> Option<String> {
    prefixes(&display_text(raw), true, None).0.process
}

/// Strips the prefixes of a display text: what they said, and where the message starts.
/// With `process_only`, stops once the process is known; `bounds` gets the end of each
/// prefix.
fn prefixes(
    text: &[u8],
    process_only: bool,
    mut bounds: Option<&mut Vec<usize>>,
) -> (LineInfo, usize) {
    let mut info = LineInfo::default();
    let mut pos = 0;
    'outer: for round in 0..8 {
        if process_only && info.process.is_some() {
            break;
        }
        let Some(&first) = text.get(pos) else { break };
        for rule in rules_for(first) {
            let skip = match rule {
                // Only at the very start.
                Rule::Task => round > 0,
                // A compose tag's `|` is near the start.
                Rule::Compose => {
                    let rest = &text[pos..];
                    memchr::memchr(b'|', &rest[..rest.len().min(96)]).is_none()
                }
                _ => false,
            };
            if skip {
                continue;
            }
            let Some((end, groups)) = match_rule(rule, &text[pos..]) else {
                continue;
            };
            let prefix = &text[pos..pos + end];
            if process_only && rule != Rule::Sglang {
                // Only the rules that name a process matter, and the match alone names it.
                info.process = process_of(rule, prefix);
            } else {
                apply(rule, &groups, prefix, &mut info);
            }
            pos += end;
            if let Some(b) = bounds.as_deref_mut() {
                b.push(pos);
            }
            continue 'outer;
        }
        break;
    }
    (info, pos)
}

/// The folding key of a message: digit runs and hex numbers masked, so that the same message
/// from many ranks, pids and repeats folds into one.
pub fn fold_key(message: &str) -> String {
    let b = message.as_bytes();
    let mut out = String::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'0' && b.get(i + 1) == Some(&b'x') {
            let mut j = i + 2;
            while j < b.len() && b[j].is_ascii_hexdigit() {
                j += 1;
            }
            out.push('#');
            i = j;
        } else if b[i].is_ascii_digit() {
            while i < b.len() && b[i].is_ascii_digit() {
                i += 1;
            }
            out.push('#');
        } else {
            let ch_len = message[i..].chars().next().map_or(1, char::len_utf8);
            out.push_str(&message[i..i + ch_len]);
            i += ch_len;
        }
    }
    out
}

/// A process name as a map key or a kept copy, in a buffer of its own even when empty (a
/// line that names no process). An empty `String` points at a dangling address, and glibc's
/// AVX-512 `memcmp`, which every string comparison calls, loads its operands under a mask even
/// for zero bytes: from a dangling address that takes a fault-suppression assist, which costs
/// a scan of a log whose lines mostly name no process about 12% of its time.
pub(super) fn process_key(name: &str) -> String {
    let mut key = String::with_capacity(name.len().max(1));
    key.push_str(name);
    key
}

#[cfg(test)]
mod tests;
