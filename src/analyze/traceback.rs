//! Python tracebacks rebuilt per process, even when many processes write into one file.

use std::collections::HashMap;

use super::line::LineInfo;
use crate::compile::Marker;
use crate::scan::Hit;

/// Frames kept from the start of a traceback.
const HEAD_FRAMES: usize = 1;
/// Frames kept from the end of a traceback (the failing library's).
const TAIL_FRAMES: usize = 4;

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
    },
}

#[derive(Default)]
struct Open {
    head: Vec<String>,
    tail: Vec<String>,
    total: usize,
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

    /// Feeds one hit line of `process` and says whether it ended a traceback.
    pub fn observe(&mut self, process: &str, hit: &Hit, info: &LineInfo) -> Event {
        let m = &hit.matched;
        let p = self.procs.entry(process.to_string()).or_default();
        if m.has(Marker::TracebackStart) {
            if !p.chained {
                p.chain_len = 0;
            }
            p.chained = false;
            p.open = Some(Open::default());
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
                let frame = info.message.trim().to_string();
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
            return Event::None;
        }
        let ends = m.has(Marker::Exception) || !m.signatures.is_empty();
        if ends && !info.message.starts_with([' ', '\t']) {
            if let Some(open) = p.open.take() {
                let mut frames = open.head;
                let omitted = open.total - frames.len() - open.tail.len();
                if omitted > 0 {
                    frames.push(format!("... {omitted} frames omitted ..."));
                }
                frames.extend(open.tail);
                let pos = p.chain_len;
                p.chain_len += 1;
                return Event::Exception {
                    chain_pos: pos,
                    frames,
                };
            }
        }
        Event::None
    }
}
