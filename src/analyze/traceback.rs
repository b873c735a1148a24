//! Python tracebacks rebuilt per process, even when many processes write into one file.

use std::collections::HashMap;

use super::line::{process_key, Level, LineInfo};
use crate::scan::Hit;
use faultline_db::Marker;

/// Frames kept from the start of a traceback.
const HEAD_FRAMES: usize = 1;
/// Frames kept from the end of a traceback (the failing library's).
const TAIL_FRAMES: usize = 4;
/// Longest frame line kept, in bytes.
const FRAME_BYTES: usize = 1024;
/// Processes whose traceback state is kept; past this, the ones with no open traceback go.
const MAX_PROCESSES: usize = 4096;

/// What a hit line meant for its process's traceback.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Event {
    None,
    /// The line ends a traceback: it is the exception line.
    Exception {
        /// Position in the exception chain: 0 for the innermost (printed first).
        chain_pos: u32,
        /// The traceback's frames (trimmed to head and tail, with the omitted count noted).
        frames: Vec<String>,
        /// The interpreter printed it as it died: no ERROR record introduced it and its
        /// frames start at the program's entry point.
        uncaught: bool,
    },
}

/// Whether a traceback's frames start at the program's entry point (`<module>`, runpy's
/// `_run_module_as_main`): an exception that reached it was caught by nothing.
pub fn from_entry_point(frames: &[String]) -> bool {
    frames
        .first()
        .is_some_and(|f| f.ends_with(", in <module>") || f.ends_with(", in _run_module_as_main"))
}

#[derive(Default)]
struct Open {
    head: Vec<String>,
    tail: Vec<String>,
    total: usize,
    /// The last line was a frame with a source line to follow (not `File "<frozen ...>"`):
    /// the next line is that source line, indented or not (pastes lose indentation).
    expect_source: bool,
    /// It came right after an ERROR line of its process: a logger printing a caught
    /// exception with its record (`logger.exception`), not the interpreter dying of it.
    logged: bool,
}

impl Open {
    fn frames(self) -> Vec<String> {
        let mut frames = self.head;
        let omitted = self.total - frames.len() - self.tail.len();
        if omitted > 0 {
            frames.push(format!("... {omitted} frames omitted ..."));
        }
        frames.extend(self.tail);
        frames
    }
}

fn cut(mut s: String, max: usize) -> String {
    if s.len() > max {
        let mut end = max;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        s.truncate(end);
        s.push('…');
    }
    s
}

#[derive(Default)]
struct Process {
    open: Option<Open>,
    /// A chain line was seen: the next traceback wraps the previous exception.
    chained: bool,
    /// Exceptions so far in the current chain.
    chain_len: u32,
}

/// Per-process traceback state.
#[derive(Default)]
pub struct Tracebacks {
    procs: HashMap<String, Process>,
}

impl Tracebacks {
    /// Whether `process` is in the middle of a traceback.
    pub fn is_open(&self, process: &str) -> bool {
        self.procs.get(process).is_some_and(|p| p.open.is_some())
    }

    /// Forgets every process's state (a new run starts).
    pub fn clear(&mut self) {
        self.procs.clear();
    }

    /// The tracebacks still open (no exception line yet), with their frames so far and
    /// whether a logger printed them (see [`Tracebacks::observe`]).
    pub fn open_ones(&self) -> impl Iterator<Item = (&str, Vec<String>, bool)> {
        self.procs.iter().filter_map(|(name, p)| {
            let o = p.open.as_ref()?;
            let mut frames = o.head.clone();
            let omitted = o.total - o.head.len() - o.tail.len();
            if omitted > 0 {
                frames.push(format!("... {omitted} frames omitted ..."));
            }
            frames.extend(o.tail.iter().cloned());
            Some((name.as_str(), frames, o.logged))
        })
    }

    /// Feeds one line of `process` (a hit, or a context line with nothing matched) and says
    /// whether it ended a traceback. A traceback ends at the next unindented line of its
    /// process after its frames and their source and caret lines, whatever that line says
    /// (an exception class or none); an interleaved INFO/WARNING log line that is not an
    /// exception does not end it. `logged`: the line right before was an ERROR line of the
    /// same process (a traceback starting here belongs to that log record).
    pub fn observe(&mut self, process: &str, hit: &Hit, info: &LineInfo, logged: bool) -> Event {
        let m = &hit.matched;
        let opens = m.has(Marker::TracebackStart)
            || m.has(Marker::ChainCause)
            || m.has(Marker::ChainContext)
            || m.has(Marker::Frame);
        if !opens {
            // Only a process with an open traceback has anything to end; an entry of its
            // own would be the default one (no traceback, no chain), so none is made.
            let Some(p) = self.procs.get_mut(process) else {
                return Event::None;
            };
            return Self::end_or_continue(p, hit, info);
        }
        if !self.procs.contains_key(process) {
            if self.procs.len() >= MAX_PROCESSES {
                self.procs.retain(|_, p| p.open.is_some());
                if self.procs.len() >= MAX_PROCESSES {
                    self.procs.clear();
                }
            }
            self.procs.insert(process_key(process), Process::default());
        }
        let Some(p) = self.procs.get_mut(process) else {
            return Event::None;
        };
        if m.has(Marker::TracebackStart) {
            if !p.chained {
                p.chain_len = 0;
            }
            p.chained = false;
            p.open = Some(Open {
                logged,
                ..Open::default()
            });
            return Event::None;
        }
        if m.has(Marker::ChainCause) || m.has(Marker::ChainContext) {
            p.chained = true;
            p.open = None;
            return Event::None;
        }
        if m.has(Marker::Frame) {
            // A fragment may start inside a traceback: its first frame opens one.
            if p.open.is_none() {
                if !p.chained {
                    p.chain_len = 0;
                }
                p.chained = false;
                p.open = Some(Open::default());
            }
            if let Some(open) = &mut p.open {
                open.expect_source = !info.message.contains("File \"<");
                let frame = cut(info.message.trim().to_string(), FRAME_BYTES);
                open.total += 1;
                if open.head.len() < HEAD_FRAMES {
                    open.head.push(frame);
                } else {
                    open.tail.push(frame);
                    if open.tail.len() > TAIL_FRAMES {
                        open.tail.remove(0);
                    }
                }
            }
        }
        Event::None
    }

    /// A line of process `p` that neither opens nor continues a traceback's frames: it may
    /// end the open traceback (the exception line), or pass inside it.
    fn end_or_continue(p: &mut Process, hit: &Hit, info: &LineInfo) -> Event {
        let m = &hit.matched;
        let Some(open) = p.open.as_mut() else {
            return Event::None;
        };
        let message = info.message.as_str();
        let trimmed = message.trim();
        let known = m.has(Marker::Exception) || !m.signatures.is_empty();
        if std::mem::take(&mut open.expect_source) && !known && !trimmed.is_empty() {
            return Event::None;
        }
        let source_or_caret = message.starts_with([' ', '\t'])
            || trimmed.is_empty()
            || trimmed.bytes().all(|b| matches!(b, b'^' | b'~' | b' '));
        let interleaved = !known
            && matches!(
                info.level,
                Some(Level::Debug | Level::Info | Level::Warning)
            );
        if source_or_caret || interleaved || (open.total == 0 && !known) {
            return Event::None;
        }
        let Some(open) = p.open.take() else {
            return Event::None;
        };
        let pos = p.chain_len;
        p.chain_len += 1;
        let logged = open.logged;
        let frames = open.frames();
        Event::Exception {
            chain_pos: pos,
            uncaught: !logged && from_entry_point(&frames),
            frames,
        }
    }
}
