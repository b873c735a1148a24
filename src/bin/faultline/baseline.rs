//! `--baseline GOOD`: the good runs' line templates, loaded before any input is scanned.

use std::path::PathBuf;
use std::sync::Arc;

use faultline::{open, stdin_named_once, walk, Baseline, Database, Entry, Error, ScanOptions};
use faultline::{Usage, WalkOptions};

/// The baseline of `goods` (files, or directories walked with default rules), or `None`
/// without any. An unreadable baseline is an error that names its path (and byte offset);
/// stdin named both as an input and as a baseline is the stdin-twice error. `warn` gets one
/// line for an empty baseline and for a good run that itself failed.
pub(crate) fn load(
    db: &Database,
    goods: &[PathBuf],
    inputs: &[PathBuf],
    max_templates: usize,
    scan: &ScanOptions,
    warn: &mut dyn FnMut(&str),
) -> Result<Option<Arc<Baseline>>, Error> {
    if goods.is_empty() {
        return Ok(None);
    }
    // No input named: the inputs are standard input.
    let stdin = [PathBuf::from("-")];
    let inputs = if inputs.is_empty() {
        &stdin[..]
    } else {
        inputs
    };
    stdin_named_once(&[goods, inputs].concat())?;
    let mut baseline = Baseline::new(max_templates);
    for entry in walk(goods, &WalkOptions::default())? {
        let path = match entry {
            Entry::Input { path, .. } => path,
            Entry::Skipped { .. } => continue,
            Entry::Failed(e) => return Err(baseline_error(&e.to_string())),
        };
        let input = open(&path).map_err(|e| baseline_error(&e.to_string()))?;
        let good = baseline.add_input(db, input, scan);
        if let Some(e) = &good.error {
            return Err(baseline_error(e));
        }
        if let Some(f) = good.findings.first().filter(|_| good.failed) {
            warn(&format!(
                "faultline: warning: {}: the good run failed ({}, line {}); used as a baseline all the same",
                good.input, f.title, f.line
            ));
        }
    }
    if baseline.is_empty() {
        let names: Vec<String> = goods.iter().map(|p| p.display().to_string()).collect();
        warn(&format!(
            "faultline: warning: --baseline {}: no line to learn from; the baseline holds 0 templates",
            names.join(", ")
        ));
    }
    Ok(Some(Arc::new(baseline)))
}

fn baseline_error(e: &str) -> Error {
    Usage::Caller(format!("--baseline: {e}")).into()
}
