//! Small pieces of the command line kept apart from `main.rs`: byte sizes as people type
//! them, and the progress counter of a sweep.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use faultline::Entry;

/// The smallest `--max-line-bytes`: the scanner's window seam is 4 KiB, and a finding's text
/// must hold at least one whole ordinary line.
pub const MIN_LINE_BYTES: u64 = 4 << 10;

/// Parses a byte size: a plain number, or a number with `K`/`M`/`G` or `KiB`/`MiB`/`GiB`
/// (powers of 1024; `KB`/`MB`/`GB` are taken the same way), at least [`MIN_LINE_BYTES`].
pub fn parse_line_bytes(s: &str) -> Result<usize, String> {
    let t = s.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    if num.is_empty() {
        return Err(format!(
            "{s:?} is not a size: a number with an optional unit K, M, G, KiB, MiB or GiB"
        ));
    }
    let shift = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "k" | "kb" | "kib" => 10,
        "m" | "mb" | "mib" => 20,
        "g" | "gb" | "gib" => 30,
        other => {
            return Err(format!(
                "unknown unit {other:?} in {s:?}: use K, M, G, KiB, MiB or GiB (powers of 1024)"
            ))
        }
    };
    let n: u64 = num.parse().map_err(|e| format!("{s:?}: {e}"))?;
    let bytes = n
        .checked_mul(1u64 << shift)
        .filter(|&b| b <= usize::MAX as u64)
        .ok_or_else(|| format!("{s:?} is too large"))?;
    if bytes < MIN_LINE_BYTES {
        return Err(format!(
            "{s:?} is below the minimum of 4 KiB ({MIN_LINE_BYTES} bytes)"
        ));
    }
    usize::try_from(bytes).map_err(|_| format!("{s:?} is too large"))
}

/// The files counter of a sweep's progress bar: counts the entries that get a report (inputs,
/// and paths that could not be examined), never skipped ones, so `done` never passes `total`.
pub struct Counter {
    total: usize,
    done: AtomicUsize,
}

impl Counter {
    /// Whether `entry` is counted.
    fn counts(entry: &Entry) -> bool {
        !matches!(entry, Entry::Skipped { .. })
    }

    pub fn new(entries: &[Entry]) -> Counter {
        Counter {
            total: entries.iter().filter(|e| Counter::counts(e)).count(),
            done: AtomicUsize::new(0),
        }
    }

    /// Records that `entry` is done; the message `done/total`.
    pub fn tick(&self, entry: &Entry) -> String {
        let n = if Counter::counts(entry) {
            self.done.fetch_add(1, Ordering::Relaxed) + 1
        } else {
            self.done.load(Ordering::Relaxed)
        };
        format!("{n}/{}", self.total)
    }
}

/// The paths and filters of a sweep, for a message: `DIR (--glob *.log --exclude old)`.
pub fn selection(paths: &[PathBuf], globs: &[String], excludes: &[String]) -> String {
    let names: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
    let filters: Vec<String> = globs
        .iter()
        .map(|g| format!("--glob {g}"))
        .chain(excludes.iter().map(|g| format!("--exclude {g}")))
        .collect();
    if filters.is_empty() {
        format!("{} (no files in it)", names.join(" "))
    } else {
        format!("{} ({})", names.join(" "), filters.join(" "))
    }
}

/// What a set of `bench` is called: the archive or directory it came from, or `embedded`,
/// with its additions and switched-off ids.
pub fn set_label(
    db: Option<&Path>,
    signatures: Option<&Path>,
    add: &[PathBuf],
    disable: &[String],
) -> String {
    let mut label = match (db, signatures) {
        (Some(f), _) | (None, Some(f)) => f.display().to_string(),
        (None, None) => "embedded".to_string(),
    };
    for a in add {
        label.push_str(&format!(" + {}", a.display()));
    }
    for d in disable {
        label.push_str(&format!(" - {d}"));
    }
    label
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_take_units_and_a_minimum() {
        for (s, n) in [
            ("4096", 4096usize),
            ("64M", 64 << 20),
            ("64MiB", 64 << 20),
            ("64mib", 64 << 20),
            ("8K", 8 << 10),
            ("8KiB", 8 << 10),
            ("2G", 2 << 30),
            ("2GiB", 2 << 30),
            (" 1 M ", 1 << 20),
        ] {
            assert_eq!(parse_line_bytes(s), Ok(n), "{s}");
        }
        for s in ["0", "4095", "1K", "3KiB"] {
            let e = parse_line_bytes(s).unwrap_err();
            assert!(e.contains("minimum of 4 KiB"), "{s}: {e}");
        }
        for s in ["", "M", "64X", "-1", "1.5M", "99999999999999999999G"] {
            assert!(parse_line_bytes(s).is_err(), "{s}");
        }
    }

    #[test]
    fn the_progress_counter_never_passes_its_total() {
        let input = |p: &str| Entry::Input {
            path: PathBuf::from(p),
            relative: p.into(),
        };
        let entries = vec![
            input("a.log"),
            Entry::Skipped {
                path: PathBuf::from("pipe"),
                reason: faultline::SkipReason::Special("a FIFO"),
            },
            Entry::Failed(faultline::Usage::Caller("dangling".into()).into()),
            input("b.log"),
        ];
        let c = Counter::new(&entries);
        let shown: Vec<String> = entries.iter().map(|e| c.tick(e)).collect();
        assert_eq!(shown, ["1/3", "1/3", "2/3", "3/3"]);
    }

    /// Every argument of every subcommand, walked down clap's command tree.
    fn arguments(cmd: &clap::Command, path: &str, out: &mut Vec<(String, clap::Arg)>) {
        for a in cmd.get_arguments() {
            out.push((path.to_string(), a.clone()));
        }
        for sub in cmd.get_subcommands() {
            arguments(sub, &format!("{path} {}", sub.get_name()), out);
        }
    }

    #[test]
    fn every_flag_has_help_and_formats_are_offered_where_they_work() {
        use clap::CommandFactory;
        let mut cmd = crate::Cli::command();
        cmd.build();
        let mut all = Vec::new();
        arguments(&cmd, "faultline", &mut all);
        let missing: Vec<String> = all
            .iter()
            .filter(|(_, a)| a.get_help().is_none() && a.get_long_help().is_none())
            .map(|(p, a)| format!("{p} {}", a.get_id()))
            .collect();
        assert!(missing.is_empty(), "arguments without help: {missing:?}");
        // csv is offered where it works: summaries only.
        for (path, a) in &all {
            if a.get_id() != "format" {
                continue;
            }
            let values: Vec<String> = a
                .get_possible_values()
                .iter()
                .map(|v| v.get_name().to_string())
                .collect();
            let csv = values.iter().any(|v| v == "csv");
            let summaries = path == "faultline scan" || path == "faultline summary";
            assert_eq!(csv, summaries, "{path} --format offers {values:?}");
        }
    }
}
