//! What the command line writes: standard output that may close under it (`| head`), one
//! escaped line per message on standard error, an error's message with the command line's
//! hint, and the exit statuses.

use std::io::{self, IsTerminal, Write};

use faultline::{ArchiveRemedy, DbError, Error};

/// Exit status: at least one input diagnosed.
pub const EXIT_DIAGNOSED: u8 = 0;

/// Exit status: an error happened (bad signatures, unreadable or corrupt input).
pub const EXIT_ERROR: u8 = 2;

/// Standard output was closed by its reader (`| head`).
pub struct Closed;

/// Writes to stdout; `Err(Closed)` when the reader has gone. Any other write error is
/// reported and ends the run with status 2.
pub fn try_out(text: &str) -> Result<(), Closed> {
    try_write(&mut |w| w.write_all(text.as_bytes()))
}

/// [`try_out`] for output that `write` produces piece by piece, through a buffer.
pub fn try_write(write: &mut dyn FnMut(&mut dyn Write) -> io::Result<()>) -> Result<(), Closed> {
    let mut stdout = io::BufWriter::with_capacity(64 << 10, io::stdout().lock());
    if let Err(e) = write(&mut stdout).and_then(|_| stdout.flush()) {
        if e.kind() == io::ErrorKind::BrokenPipe {
            return Err(Closed);
        }
        note(&format!("faultline: writing output: {e}"));
        std::process::exit(i32::from(EXIT_ERROR));
    }
    Ok(())
}

/// Writes to stdout; a closed stdout (`| head`) ends the run quietly with status 0.
pub fn out(text: &str) {
    if try_out(text).is_err() {
        std::process::exit(0);
    }
}

/// [`out`] for a human-readable table or account whose cells come from outside (titles,
/// paths, literals, log lines): every character a terminal would obey is shown escaped.
pub fn out_human(text: &str) {
    out(&faultline::terminal_safe_lines(text));
}

/// Writes one line to stderr, every character a terminal would obey shown escaped (paths and
/// messages carry bytes from outside: a newline cannot start a line of its own). A closed or
/// failing stderr (`2>&1 | head -1`) is ignored: the run goes on and its exit status is
/// unchanged.
pub fn note(line: &str) {
    let line = faultline::terminal_safe(line);
    let mut stderr = io::stderr().lock();
    let _ = stderr
        .write_all(line.as_bytes())
        .and_then(|_| stderr.write_all(b"\n"));
}

/// Prints an error: its message, with what to do where the command line has a command for
/// it, then every further problem of a signature directory or a corpus.
pub fn error_line(e: &Error) {
    match e {
        Error::Db(DbError::Archive { reason, .. }) => match reason.remedy() {
            Some(ArchiveRemedy::Recompile) => note(&format!("faultline: {e}; {RECOMPILE}")),
            Some(ArchiveRemedy::UpgradeOrRecompile) => {
                note(&format!("faultline: {e}; upgrade faultline or {RECOMPILE}"))
            }
            None => note(&format!("faultline: {e}")),
        },
        _ => note(&format!("faultline: {e}")),
    }
    for p in e.problems().iter().skip(1) {
        note(&format!("faultline: {p}"));
    }
}

/// What the command line says to do about an archive that a new one would replace.
const RECOMPILE: &str = "recompile with `faultline db compile`";

/// The exit status of a command, printing its error.
pub fn status(result: Result<u8, Error>) -> u8 {
    result.unwrap_or_else(|e| {
        error_line(&e);
        EXIT_ERROR
    })
}

/// grep's rule for a set of inputs: 2 if any failed, else 0 if any was diagnosed, else 1
/// ([`faultline::Bucket`]'s rule).
pub fn sweep_status(errored: bool, diagnosed: bool) -> u8 {
    faultline::Bucket::of(errored, diagnosed).exit_status()
}

/// Whether `scan --color WHEN` colours: `auto` when standard output is a terminal and
/// `NO_COLOR` is unset or empty (no-color.org).
pub fn use_color(when: crate::args::ColorWhen) -> bool {
    use crate::args::ColorWhen;
    match when {
        ColorWhen::Always => true,
        ColorWhen::Never => false,
        ColorWhen::Auto => {
            io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
        }
    }
}
