//! Python tracebacks rebuilt per process, even when many processes write into one file.

use std::collections::{HashMap, VecDeque};

use super::line::{process_key, Level, LineInfo};
use crate::scan::Hit;
use faultline_db::Marker;

/// Frames kept from the start of a traceback.
const HEAD_FRAMES: usize = 1;
/// Frames kept from the end of a traceback (the failing library's).
const TAIL_FRAMES: usize = 4;
/// Longest frame line kept, in bytes.
const FRAME_BYTES: usize = 1024;
/// Longest exception message a traceback keeps (the finding's text holds the whole line).
pub(super) const MESSAGE_BYTES: usize = 4096;
/// Processes whose traceback state is kept; past this, the ones with no open traceback go
/// (all of them when fewer than half would go, so that making room costs each new process
/// a bounded number of entries, however many tracebacks are open).
const MAX_PROCESSES: usize = 4096;
/// How many lines after its last line a traceback counts as being printed (see
/// [`Tracebacks::printing`]).
pub const LIVE_LINES: u64 = 32;

/// The interpreter's traceback opener and chain sentences.
const OPENER: &str = "Traceback (most recent call last):";
const CHAIN_CAUSE: &str = "The above exception was the direct cause of the following exception:";
const CHAIN_CONTEXT: &str = "During handling of the above exception, another exception occurred:";

/// Whether what comes before a structural text in a message leaves it where the interpreter
/// prints it: nothing, or a prefix the line parser did not strip that ends in `:` (`Scheduler
/// hit an exception: `, `TVMError: `, `engine.py:159]`) or a `|`, `]`, `>` separator.
fn at_start(before: &str) -> bool {
    let before = before.trim_end();
    before.is_empty() || before.ends_with([':', '|', ']', '>'])
}

/// Whether `text` stands in `message` where the interpreter prints it: at its start (see
/// [`at_start`]) and ending the line. Quoted inside other text (a request's prompt logged at
/// INFO) it is log text, not the interpreter's.
fn stands_alone(message: &str, text: &str) -> bool {
    message
        .match_indices(text)
        .any(|(at, _)| at_start(&message[..at]) && message[at + text.len()..].trim().is_empty())
}

/// Whether a frame line is one the interpreter printed: `File "...` at its message's start
/// (see [`at_start`]).
fn is_frame(message: &str) -> bool {
    ["File \"", "File \u{201c}"].iter().any(|frame| {
        message
            .match_indices(frame)
            .any(|(at, _)| at_start(&message[..at]))
    })
}

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
    /// The line number of its last line so far.
    last_line: u64,
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

/// The first `max` bytes of `s` (at a character boundary), marked `…` when cut: a copy of
/// at most `max` bytes whatever `s`'s length.
pub(super) fn cut_copy(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_string();
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    let mut out = String::with_capacity(end + '…'.len_utf8());
    out.push_str(&s[..end]);
    out.push('…');
    out
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
    /// The process's last line (blank ones aside) ended a traceback: a chain sentence may
    /// follow.
    after_exception: bool,
}

/// Per-process traceback state.
#[derive(Default)]
pub struct Tracebacks {
    procs: HashMap<String, Process>,
    /// The processes whose traceback had a line lately, with that line (the last
    /// [`LIVE_LINES`] entries, one per run of lines of one process).
    recent: VecDeque<(u64, String)>,
    /// Table entries visited to make room (counted for the tests).
    #[cfg(test)]
    examined: u64,
}

impl Tracebacks {
    /// Whether `process` is in the middle of a traceback.
    pub fn is_open(&self, process: &str) -> bool {
        self.procs.get(process).is_some_and(|p| p.open.is_some())
    }

    /// Table entries visited to make room for new processes so far.
    #[cfg(test)]
    pub fn entries_examined(&self) -> u64 {
        self.examined
    }

    /// Forgets every process's state (a new run starts).
    pub fn clear(&mut self) {
        self.procs.clear();
        self.recent.clear();
    }

    /// Whether a traceback is being printed at line `line`: one is still open and had a line
    /// within the last [`LIVE_LINES`] lines. A run does not start in the middle of it (a
    /// banner or restart line of another process there is log text, not a new launch).
    pub fn printing(&self, line: u64) -> bool {
        self.recent
            .iter()
            .any(|(at, process)| at.saturating_add(LIVE_LINES) >= line && self.is_open(process))
    }

    /// Notes that `process`'s open traceback had line `line`.
    fn touched(&mut self, process: &str, line: u64) {
        if let Some(last) = self.recent.back_mut() {
            if last.1 == process {
                last.0 = line;
                return;
            }
        }
        if self.recent.len() >= LIVE_LINES as usize {
            self.recent.pop_front();
        }
        self.recent.push_back((line, process_key(process)));
    }

    /// Makes room for one more process (see [`MAX_PROCESSES`]).
    fn make_room(&mut self) {
        if self.procs.len() < MAX_PROCESSES {
            return;
        }
        #[cfg(test)]
        {
            self.examined += self.procs.len() as u64;
        }
        self.procs.retain(|_, p| p.open.is_some());
        if self.procs.len() >= MAX_PROCESSES / 2 {
            self.procs.clear();
            self.recent.clear();
        }
    }

    /// The tracebacks still open (no exception line yet), with their frames so far,
    /// whether a logger printed them (see [`Tracebacks::observe`]) and their last line.
    pub fn open_ones(&self) -> impl Iterator<Item = (&str, Vec<String>, bool, u64)> {
        self.procs.iter().filter_map(|(name, p)| {
            let o = p.open.as_ref()?;
            let mut frames = o.head.clone();
            let omitted = o.total - o.head.len() - o.tail.len();
            if omitted > 0 {
                frames.push(format!("... {omitted} frames omitted ..."));
            }
            frames.extend(o.tail.iter().cloned());
            Some((name.as_str(), frames, o.logged, o.last_line))
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
        let message = info.message.as_str();
        // Structure counts where the interpreter prints it, never quoted inside another
        // message; a chain sentence only right after an exception of its process.
        let opener = m.has(Marker::TracebackStart) && stands_alone(message, OPENER);
        let frame = m.has(Marker::Frame) && is_frame(message);
        let chain = ((m.has(Marker::ChainCause) && stands_alone(message, CHAIN_CAUSE))
            || (m.has(Marker::ChainContext) && stands_alone(message, CHAIN_CONTEXT)))
            && self
                .procs
                .get(process)
                .is_some_and(|p| p.open.is_some() || p.after_exception);
        if !(opener || frame || chain) {
            // Only a process with an open traceback has anything to end; an entry of its
            // own would be the default one (no traceback, no chain), so none is made.
            let Some(p) = self.procs.get_mut(process) else {
                return Event::None;
            };
            let event = Self::end_or_continue(p, hit, info);
            if p.open.is_some() {
                self.touched(process, hit.line);
            }
            return event;
        }
        if !self.procs.contains_key(process) {
            self.make_room();
            self.procs.insert(process_key(process), Process::default());
        }
        let Some(p) = self.procs.get_mut(process) else {
            return Event::None;
        };
        p.after_exception = false;
        if chain {
            p.chained = true;
            p.open = None;
            return Event::None;
        }
        if opener {
            if !p.chained {
                p.chain_len = 0;
            }
            p.chained = false;
            p.open = Some(Open {
                logged,
                ..Open::default()
            });
        } else {
            // A fragment may start inside a traceback: its first frame opens one.
            if p.open.is_none() {
                if !p.chained {
                    p.chain_len = 0;
                }
                p.chained = false;
                p.open = Some(Open::default());
            }
            if let Some(open) = &mut p.open {
                open.expect_source = !message.contains("File \"<");
                let frame = cut(message.trim().to_string(), FRAME_BYTES);
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
        if let Some(open) = &mut p.open {
            open.last_line = hit.line;
        }
        self.touched(process, hit.line);
        Event::None
    }

    /// A line of process `p` that neither opens nor continues a traceback's frames: it may
    /// end the open traceback (the exception line), or pass inside it.
    fn end_or_continue(p: &mut Process, hit: &Hit, info: &LineInfo) -> Event {
        let m = &hit.matched;
        let Some(open) = p.open.as_mut() else {
            if !info.message.trim().is_empty() {
                p.after_exception = false;
            }
            return Event::None;
        };
        let message = info.message.as_str();
        let trimmed = message.trim();
        let known = m.has(Marker::Exception) || !m.signatures.is_empty();
        if std::mem::take(&mut open.expect_source) && !known && !trimmed.is_empty() {
            open.last_line = hit.line;
            return Event::None;
        }
        let source_or_caret = message.starts_with([' ', '\t'])
            || trimmed.is_empty()
            || trimmed.bytes().all(|b| matches!(b, b'^' | b'~' | b' '));
        if source_or_caret && !trimmed.is_empty() {
            open.last_line = hit.line;
        }
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
        p.chain_len = p.chain_len.saturating_add(1);
        p.after_exception = true;
        let logged = open.logged;
        let frames = open.frames();
        Event::Exception {
            chain_pos: pos,
            uncaught: !logged && from_entry_point(&frames),
            frames,
        }
    }
}
