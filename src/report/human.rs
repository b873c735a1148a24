//! The human view: the root cause first, then other causes, the symptoms it explains, and a
//! line for every class of lines not shown.

use std::fmt::Write;

use super::{Finding, FindingRole, FirstFailure, JobInput, Report, TimeFrom};
use crate::sanitize::display_text;
use crate::sanitize::terminal_safe as safe;

/// Longest text shown for one line; the rest is counted, not dropped silently.
const SHOW_BYTES: usize = 600;

/// A log line as shown: colour sequences dropped, what a terminal showed after the last lone
/// carriage return first, then the part it hid (a match there is never hidden), every byte a
/// terminal would obey escaped, each part cut at [`SHOW_BYTES`].
fn shown(text: &str, truncated: bool) -> String {
    let (hidden, visible) = match text.rfind('\r') {
        Some(i) => (&text[..i], &text[i + 1..]),
        None => ("", text),
    };
    let mut out = cut(&String::from_utf8_lossy(&display_text(visible.as_bytes())));
    if !hidden.trim().is_empty() {
        // Colour sequences dropped frame by frame; the frames' carriage returns are kept
        // (and shown escaped).
        let frames: Vec<String> = hidden
            .split('\r')
            .map(|frame| String::from_utf8_lossy(&display_text(frame.as_bytes())).into_owned())
            .collect();
        out.push_str("  [before a carriage return, hidden on a terminal: ");
        out.push_str(&cut(&frames.join("\r")));
        out.push(']');
    }
    if truncated {
        out.push_str(" [line cut at the line-length cap]");
    }
    out
}

/// `text` made safe for a terminal and cut at [`SHOW_BYTES`]; the rest is counted.
fn cut(text: &str) -> String {
    let clean = safe(text);
    if clean.len() <= SHOW_BYTES {
        return clean.into_owned();
    }
    let mut cut = SHOW_BYTES;
    while !clean.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("{}… ({} more bytes)", &clean[..cut], clean.len() - cut)
}

fn n(v: u64) -> String {
    let s = v.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn processes(f: &Finding) -> String {
    let total = (f.process_count as usize).max(f.processes.len());
    match f.processes.len() {
        0 => String::new(),
        1 if total <= 1 => format!(" · {}", safe(&f.processes[0])),
        k if k <= 4 && total == k => format!(" · {}", safe(&f.processes.join(", "))),
        _ => format!(
            " · {}{} … ({total} processes)",
            safe(&f.processes[0]),
            f.processes
                .get(1)
                .map(|p| format!(", {}", safe(p)))
                .unwrap_or_default()
        ),
    }
}

fn occurrences(f: &Finding) -> String {
    if f.count > 1 && f.input.is_some() {
        // Folded over a job's inputs: its other lines are in other inputs.
        format!("line {} ({} lines)", n(f.line), n(f.count))
    } else if f.count > 1 {
        format!(
            "line {} ({} lines, last at {})",
            n(f.line),
            n(f.count),
            n(f.last_line)
        )
    } else {
        format!("line {}", n(f.line))
    }
}

/// ANSI bold red, bold green, and back to plain.
const RED: &str = "\x1b[1;31m";
const GREEN: &str = "\x1b[1;32m";
const PLAIN: &str = "\x1b[0m";

/// A finding in full: `title_color` (an ANSI sequence, empty for none) colours its title
/// line, `color` its `Fix:` label.
fn detailed(out: &mut String, label: &str, f: &Finding, runs: u32, title_color: &str, color: bool) {
    let id = safe(f.signature.as_deref().unwrap_or("unclassified"));
    let end = if title_color.is_empty() { "" } else { PLAIN };
    let _ = writeln!(out, "{title_color}{label}: {}  [{id}]{end}", safe(&f.title));
    let mut at = occurrences(f);
    if runs > 1 {
        at.push_str(&format!(" · run {} of {runs}", f.run));
    }
    if let Some(t) = &f.timestamp {
        at.push_str(&format!(" · {}", safe(t)));
    }
    if let Some(input) = &f.input {
        at.push_str(&format!(" · in {}", safe(input)));
    }
    at.push_str(also_in_good_run(f));
    let _ = writeln!(out, "  {at}{}", processes(f));
    if f.tentative {
        let _ = writeln!(
            out,
            "  (tentative: the input ended early; the cause may be past the cut)"
        );
    }
    let _ = writeln!(out, "  > {}", shown(&f.text, f.text_truncated));
    if let Some(fix) = &f.remediation {
        let (on, off) = if color { (GREEN, PLAIN) } else { ("", "") };
        let _ = writeln!(out, "  {on}Fix:{off} {}", safe(fix));
    }
    if let Some(tb) = &f.traceback {
        if tb.len() > 1 {
            let _ = writeln!(out, "  Traceback (trimmed):");
            for frame in tb {
                let _ = writeln!(out, "    {}", shown(frame, false));
            }
        }
    }
}

fn brief(out: &mut String, f: &Finding) {
    let id = safe(f.signature.as_deref().unwrap_or("unclassified"));
    let _ = writeln!(
        out,
        "  #{} {}{}{}  {}  [{id}]",
        f.rank,
        occurrences(f),
        also_in_good_run(f),
        processes(f),
        safe(&f.title)
    );
}

/// The sentence a report spanning several ranks or nodes opens with: "rank 5 on node-b
/// failed first at 12:00:03; 63 other ranks timed out waiting".
fn first_failure(ff: &FirstFailure) -> String {
    let pretty = |p: &str| match p.strip_prefix("rank") {
        Some(k) if !k.is_empty() && k.bytes().all(|b| b.is_ascii_digit()) => format!("rank {k}"),
        _ => p.to_string(),
    };
    // A node that is a bare number is a directory per local rank (torchrun's `--log-dir`),
    // not a host: it adds nothing to the rank.
    let host = ff
        .node
        .as_ref()
        .filter(|n| !n.bytes().all(|b| b.is_ascii_digit()));
    let who = match (&ff.process, host) {
        (Some(p), Some(node)) if node != p => format!("{} on {node}", pretty(p)),
        (Some(p), _) => pretty(p),
        (None, Some(node)) => node.clone(),
        (None, None) => ff.input.clone(),
    };
    let clock = ff.timestamp.as_deref().map(|t| {
        // The time of day, when the stamp prints one.
        let b = t.as_bytes();
        let hms = (0..b.len().saturating_sub(7)).find(|&i| {
            let d = |k: usize| b[i + k].is_ascii_digit();
            d(0) && d(1) && b[i + 2] == b':' && d(3) && d(4) && b[i + 5] == b':' && d(6) && d(7)
        });
        hms.map_or(t, |i| &t[i..i + 8]).to_string()
    });
    let when = match (clock, ff.timestamp_from) {
        (Some(c), Some(TimeFrom::Before)) => {
            format!(" at {c} (the last time its log printed before it)")
        }
        (Some(c), Some(TimeFrom::Mtime)) => format!(" at {c} (its file's modification time)"),
        (Some(c), _) => format!(" at {c}"),
        (None, _) => " (no timestamp)".into(),
    };
    let others = match ff.others_waiting {
        0 => String::new(),
        1 => "; 1 other rank timed out waiting".into(),
        k => format!("; {} other ranks timed out waiting", n(k)),
    };
    let who = safe(&who);
    if ff.waits_on_peer {
        format!("no rank shows its own failure: every failure waits on a peer; {who} was first{when}{others}")
    } else {
        format!("{who} failed first{when}{others}")
    }
}

/// A job's inputs by the outcome of their last run: "Inputs: 3 failed, 1 completed; 1 with
/// an error."
fn job_outcomes(inputs: &[JobInput]) -> String {
    let mut by: Vec<(&str, u64)> = Vec::new();
    for i in inputs {
        let state = i
            .run_outcomes
            .last()
            .map_or("empty", |o| o.outcome.as_str());
        match by.iter_mut().find(|(s, _)| *s == state) {
            Some((_, k)) => *k += 1,
            None => by.push((state, 1)),
        }
    }
    let mut text = by
        .iter()
        .map(|(s, k)| format!("{} {s}", n(*k)))
        .collect::<Vec<_>>()
        .join(", ");
    let errors = inputs.iter().filter(|i| i.error.is_some()).count() as u64;
    if errors > 0 {
        text.push_str(&format!("; {} with an error", n(errors)));
    }
    format!("Inputs (by their last run): {text}.")
}

/// A finding the good run printed too (`--baseline`) says so.
fn also_in_good_run(f: &Finding) -> &'static str {
    if f.in_baseline == Some(true) {
        " · also in the good run"
    } else {
        ""
    }
}

/// What the human report's hints call the options they point at: the library names its
/// values ([`HumanHints::default`]); a program names its own flags.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HumanHints {
    /// What keeps more findings (lines read "N lower-ranked findings left out (...)").
    pub max_findings: &'static str,
    /// What lists every matched line (lines read "... not shown; ... shows them").
    pub all: &'static str,
    /// Colour for a terminal (ANSI): the root cause's title line bold red, each `Fix:` label
    /// bold green. Nothing from the log is ever coloured, so its text stays as shown.
    pub color: bool,
}

impl Default for HumanHints {
    fn default() -> HumanHints {
        HumanHints {
            max_findings: "the max_findings limit",
            all: "rendering with all",
            color: false,
        }
    }
}

/// Renders a report for a terminal. With `all`, every matched line is listed too.
pub fn render_human(r: &Report, all: bool) -> String {
    render_human_with_hints(r, all, HumanHints::default())
}

/// [`render_human`], with hints that name the options as `hints` says.
pub fn render_human_with_hints(r: &Report, all: bool, hints: HumanHints) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{}: {} lines, {} bytes{} · database {} {} ({})",
        safe(&r.input),
        n(r.lines),
        n(r.bytes),
        if r.binary {
            " (binary: holds NUL bytes)"
        } else {
            ""
        },
        safe(&r.database.name),
        safe(&r.database.version),
        safe(&r.database.hash)
    );
    if let Some(inputs) = &r.inputs {
        let _ = writeln!(
            out,
            "job of {} input{}",
            n(inputs.len() as u64),
            if inputs.len() == 1 { "" } else { "s" }
        );
    }
    if let Some(ff) = &r.first_failure {
        let _ = writeln!(out, "{}", first_failure(ff));
    }
    if let Some(e) = &r.error {
        let _ = writeln!(
            out,
            "ERROR: {} (findings below come from the part read before it)",
            safe(e)
        );
    }
    if r.ended_early && r.error.is_none() {
        let _ = writeln!(
            out,
            "NOTE: the input ends inside a traceback: it was cut off, the cause may be missing"
        );
    }
    let causes: Vec<&Finding> = r.findings.iter().filter(|f| f.is_failure()).collect();
    match causes.split_first() {
        None => {
            let _ = writeln!(out, "No failure found.");
        }
        Some((first, rest)) => {
            let _ = writeln!(out);
            if r.runs > 1 && first.run < r.runs {
                let _ = writeln!(
                    out,
                    "run {} of {} failed; the last run shows no failure",
                    first.run, r.runs
                );
            }
            let title_color = if hints.color { RED } else { "" };
            detailed(
                &mut out,
                "ROOT CAUSE",
                first,
                r.runs,
                title_color,
                hints.color,
            );
            for f in rest {
                let _ = writeln!(out);
                let label = format!(
                    "#{} {}{}",
                    f.rank,
                    if f.role == FindingRole::Cause {
                        "ALSO A CAUSE"
                    } else {
                        "UNCLASSIFIED"
                    },
                    if r.runs > 1 && f.run != first.run {
                        format!(" (run {})", f.run)
                    } else {
                        String::new()
                    }
                );
                detailed(&mut out, &label, f, r.runs, "", hints.color);
            }
        }
    }
    let survived: Vec<&Finding> = r.findings.iter().filter(|f| f.is_survived()).collect();
    if !survived.is_empty() {
        let _ = writeln!(
            out,
            "\nSurvived (failures the process went on after; they do not fail the log):"
        );
        for f in &survived {
            brief(&mut out, f);
        }
    }
    if r.findings_omitted > 0 {
        let _ = writeln!(
            out,
            "\n{} lower-ranked finding{} left out ({}).",
            n(r.findings_omitted),
            if r.findings_omitted == 1 { "" } else { "s" },
            hints.max_findings,
        );
    }
    let symptoms: Vec<&Finding> = r
        .findings
        .iter()
        .filter(|f| f.role == FindingRole::Symptom)
        .collect();
    if !symptoms.is_empty() {
        let _ = writeln!(
            out,
            "\nSymptoms{}:",
            if causes.is_empty() {
                ""
            } else {
                " (consequences of the cause above)"
            }
        );
        for f in &symptoms {
            brief(&mut out, f);
        }
    }
    let noise: Vec<&Finding> = r
        .findings
        .iter()
        .filter(|f| f.role == FindingRole::Noise)
        .collect();
    if all && !noise.is_empty() {
        let _ = writeln!(out, "\nNoise (harmless lines that look alarming):");
        for f in &noise {
            brief(&mut out, f);
        }
    }
    let c = &r.counts;
    let _ = writeln!(out);
    if !all && c.noise_lines > 0 {
        let _ = writeln!(
            out,
            "{} noise line{} ({} kind{}) from {} process{} not shown; {} shows them.",
            n(c.noise_lines),
            if c.noise_lines == 1 { "" } else { "s" },
            noise.len(),
            if noise.len() == 1 { "" } else { "s" },
            n(c.noise_processes),
            if c.noise_processes == 1 { "" } else { "es" },
            hints.all,
        );
    }
    if !all && c.unmatched_error_lines > 0 {
        let _ = writeln!(
            out,
            "{} other error line{} matched no signature and {} not shown; {} lists {}.",
            n(c.unmatched_error_lines),
            if c.unmatched_error_lines == 1 {
                ""
            } else {
                "s"
            },
            if c.unmatched_error_lines == 1 {
                "is"
            } else {
                "are"
            },
            hints.all,
            if c.unmatched_error_lines == 1 {
                "it"
            } else {
                "them"
            },
        );
    }
    if let Some(matches) = &r.matches {
        let _ = writeln!(out, "Every matched line:");
        for m in matches {
            let _ = writeln!(
                out,
                "  line {}  {:<12} {}{}{}",
                n(m.line),
                m.role.as_str(),
                safe(m.signature.as_deref().unwrap_or("(no signature)")),
                if m.outranked.is_empty() {
                    String::new()
                } else {
                    format!(
                        " (outranked by priority: {})",
                        safe(&m.outranked.join(", "))
                    )
                },
                m.finding
                    .map(|k| format!(" → finding #{k}"))
                    .unwrap_or_default()
            );
        }
        let _ = writeln!(out);
        for f in &r.findings {
            let _ = writeln!(out, "  #{} {}: {}", f.rank, f.role.as_str(), safe(&f.why));
        }
    }
    let _ = writeln!(
        out,
        "Matched {} of {} lines: {} cause, {} symptom, {} noise; {} unclassified, {} other error lines.",
        n(c.matched_lines),
        n(r.lines),
        n(c.cause_lines),
        n(c.symptom_lines),
        n(c.noise_lines),
        n(c.unclassified_lines),
        n(c.unmatched_error_lines)
    );
    if let Some(inputs) = &r.inputs {
        let _ = writeln!(out, "{}", job_outcomes(inputs));
    } else if !r.run_outcomes.is_empty() {
        let runs: Vec<String> = r
            .run_outcomes
            .iter()
            .map(|o| {
                let at = match o.line {
                    Some(l) => format!(" at line {}", n(l)),
                    None => " (no line says how it went)".into(),
                };
                if r.run_outcomes.len() > 1 {
                    format!("{} {}{at}", o.run, o.outcome.as_str())
                } else {
                    format!("{}{at}", o.outcome.as_str())
                }
            })
            .collect();
        let label = if runs.len() > 1 { "Runs" } else { "Run" };
        let _ = writeln!(out, "{label}: {}.", runs.join("; "));
    }
    out
}

#[cfg(test)]
mod tests;
