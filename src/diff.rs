//! Comparing two signature sets (`faultline db diff OLD NEW`): ids added, removed (and
//! whether the new set lists them as retired), changed (which fields, the revision change,
//! and a flag when the meaning changed without a revision bump); and, over a corpus, which
//! inputs' first finding differs between the two.

use std::path::PathBuf;

use serde::Serialize;

use crate::analyze::{analyze_path, AnalyzeOptions};
use crate::compile::Database;
use crate::corpus::{Case, Outcome};
use crate::report::Report;
use crate::scan::ScanOptions;
use crate::signature::{Signature, SignatureSet};

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

fn values(v: &[crate::signature::Located]) -> Vec<&str> {
    v.iter().map(|l| l.value.as_str()).collect()
}

fn changed_fields(a: &Signature, b: &Signature) -> Vec<String> {
    let checks: [(&str, bool); 11] = [
        ("title", a.title != b.title),
        ("role", a.role != b.role),
        ("severity", a.severity != b.severity),
        ("category", a.category != b.category),
        ("tags", a.tags != b.tags),
        ("priority", a.priority != b.priority),
        ("patterns", values(&a.patterns) != values(&b.patterns)),
        ("remediation", a.remediation != b.remediation),
        ("source", a.source != b.source),
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
/// use faultline::diff::diff_sets;
/// use faultline::signature::{load_sources, SourceFile};
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
        set.signatures.iter().position(|s| s.id == id)
    };
    let mut added: Vec<String> = new
        .signatures
        .iter()
        .filter(|s| find(old, &s.id).is_none())
        .map(|s| s.id.clone())
        .collect();
    added.sort();
    let mut removed: Vec<Removed> = old
        .signatures
        .iter()
        .filter(|s| find(new, &s.id).is_none())
        .map(|s| Removed {
            id: s.id.clone(),
            retired: new.info.retired.contains(&s.id),
        })
        .collect();
    removed.sort_by(|a, b| a.id.cmp(&b.id));
    let mut changed = Vec::new();
    for a in &old.signatures {
        let Some(b) = find(new, &a.id).map(|i| &new.signatures[i]) else {
            continue;
        };
        let fields = changed_fields(a, b);
        if fields.is_empty() && a.revision == b.revision {
            continue;
        }
        let needs_revision_bump =
            b.revision <= a.revision && fields.iter().any(|f| MEANING_FIELDS.contains(&f.as_str()));
        changed.push(Changed {
            id: a.id.clone(),
            old_revision: a.revision,
            new_revision: b.revision,
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
mod tests {
    use super::*;
    use crate::signature::{load_sources, SourceFile};

    fn set(version: &str, retired: &str, sigs: &[(&str, u32, &str)]) -> SignatureSet {
        let mut text = String::new();
        for (id, rev, pattern) in sigs {
            text.push_str(&format!(
                "[[signature]]\nid = \"{id}\"\nrevision = {rev}\ntitle = \"t\"\nrole = \"cause\"\nseverity = \"error\"\ncategory = \"c\"\npatterns = ['{pattern}']\nremediation = \"r\"\nsource = \"s\"\nexamples = ['{pattern}']\ncounterexamples = ['nothing']\n"
            ));
        }
        load_sources(vec![
            SourceFile {
                path: PathBuf::from("db.toml"),
                text: format!(
                    "name = \"d\"\nversion = \"{version}\"\nformat = 1\nretired = [{retired}]\n"
                ),
            },
            SourceFile {
                path: PathBuf::from("a.toml"),
                text,
            },
        ])
        .unwrap()
    }

    #[test]
    fn added_removed_changed() {
        let old = set(
            "1",
            "",
            &[
                ("a.a.gone", 1, "gone away"),
                ("a.a.quiet", 1, "quiet change"),
                ("a.a.same", 1, "same text"),
                ("a.a.bumped", 1, "bumped text"),
                ("a.a.dropped", 2, "dropped text"),
            ],
        );
        let new = set(
            "2",
            "\"a.a.gone\"",
            &[
                ("a.a.quiet", 1, "quiet changed"),
                ("a.a.same", 1, "same text"),
                ("a.a.bumped", 2, "bumped texts"),
                ("a.a.new", 1, "brand new"),
            ],
        );
        let d = diff_sets(&old, &new);
        assert_eq!((d.old.as_str(), d.new.as_str()), ("d 1", "d 2"));
        assert_eq!(d.added, ["a.a.new"]);
        let removed: Vec<(&str, bool)> = d
            .removed
            .iter()
            .map(|r| (r.id.as_str(), r.retired))
            .collect();
        assert_eq!(removed, [("a.a.dropped", false), ("a.a.gone", true)]);
        let changed: Vec<(&str, u32, u32, bool)> = d
            .changed
            .iter()
            .map(|c| {
                (
                    c.id.as_str(),
                    c.old_revision,
                    c.new_revision,
                    c.needs_revision_bump,
                )
            })
            .collect();
        assert_eq!(
            changed,
            [("a.a.bumped", 1, 2, false), ("a.a.quiet", 1, 1, true)]
        );
        assert_eq!(d.changed[1].fields, ["patterns", "examples"]);
    }

    #[test]
    fn corpus_changes_name_the_inputs() {
        let old = Database::compile(&set("1", "", &[("a.a.boom", 1, "boom happened")])).unwrap();
        let new = Database::compile(&set("2", "", &[("a.a.bang", 1, "bang happened")])).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let logs: Vec<PathBuf> = ["boom happened\n", "bang happened\n", "nothing\n"]
            .iter()
            .enumerate()
            .map(|(i, text)| {
                let p = dir.path().join(format!("{i}.log"));
                std::fs::write(&p, text).unwrap();
                p
            })
            .collect();
        let (changes, errors) = diff_corpus(&old, &new, &logs, &[], &ScanOptions::default());
        assert!(errors.is_empty());
        let sig = |f: &Option<FirstFinding>| f.as_ref().map(|f| (f.signature.clone(), f.line));
        let summary: Vec<_> = changes.iter().map(|c| (sig(&c.old), sig(&c.new))).collect();
        assert_eq!(
            summary,
            [
                (Some(("a.a.boom".to_string(), 1)), None),
                (None, Some(("a.a.bang".to_string(), 1)))
            ]
        );
        assert!(changes.iter().all(|c| c.input.ends_with(".log")));
    }
}
