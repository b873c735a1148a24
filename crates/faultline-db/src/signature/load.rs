//! Reading signature directories and files, with positions for every problem.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use toml::Spanned;

use super::{
    Anchor, DbInfo, Located, QuietLevel, Role, Severity, Signature, SignatureInfo, SignatureSet,
    SourceFile, Span,
};
use crate::error::{Error, Location, Problem, Result};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    #[serde(default)]
    signature: Vec<RawSignature>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSignature {
    id: Spanned<String>,
    revision: u32,
    title: String,
    role: Role,
    #[serde(default)]
    severity: Option<Severity>,
    category: String,
    #[serde(default)]
    tags: Vec<String>,
    #[serde(default)]
    priority: i32,
    patterns: Vec<Spanned<String>>,
    #[serde(default)]
    remediation: String,
    source: String,
    examples: Vec<Spanned<String>>,
    counterexamples: Vec<Spanned<String>>,
    #[serde(default)]
    survivable: Option<bool>,
    #[serde(default)]
    constructed: Vec<String>,
    #[serde(default)]
    healthy_ok: Option<String>,
    #[serde(default)]
    anchor: Option<Anchor>,
    #[serde(default)]
    anchor_reason: Option<String>,
    #[serde(default)]
    quiet_levels: Vec<QuietLevel>,
}

/// Largest signature file (and `db.toml`) read: a TOML document takes many times its size
/// once parsed, so a bigger one is refused before it is read, with a located error.
pub(crate) const MAX_SIGNATURE_FILE_BYTES: u64 = 16 << 20;

/// The fields a signature must have; the others (`tags`, `priority`, `survivable`, required
/// from format 2 on, `constructed`, `healthy_ok`, `anchor`, `anchor_reason` and
/// `quiet_levels`) are optional. Evidence signatures (format
/// 3) need no `severity` nor `remediation` ([`EVIDENCE_OPTIONAL`]).
pub(crate) const REQUIRED_FIELDS: &[&str] = &[
    "id",
    "revision",
    "title",
    "role",
    "severity",
    "category",
    "patterns",
    "remediation",
    "source",
    "examples",
    "counterexamples",
];

/// The required fields that an evidence signature (roles start, progress, completed, stopped)
/// may leave out: it makes no finding, so nothing is shown or done about it.
const EVIDENCE_OPTIONAL: &[&str] = &["severity", "remediation"];

/// Every field a signature may have.
const FIELDS: &[&str] = &[
    "id",
    "revision",
    "title",
    "role",
    "severity",
    "category",
    "tags",
    "priority",
    "patterns",
    "remediation",
    "source",
    "examples",
    "counterexamples",
    "survivable",
    "constructed",
    "healthy_ok",
    "anchor",
    "anchor_reason",
    "quiet_levels",
];

/// A signature file read loosely, so that every signature's missing or unknown fields can be
/// reported at once (serde stops at the first).
#[derive(Deserialize)]
struct LooseFile {
    #[serde(default)]
    signature: Vec<Spanned<toml::Table>>,
}

/// The missing and unknown fields of every signature of `file`, each at its signature.
fn field_problems(file: &SourceFile) -> Vec<Problem> {
    let Ok(loose) = toml::from_str::<LooseFile>(&file.text) else {
        return Vec::new();
    };
    let mut problems = Vec::new();
    for sig in &loose.signature {
        let at = location(&file.path, &file.text, sig.span().start);
        let evidence = sig
            .get_ref()
            .get("role")
            .and_then(|r| r.as_str())
            .is_some_and(|r| ["start", "progress", "completed", "stopped"].contains(&r));
        for f in REQUIRED_FIELDS {
            if evidence && EVIDENCE_OPTIONAL.contains(f) {
                continue;
            }
            if !sig.get_ref().contains_key(*f) {
                problems.push(Problem {
                    location: at.clone(),
                    message: format!("missing field `{f}`"),
                });
            }
        }
        for k in sig.get_ref().keys() {
            if !FIELDS.contains(&k.as_str()) {
                problems.push(Problem {
                    location: at.clone(),
                    message: format!("unknown field `{k}`, expected one of {FIELDS:?}"),
                });
            }
        }
    }
    problems
}

/// The 1-based line and column of byte `offset` in `text` (one pass over the text: for
/// many offsets in one file, use `line_starts` and `location_in`).
pub fn location(path: &Path, text: &str, offset: usize) -> Location {
    location_in(path, text, &line_starts(text), offset)
}

/// The byte offsets where the lines of `text` start (0 first).
pub(crate) fn line_starts(text: &str) -> Vec<usize> {
    std::iter::once(0)
        .chain(memchr::memchr_iter(b'\n', text.as_bytes()).map(|i| i + 1))
        .collect()
}

/// [`location`] by binary search in the file's `starts` (from [`line_starts`]): the cost is
/// that of the column count on the one line, not a scan from the file's start.
pub(crate) fn location_in(path: &Path, text: &str, starts: &[usize], offset: usize) -> Location {
    let offset = offset.min(text.len());
    let line = starts.partition_point(|&s| s <= offset).max(1);
    let line_start = starts.get(line - 1).copied().unwrap_or(0).min(offset);
    let column = String::from_utf8_lossy(&text.as_bytes()[line_start..offset])
        .chars()
        .count()
        + 1;
    Location {
        file: path.to_path_buf(),
        line,
        column,
    }
}

/// A TOML parse error of `path` as a located problem.
pub fn toml_problem(path: &Path, text: &str, err: &toml::de::Error) -> Problem {
    let offset = err.span().map_or(0, |s| s.start);
    let message = err.message().trim().replace('\n', " ");
    Problem {
        location: location(path, text, offset),
        message,
    }
}

/// Loads a signature directory: `db.toml` plus every other `*.toml` file, in name order.
pub fn load_dir(dir: &Path) -> Result<SignatureSet> {
    let entries = std::fs::read_dir(dir).map_err(|source| Error::Io {
        path: dir.to_path_buf(),
        source,
    })?;
    let mut paths: Vec<PathBuf> = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|source| Error::Io {
            path: dir.to_path_buf(),
            source,
        })?;
        let path = entry.path();
        if path.extension().is_some_and(|e| e == "toml") && path.is_file() {
            paths.push(path);
        }
    }
    paths.sort();
    // Every problem of the directory is reported at once: a missing db.toml, files that
    // cannot be read, and the problems of every file that can.
    let mut problems = Vec::new();
    let header = dir.join("db.toml");
    let no_header = !paths.contains(&header);
    if no_header {
        problems.push(Problem {
            location: Location {
                file: header,
                line: 1,
                column: 1,
            },
            message: "missing db.toml (the database's name, version and format)".into(),
        });
    }
    let mut sources = Vec::with_capacity(paths.len());
    for path in paths {
        // Read at most one byte past the cap: a larger file is refused unread.
        let read = std::fs::File::open(&path).and_then(|file| {
            let mut bytes = Vec::new();
            std::io::Read::read_to_end(
                &mut std::io::Read::take(file, MAX_SIGNATURE_FILE_BYTES + 1),
                &mut bytes,
            )
            .map(|_| bytes)
        });
        let at_start = |path: PathBuf, message: String| Problem {
            location: Location {
                file: path,
                line: 1,
                column: 1,
            },
            message,
        };
        match read {
            Err(e) => problems.push(at_start(path, format!("cannot be read: {e}"))),
            Ok(bytes) if bytes.len() as u64 > MAX_SIGNATURE_FILE_BYTES => {
                if let Error::Signatures { problems: mut p } = too_large(&path) {
                    problems.append(&mut p);
                }
            }
            Ok(bytes) => match String::from_utf8(bytes) {
                Ok(text) => sources.push(SourceFile { path, text }),
                Err(e) => problems.push(at_start(
                    path,
                    format!(
                        "cannot be read: not UTF-8 (at byte {})",
                        e.utf8_error().valid_up_to()
                    ),
                )),
            },
        }
    }
    match load_sources(sources) {
        Ok(set) if problems.is_empty() => Ok(set),
        Ok(_) => Err(Error::Signatures { problems }),
        Err(Error::Signatures { problems: more }) => {
            // A missing db.toml is already named, with its directory.
            problems.extend(
                more.into_iter()
                    .filter(|p| !(no_header && p.message == "missing db.toml")),
            );
            Err(Error::Signatures { problems })
        }
        Err(e) => Err(e),
    }
}

fn too_large(path: &Path) -> Error {
    Error::Signatures {
        problems: vec![Problem {
            location: Location {
                file: path.to_path_buf(),
                line: 1,
                column: 1,
            },
            message: format!(
                "signature file is over {} MiB; at most {MAX_SIGNATURE_FILE_BYTES} bytes are allowed",
                MAX_SIGNATURE_FILE_BYTES >> 20
            ),
        }],
    }
}

/// Refuses, before any file is parsed, a set that cannot be within the limits: a file over
/// [`MAX_SIGNATURE_FILE_BYTES`], or more `[[signature]]` tables than the set may have
/// patterns (each signature has at least one), located at the first one too many.
fn check_limits(files: &[SourceFile]) -> Result<()> {
    let max = super::MAX_PATTERNS;
    let mut tables = 0usize;
    for file in files {
        if file.text.len() as u64 > MAX_SIGNATURE_FILE_BYTES {
            return Err(too_large(&file.path));
        }
        let mut at = 0;
        for line in file.text.split_inclusive('\n') {
            let t = line.trim_start();
            if t.starts_with("[[") && t[2..].trim_start().starts_with("signature") {
                tables += 1;
                if tables > max {
                    let column = line.len() - t.len() + 1;
                    return Err(Error::Signatures {
                        problems: vec![Problem {
                            location: Location {
                                column,
                                ..location(&file.path, &file.text[..at], at)
                            },
                            message: format!(
                                "signature {tables}: the set has more than {max} signatures, so more than {max} patterns; at most {max} are allowed"
                            ),
                        }],
                    });
                }
            }
            at += line.len();
        }
    }
    Ok(())
}

/// Builds a set from already-read files. The file named `db.toml` is the header.
pub fn load_sources(files: Vec<SourceFile>) -> Result<SignatureSet> {
    check_limits(&files)?;
    let mut problems = Vec::new();
    let mut info = None;
    let mut signatures = Vec::new();
    for (index, file) in files.iter().enumerate() {
        if file.path.file_name().is_some_and(|n| n == "db.toml") {
            match toml::from_str::<DbInfo>(&file.text) {
                Ok(i) => {
                    if !super::SUPPORTED_FORMATS.contains(&i.format) {
                        problems.push(Problem {
                            location: location(&file.path, &file.text, 0),
                            message: format!(
                                "signature format {} is not supported; this faultline reads formats {:?}",
                                i.format,
                                super::SUPPORTED_FORMATS
                            ),
                        });
                    }
                    info = Some(i);
                }
                Err(e) => problems.push(toml_problem(&file.path, &file.text, &e)),
            }
            continue;
        }
        match parse_file(index, file) {
            Ok(mut sigs) => signatures.append(&mut sigs),
            Err(p) => {
                // The loose pass names every missing or unknown field at its signature;
                // serde's error is one of them (an unknown field is kept: it points at the
                // key) or a different problem (kept).
                let fields = field_problems(file);
                let covered = !fields.is_empty() && p.message.starts_with("missing field");
                let same = |f: &Problem| {
                    f.message
                        .split(", expected")
                        .next()
                        .is_some_and(|head| p.message.starts_with(head))
                };
                let fields: Vec<Problem> =
                    fields.into_iter().filter(|f| covered || !same(f)).collect();
                if !covered {
                    problems.push(p);
                }
                problems.extend(fields);
            }
        }
    }
    let Some(info) = info else {
        if !files
            .iter()
            .any(|f| f.path.file_name().is_some_and(|n| n == "db.toml"))
        {
            problems.push(Problem {
                location: Location {
                    file: PathBuf::from("db.toml"),
                    line: 1,
                    column: 1,
                },
                message: "missing db.toml".into(),
            });
        }
        return Err(Error::Signatures { problems });
    };
    let set = SignatureSet {
        info,
        signatures,
        files,
        line_starts: Default::default(),
    };
    if let Err(Error::Signatures { problems: mut more }) = check_ids(&set) {
        problems.append(&mut more);
    }
    if problems.is_empty() {
        Ok(set)
    } else {
        Err(Error::Signatures { problems })
    }
}

/// Parses one signature file (not `db.toml`); `index` is its position in the set's file list.
fn parse_file(index: usize, file: &SourceFile) -> std::result::Result<Vec<Signature>, Problem> {
    let raw: RawFile =
        toml::from_str(&file.text).map_err(|e| toml_problem(&file.path, &file.text, &e))?;
    let span = |s: std::ops::Range<usize>| Span {
        file: index,
        start: s.start,
        end: s.end,
    };
    let located = |v: Vec<Spanned<String>>| -> Vec<Located> {
        v.into_iter()
            .map(|s| Located {
                span: span(s.span()),
                value: s.into_inner(),
            })
            .collect()
    };
    if let Some(r) = raw
        .signature
        .iter()
        .find(|r| r.severity.is_none() && !r.role.is_evidence())
    {
        return Err(Problem {
            location: location(&file.path, &file.text, r.id.span().start),
            message: "missing field `severity` (only evidence signatures may leave it out)".into(),
        });
    }
    Ok(raw
        .signature
        .into_iter()
        .map(|r| Signature {
            span: span(r.id.span()),
            info: SignatureInfo {
                id: r.id.into_inner(),
                revision: r.revision,
                title: r.title,
                role: r.role,
                severity: r.severity.unwrap_or(super::Severity::Info),
                category: r.category,
                tags: r.tags,
                priority: r.priority,
                survivable: r
                    .survivable
                    .unwrap_or(r.role.is_evidence() || r.severity != Some(super::Severity::Fatal)),
                remediation: r.remediation,
                source: r.source,
                anchor: r.anchor.unwrap_or_default(),
                quiet_levels: r.quiet_levels,
            },
            patterns: located(r.patterns),
            examples: located(r.examples),
            counterexamples: located(r.counterexamples),
            survivable_given: r.survivable.is_some(),
            constructed: r.constructed,
            healthy_ok: r.healthy_ok,
            anchor_given: r.anchor.is_some(),
            anchor_reason: r.anchor_reason,
        })
        .collect())
}

/// What is wrong with a signature's `anchor`, `anchor_reason` and `quiet_levels`: each is
/// format 3; matching anywhere needs a reason, and a reason without it is a mistake; quiet
/// levels are for the roles that make failures (causes and symptoms).
fn anchor_problems(sig: &Signature, format: u32) -> Vec<String> {
    let mut problems = Vec::new();
    let info = &sig.info;
    let given = [
        ("anchor", sig.anchor_given),
        ("anchor_reason", sig.anchor_reason.is_some()),
        ("quiet_levels", !info.quiet_levels.is_empty()),
    ];
    for (field, set) in given {
        if set && format < 3 {
            problems.push(format!("{field} needs a format 3 set"));
        }
    }
    let reason = sig.anchor_reason.as_deref().map(str::trim);
    match (info.anchor, reason) {
        (Anchor::Anywhere, None | Some("")) => problems.push(
            "anchor = \"anywhere\" needs anchor_reason: why the message is printed inside other text (a match anywhere lets quoted log text, such as a request's prompt, choose the diagnosis)".into(),
        ),
        (Anchor::Message, Some(_)) => {
            problems.push("anchor_reason is only for anchor = \"anywhere\"".into())
        }
        _ => {}
    }
    if !info.quiet_levels.is_empty() && !matches!(info.role, Role::Cause | Role::Symptom) {
        problems.push("quiet_levels is for causes and symptoms".into());
    }
    problems
}

fn valid_id(id: &str) -> bool {
    let parts: Vec<&str> = id.split('.').collect();
    parts.len() >= 2
        && parts.iter().all(|p| {
            !p.is_empty()
                && p.bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_')
        })
}

/// Checks ids (form, uniqueness, retirement) and the fields every signature must fill.
pub(crate) fn check_ids(set: &SignatureSet) -> Result<()> {
    let mut problems = Vec::new();
    let mut seen: HashMap<&str, &Span> = HashMap::new();
    for sig in &set.signatures {
        let at = set.locate(&sig.span);
        let mut push = |message: String| {
            problems.push(Problem {
                location: at.clone(),
                message,
            })
        };
        if !valid_id(&sig.info.id) {
            push(format!(
                "id {:?} is not of the form vendor.area.name (lowercase letters, digits, '-', '_')",
                sig.info.id
            ));
        }
        if let Some(first) = seen.insert(&sig.info.id, &sig.span) {
            let first = set.locate(first);
            push(format!(
                "duplicate id {:?} (first defined at {first})",
                sig.info.id
            ));
        }
        if set.info.retired.contains(&sig.info.id) {
            push(format!(
                "id {:?} is retired in db.toml and may not be reused",
                sig.info.id
            ));
        }
        if sig.info.revision == 0 {
            push("revision must be 1 or more".into());
        }
        let evidence = sig.info.role.is_evidence();
        for (field, value) in [
            ("title", &sig.info.title),
            ("category", &sig.info.category),
            ("remediation", &sig.info.remediation),
            ("source", &sig.info.source),
        ] {
            if value.trim().is_empty() && !(evidence && field == "remediation") {
                push(format!("{field} must not be empty"));
            }
        }
        if evidence && set.info.format < 3 {
            push(format!(
                "role {:?} is evidence, which needs a format 3 set (this one is format {})",
                sig.info.role.as_str(),
                set.info.format
            ));
        }
        if evidence && sig.healthy_ok.is_some() {
            push("healthy_ok is for causes and symptoms, not evidence".into());
        }
        if sig.healthy_ok.is_some() && set.info.format < 3 {
            push("healthy_ok needs a format 3 set".into());
        }
        for problem in anchor_problems(sig, set.info.format) {
            push(problem);
        }
        if set.info.format >= 2 && !sig.survivable_given && !evidence {
            push(format!(
                "survivable must be set (true or false) in a format {} set",
                set.info.format
            ));
        }
        for c in &sig.constructed {
            if !sig.examples.iter().any(|e| &e.value == c) {
                push(format!(
                    "constructed lists {c:?}, which is not one of the examples"
                ));
            }
        }
        for (field, list) in [
            ("patterns", &sig.patterns),
            ("examples", &sig.examples),
            ("counterexamples", &sig.counterexamples),
        ] {
            if list.is_empty() {
                push(format!("{field} must hold at least one entry"));
            }
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(Error::Signatures { problems })
    }
}

#[cfg(test)]
mod tests;
