//! `--baseline GOOD`: the good runs' line templates, loaded with [`Baseline::load`] before any
//! input is scanned, its warnings on stderr.

use std::path::PathBuf;
use std::sync::Arc;

use faultline::{Baseline, Database, Error, ScanOptions};

/// The baseline of `goods`, or `None` without any; `inputs` are the scan's paths (none:
/// standard input). Each warning is one `faultline: warning: ...` line on stderr.
pub(crate) fn load(
    db: &Database,
    goods: &[PathBuf],
    inputs: &[PathBuf],
    max_templates: usize,
    scan: &ScanOptions,
) -> Result<Option<Arc<Baseline>>, Error> {
    if goods.is_empty() {
        return Ok(None);
    }
    let stdin = [PathBuf::from("-")];
    let inputs = if inputs.is_empty() {
        &stdin[..]
    } else {
        inputs
    };
    let loaded = Baseline::load(db, goods, inputs, max_templates, scan)?;
    for w in &loaded.warnings {
        crate::output::note(&format!("faultline: warning: {w}"));
    }
    Ok(Some(Arc::new(loaded.baseline)))
}
