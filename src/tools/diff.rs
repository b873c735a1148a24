//! Comparing two signature sets (`faultline db diff OLD NEW`): ids added, removed (and
//! whether the new set lists them as retired), changed (which fields, the revision change,
//! and a flag when the meaning changed without a revision bump); and, over a corpus, which
//! inputs' first finding differs between the two.

use std::path::PathBuf;

use serde::Serialize;

use super::corpus::{Case, Outcome};
use crate::analyze::{analyze_path, AnalyzeOptions};
use crate::report::Report;
use crate::scan::ScanOptions;
use faultline_db::Database;
use faultline_db::{Signature, SignatureSet};

/// Fields whose change alters what a signature matches or means: they need a revision bump.
pub const MEANING_FIELDS: &[&str] = &[
    "patterns", "title", "role", "severity", "category", "priority",
];

/// A signature present in both sets whose revision or content differs.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Changed {
    /// The signature id.
    pub id: String,
    /// Its revision in the old set.
    pub old_revision: u32,
    /// Its revision in the new set.
    pub new_revision: u32,
    /// The fields that differ, in file order.
    pub fields: Vec<String>,
    /// A field of [`MEANING_FIELDS`] changed but the revision did not go up.
    pub needs_revision_bump: bool,
}

/// A signature of the old set missing from the new one.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Removed {
    /// The signature id.
    pub id: String,
    /// Whether the new set's `db.toml` lists it under `retired` (it should).
    pub retired: bool,
}

/// The differences between two signature sets.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SetDiff {
    /// `name version` of each set.
    pub old: String,
    /// `name version` of the new set.
    pub new: String,
    /// Ids only the new set has, sorted.
    pub added: Vec<String>,
    /// Signatures only the old set has.
    pub removed: Vec<Removed>,
    /// Signatures in both sets that differ.
    pub changed: Vec<Changed>,
}

fn values(v: &[faultline_db::Located]) -> Vec<&str> {
    v.iter().map(|l| l.value.as_str()).collect()
}

fn changed_fields(a: &Signature, b: &Signature) -> Vec<String> {
    let checks: [(&str, bool); 11] = [
        ("title", a.info.title != b.info.title),
        ("role", a.info.role != b.info.role),
        ("severity", a.info.severity != b.info.severity),
        ("category", a.info.category != b.info.category),
        ("tags", a.info.tags != b.info.tags),
        ("priority", a.info.priority != b.info.priority),
        ("patterns", values(&a.patterns) != values(&b.patterns)),
        ("remediation", a.info.remediation != b.info.remediation),
        ("source", a.info.source != b.info.source),
        ("examples", values(&a.examples) != values(&b.examples)),
        (
            "counterexamples",
            values(&a.counterexamples) != values(&b.counterexamples),
        ),
    ];
    checks
        .iter()
        .filter(|(_, differs)| *differs)
        .map(|(name, _)| name.to_string())
        .collect()
}

/// Compares two loaded sets by id.
///
/// ```
/// use faultline::tools::diff_sets;
/// use faultline::{load_sources, SourceFile};
/// use std::path::PathBuf;
///
/// let set = |version: &str, title: &str| load_sources(vec![
///     SourceFile { path: PathBuf::from("db.toml"), text: format!("name = \"d\"\nversion = \"{version}\"\nformat = 1\n") },
///     SourceFile { path: PathBuf::from("a.toml"), text: format!("[[signature]]\nid = \"a.b.c\"\nrevision = 1\ntitle = \"{title}\"\nrole = \"cause\"\nseverity = \"error\"\ncategory = \"c\"\npatterns = ['boom']\nremediation = \"r\"\nsource = \"s\"\nexamples = ['boom']\ncounterexamples = ['bam']\n") },
/// ]).unwrap();
/// let d = diff_sets(&set("1", "Boom"), &set("2", "Boom happened"));
/// assert_eq!(d.changed[0].fields, ["title"]);
/// assert!(d.changed[0].needs_revision_bump);
/// ```
pub fn diff_sets(old: &SignatureSet, new: &SignatureSet) -> SetDiff {
    let find = |set: &'_ SignatureSet, id: &str| -> Option<usize> {
        set.signatures.iter().position(|s| s.info.id == id)
    };
    let mut added: Vec<String> = new
        .signatures
        .iter()
        .filter(|s| find(old, &s.info.id).is_none())
        .map(|s| s.info.id.clone())
        .collect();
    added.sort();
    let mut removed: Vec<Removed> = old
        .signatures
        .iter()
        .filter(|s| find(new, &s.info.id).is_none())
        .map(|s| Removed {
            id: s.info.id.clone(),
            retired: new.info.retired.contains(&s.info.id),
        })
        .collect();
    removed.sort_by(|a, b| a.id.cmp(&b.id));
    let mut changed = Vec::new();
    for a in &old.signatures {
        let Some(b) = find(new, &a.info.id).map(|i| &new.signatures[i]) else {
            continue;
        };
        let fields = changed_fields(a, b);
        if fields.is_empty() && a.info.revision == b.info.revision {
            continue;
        }
        let needs_revision_bump = b.info.revision <= a.info.revision
            && fields.iter().any(|f| MEANING_FIELDS.contains(&f.as_str()));
        changed.push(Changed {
            id: a.info.id.clone(),
            old_revision: a.info.revision,
            new_revision: b.info.revision,
            fields,
            needs_revision_bump,
        });
    }
    changed.sort_by(|a, b| a.id.cmp(&b.id));
    SetDiff {
        old: format!("{} {}", old.info.name, old.info.version),
        new: format!("{} {}", new.info.name, new.info.version),
        added,
        removed,
        changed,
    }
}

/// The first finding of one input under one set: `signature` (or `(unclassified)`) and line.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct FirstFinding {
    /// The signature id, or `(unclassified)`.
    pub signature: String,
    /// Its role.
    pub role: String,
    /// Its 1-based line.
    pub line: u64,
}

/// An input whose first finding differs between the two sets.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct FindingChange {
    /// The input's path.
    pub input: String,
    /// The first finding under the old set.
    pub old: Option<FirstFinding>,
    /// The first finding under the new set.
    pub new: Option<FirstFinding>,
    /// With a sidecar: whether the old and new first findings meet its expectation.
    pub old_pass: Option<bool>,
    /// With a sidecar: whether the new first finding meets it.
    pub new_pass: Option<bool>,
}

fn first(r: &Report) -> Option<FirstFinding> {
    r.findings.first().map(|f| FirstFinding {
        signature: f
            .signature
            .clone()
            .unwrap_or_else(|| crate::summary::UNCLASSIFIED.into()),
        role: f.role.as_str().into(),
        line: f.line,
    })
}

/// Runs every log under both databases and lists those whose first finding (signature,
/// role or line) differs, sorted by path. `cases` adds pass/fail per side where a log has
/// a sidecar. Unreadable logs are returned separately (`path: reason`).
pub fn diff_corpus(
    old: &Database,
    new: &Database,
    logs: &[PathBuf],
    cases: &[Case],
    scan: &ScanOptions,
) -> (Vec<FindingChange>, Vec<String>) {
    let mut changes = Vec::new();
    let mut errors = Vec::new();
    for log in logs {
        let a = analyze_path(old, log, scan, AnalyzeOptions::default());
        let b = analyze_path(new, log, scan, AnalyzeOptions::default());
        if let Some(e) = a.error.as_ref().or(b.error.as_ref()) {
            errors.push(e.clone());
            continue;
        }
        let (fa, fb) = (first(&a), first(&b));
        if fa == fb {
            continue;
        }
        let case = cases.iter().find(|c| &c.log == log);
        let pass = |r: &Report| case.map(|c| c.check(r) == Outcome::Pass);
        changes.push(FindingChange {
            input: log.display().to_string(),
            old_pass: pass(&a),
            new_pass: pass(&b),
            old: fa,
            new: fb,
        });
    }
    (changes, errors)
}

#[cfg(test)]
mod tests;
