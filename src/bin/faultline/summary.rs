//! `faultline summary`: the JSON lines of `scan` runs (shards) merged into one summary; the
//! summary's checks and rendering, which `scan --summary` shares.

use std::io::{self, Read};

use faultline::{Error, Summary, Usage};

use crate::args::{Format, SummaryArgs};
use crate::output::{note, out};

pub fn render_summary(s: &Summary, format: Format) -> String {
    match format {
        Format::Human => s.render_human(),
        Format::Json => s.to_json() + "\n",
        Format::Csv => s.render_csv(),
    }
}

/// A summary in which two distinct inputs share one name is an error: its rows could not be
/// traced back to their files (issue 30 item 4).
pub fn refuse_ambiguous(s: &Summary) -> Result<(), Error> {
    if s.ambiguous.is_empty() {
        return Ok(());
    }
    Err(Error::Usage(Usage::Caller(format!(
        "{} input name{} shared by distinct inputs: {} (a UTF-8 file name holding a literal backslash escape reads like a name that is not UTF-8); the summary would not tell them apart: rename one, or summarise them separately",
        s.ambiguous.len(),
        if s.ambiguous.len() == 1 { " is" } else { "s are" },
        s.ambiguous.join(", ")
    ))))
}

/// Warns of inputs a summary was given more than once (each is counted once).
pub fn warn_repeated(s: &Summary) {
    for r in &s.repeated {
        note(&format!(
            "faultline: warning: {}: given {} times ({}); counted once",
            r.input,
            r.from.len(),
            r.from.join(", ")
        ));
    }
}

pub fn run_summary(args: SummaryArgs) -> Result<u8, Error> {
    let mut b = Summary::builder();
    for file in &args.files {
        let io_err = |source| Error::Io {
            path: file.clone(),
            source,
        };
        let text = if file.as_os_str() == "-" {
            let mut t = String::new();
            io::stdin().read_to_string(&mut t).map_err(io_err)?;
            t
        } else {
            std::fs::read_to_string(file).map_err(io_err)?
        };
        b.add_json_lines(&file.display().to_string(), &text)?;
    }
    let s = b.finish();
    warn_repeated(&s);
    refuse_ambiguous(&s)?;
    if s.databases.len() > 1 && !args.allow_mixed_databases {
        let dbs: Vec<String> = s
            .databases
            .iter()
            .map(|d| format!("{} {} (hash {})", d.name, d.version, d.hash))
            .collect();
        return Err(Error::Usage(Usage::Caller(format!(
            "the reports were made with {} different databases: {}; their diagnoses are not comparable (pass --allow-mixed-databases to merge them anyway)",
            dbs.len(),
            dbs.join(", ")
        ))));
    }
    out(&render_summary(&s, args.format));
    Ok(s.bucket().exit_status())
}
