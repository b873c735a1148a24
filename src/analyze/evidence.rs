//! Run evidence: what the start, progress, completion and stop lines (signatures of the
//! evidence roles) say about each run, and each run's outcome judged from it.
//!
//! A run's outcome is its last decisive evidence: `failed` when it has a fatal finding (the
//! caller knows), else `completed` or `stopped` by whichever of the two came last, else
//! `running` when it made progress, else `unknown`.

use crate::report::{RunOutcome, RunState};

/// What one run's evidence said: the line of its last progress, completion and stop line.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct RunEvidence {
    pub progress: Option<u64>,
    pub completed: Option<u64>,
    pub stopped: Option<u64>,
}

impl RunEvidence {
    /// Whether the run said it ended (completed or was asked to stop).
    pub fn ended(&self) -> bool {
        self.completed.is_some() || self.stopped.is_some()
    }

    /// The run's outcome; `fatal` is the line of its first-ranked fatal finding, if any.
    pub fn outcome(&self, run: u32, fatal: Option<u64>) -> RunOutcome {
        let (outcome, line) = if fatal.is_some() {
            (RunState::Failed, fatal)
        } else {
            match (self.completed, self.stopped) {
                (Some(c), Some(s)) if s > c => (RunState::Stopped, Some(s)),
                (Some(c), _) => (RunState::Completed, Some(c)),
                (None, Some(s)) => (RunState::Stopped, Some(s)),
                (None, None) => match self.progress {
                    Some(p) => (RunState::Running, Some(p)),
                    None => (RunState::Unknown, None),
                },
            }
        };
        RunOutcome { run, outcome, line }
    }
}

/// The evidence of every run so far, and the start banners of the current one.
#[derive(Debug, Default)]
pub(crate) struct Evidence {
    /// Runs before the current one, in order.
    done: Vec<RunEvidence>,
    /// The current run's.
    pub current: RunEvidence,
    /// The start signatures seen in the current run.
    starts: Vec<u32>,
}

impl Evidence {
    /// Whether a start line of signature `sig` begins a new run. A restart (torch elastic's
    /// `restart_count=N`) always does, once the run has lines; so does a banner of a kind this
    /// run already showed. The first banner of a run starts a new one only when the lines
    /// before it ended a run (`ended`: it failed, completed or was stopped): the lines before a
    /// launch's banner (the shell command, an environment dump) belong to that launch.
    pub fn starts_run(&self, sig: u32, restart: bool, has_lines: bool, ended: bool) -> bool {
        if !has_lines {
            return false;
        }
        if restart || self.starts.contains(&sig) {
            return true;
        }
        self.starts.is_empty() && (ended || self.current.ended())
    }

    /// Records a start banner of the current run.
    pub fn start(&mut self, sig: u32) {
        if !self.starts.contains(&sig) {
            self.starts.push(sig);
        }
    }

    /// Closes the current run and opens the next.
    pub fn new_run(&mut self) {
        self.done.push(std::mem::take(&mut self.current));
        self.starts.clear();
    }

    /// Makes the run before the current one current again (the current one held nothing).
    pub fn reopen_last(&mut self) {
        if let Some(last) = self.done.pop() {
            self.current = last;
        }
    }

    /// Every run's evidence, the current one last.
    pub fn runs(&self) -> impl Iterator<Item = &RunEvidence> {
        self.done.iter().chain(std::iter::once(&self.current))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outcome_is_the_last_decisive_evidence() {
        let mut e = RunEvidence::default();
        assert_eq!(e.outcome(1, None).outcome, RunState::Unknown);
        assert_eq!(e.outcome(1, None).line, None);
        e.progress = Some(10);
        assert_eq!(e.outcome(1, None).outcome, RunState::Running);
        e.completed = Some(20);
        assert_eq!(
            e.outcome(1, None),
            RunOutcome {
                run: 1,
                outcome: RunState::Completed,
                line: Some(20)
            }
        );
        e.stopped = Some(30);
        assert_eq!(e.outcome(1, None).outcome, RunState::Stopped);
        e.stopped = Some(5);
        assert_eq!(e.outcome(1, None).outcome, RunState::Completed);
        assert_eq!(
            e.outcome(2, Some(7)),
            RunOutcome {
                run: 2,
                outcome: RunState::Failed,
                line: Some(7)
            }
        );
    }

    #[test]
    fn banners_start_runs_only_after_a_run_ended_or_when_seen_again() {
        let mut e = Evidence::default();
        // The first banner after a preamble: the same run.
        assert!(!e.starts_run(3, false, true, false));
        e.start(3);
        // Another kind of banner of the same launch: the same run.
        assert!(!e.starts_run(4, false, true, false));
        e.start(4);
        // The first kind again: a second launch.
        assert!(e.starts_run(3, false, true, false));
        e.new_run();
        assert_eq!(e.runs().count(), 2);
        // The first banner after a failed run, or one that completed: a new run.
        assert!(e.starts_run(4, false, true, true));
        e.current.completed = Some(9);
        assert!(e.starts_run(4, false, true, false));
        // A restart always; nothing before the first line.
        let fresh = Evidence::default();
        assert!(fresh.starts_run(1, true, true, false));
        assert!(!fresh.starts_run(1, true, false, true));
    }
}
