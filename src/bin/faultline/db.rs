//! `faultline db`: check, compile, list and export a signature database (`db diff` is in
//! `diff.rs`).

use std::io::{self, Write};

use serde::Serialize;

use faultline::tools::{load_corpus, precision_lint};
use faultline::{Archive, Database, Error, Role, Severity, SignatureInfo, SignatureSet};
use faultline::{ARCHIVE_FORMAT, MAX_DFA_BYTES};

use crate::args::{database, set_or_embedded, DbCommand, ExportFormat, TextOrJson};
use crate::diff::run_diff;
use crate::output::{note, out, out_human, EXIT_DIAGNOSED, EXIT_ERROR};

/// Anchors expected more often than this per MiB of ordinary log make `db check` name
/// their pattern: at ~200-byte lines that is one candidate line in ~5000.
const COMMON_PER_MIB: f64 = 1.0;

/// `db check --corpus`: the precision lint over the corpus's healthy logs; exit 2 when a
/// signature fails it.
fn precision(db: &Database, set: &SignatureSet, corpus: &std::path::Path) -> Result<u8, Error> {
    let cases = load_corpus(corpus)?;
    let ok: std::collections::HashSet<String> = set
        .signatures
        .iter()
        .filter(|s| s.healthy_ok.is_some())
        .map(|s| s.info.id.clone())
        .collect();
    let found = precision_lint(db, &ok, &cases)?;
    let healthy = cases.iter().filter(|c| c.expect.clean).count();
    for f in &found {
        note(&format!(
            "faultline: precision: {} (not survivable) matches line {} of the healthy log {}: {}",
            f.signature,
            f.line,
            f.case,
            faultline::terminal_safe(&f.text)
        ));
    }
    let mut ids: Vec<&str> = found.iter().map(|f| f.signature.as_str()).collect();
    ids.sort_unstable();
    ids.dedup();
    out(&format!(
        "precision lint: {} healthy logs of {}: {} lines matched by {} signatures that are not survivable ({} with healthy_ok exempt)\n",
        healthy,
        corpus.display(),
        found.len(),
        ids.len(),
        ok.len()
    ));
    Ok(if found.is_empty() {
        EXIT_DIAGNOSED
    } else {
        EXIT_ERROR
    })
}

pub fn run_db(cmd: DbCommand) -> Result<u8, Error> {
    match cmd {
        DbCommand::Check { dir, corpus } => {
            let set = set_or_embedded(dir.as_deref())?;
            let db = Database::compile(&set)?;
            crate::args::warn_skipped(&db);
            let archive = db.to_archive(MAX_DFA_BYTES)?;
            Database::from_archive_bytes(&archive.bytes)?.check_examples(&set)?;
            let examples: usize = set.signatures.iter().map(|s| s.examples.len()).sum();
            let counter: usize = set.signatures.iter().map(|s| s.counterexamples.len()).sum();
            let (anchors, _) = db.anchors();
            for w in set.warnings() {
                note(&format!("faultline: warning: {w}"));
            }
            // The name, the version and the patterns come from the signature directory:
            // shown with every character a terminal would obey escaped (issue 30).
            out_human(&format!(
                        "{} {}: {} signatures under {} vendors, {} patterns, {} examples ({} constructed) and {} counterexamples checked; prefilter: {} anchors ({})\n",
                        db.name(),
                        db.version(),
                        db.signatures().len(),
                        set.vendors().len(),
                        db.pattern_sources().len(),
                        examples,
                        set.constructed_examples(),
                        counter,
                        anchors.len(),
                        db.prefilter_kind(),
                    ));
            out_human(&archive_summary(&db, &archive));
            let load = db.prefilter_load(COMMON_PER_MIB);
            let mut text = format!(
                        "prefilter: {:.1} candidate lines per MiB ({:.2}% of lines), measured on a generated healthy vLLM serving log\n",
                        load.candidate_lines_per_mib,
                        load.candidate_line_share * 100.0
                    );
            for (a, r) in &load.anchors {
                text.push_str(&format!(
                    "common anchor: {a:?} ({r:.1} per MiB): each line holding it is confirmed\n"
                ));
            }
            for c in &load.common {
                text.push_str(&format!(
                            "slow signature: {} has only common literals {:?} ({:.1} per MiB): each such line is confirmed\n",
                            c.owner, c.literals, c.per_mib
                        ));
            }
            out_human(&text);
            match corpus {
                Some(c) => precision(&db, &set, &c),
                None => Ok(EXIT_DIAGNOSED),
            }
        }
        DbCommand::Compile { dir, output } => {
            let db = Database::compile(&set_or_embedded(dir.as_deref())?)?;
            let to_stdout = output.as_os_str() == "-";
            let archive = if to_stdout {
                let archive = db.to_archive(MAX_DFA_BYTES)?;
                let mut stdout = io::stdout().lock();
                stdout
                    .write_all(&archive.bytes)
                    .and_then(|()| stdout.flush())
                    .map_err(|source| Error::Io {
                        path: "standard output".into(),
                        source,
                    })?;
                archive
            } else {
                db.write_archive(&output, MAX_DFA_BYTES)?
            };
            let text = format!(
                "{}: {} {} (hash {}), {} signatures, {} bytes\n{}",
                output.display(),
                db.name(),
                db.version(),
                db.hash(),
                db.signatures().len(),
                archive.bytes.len(),
                archive_summary(&db, &archive),
            );
            // With `-o -` the archive is standard output: the account goes to stderr.
            if to_stdout {
                text.lines().for_each(note);
            } else {
                out_human(&text);
            }
            Ok(EXIT_DIAGNOSED)
        }
        DbCommand::Diff {
            old,
            new,
            corpus,
            format,
        } => run_diff(&old, &new, corpus.as_deref(), format),
        DbCommand::List { format, set } => {
            let db = database(&set)?;
            let mut text = String::new();
            for s in db.signatures() {
                match format {
                    TextOrJson::Json => text.push_str(&signature_json(s)),
                    TextOrJson::Human => text.push_str(&format!(
                        "{:<48} r{:<2} {:<8} {:<8} {:<24} {}",
                        s.id,
                        s.revision,
                        s.role.as_str(),
                        s.severity.as_str(),
                        s.category,
                        s.title
                    )),
                }
                text.push('\n');
            }
            // Human rows hold the signature directory's text: shown escaped (issue 30);
            // JSON keeps the exact text.
            match format {
                TextOrJson::Json => out(&text),
                TextOrJson::Human => out_human(&text),
            }
            Ok(EXIT_DIAGNOSED)
        }
        DbCommand::Export { format, set } => {
            let db = database(&set)?;
            let mut text = String::new();
            for p in db.pattern_sources() {
                match format {
                    ExportFormat::Patterns => text.push_str(p),
                    ExportFormat::PatternsUnnamed => text.push_str(&faultline::unnamed(p)),
                }
                text.push('\n');
            }
            out(&text);
            Ok(EXIT_DIAGNOSED)
        }
    }
}

/// How an archive confirms lines: stored DFAs, and the patterns left to compile at first use.
fn archive_summary(db: &Database, archive: &Archive) -> String {
    let mut text = format!(
        "archive format {ARCHIVE_FORMAT}: {} of {} patterns confirmed by stored DFAs ({} KiB with the structural markers'), {} by their literals alone (no DFA stored), {} compiled at first use (DFA over {} KiB)\n",
        archive.dfas,
        db.pattern_sources().len(),
        archive.dfa_bytes / 1024,
        archive.literal,
        archive.lazy.len(),
        MAX_DFA_BYTES / 1024,
    );
    for (p, reason) in &archive.lazy {
        let owner = (0..db.signatures().len() as u32)
            .find(|&s| db.signature_patterns(s).contains(p))
            .map_or("?", |s| db.signature(s).id.as_str());
        text.push_str(&format!(
            "  {owner}: pattern {:?} has no stored DFA: {reason}\n",
            db.pattern_sources()[*p as usize]
        ));
    }
    text
}

/// One line of `db list --format json`: a view of a signature's [`SignatureInfo`] (the one
/// metadata type), without its remediation and survivability. The fields stand in
/// alphabetical order, the key order this output keeps.
#[derive(Serialize)]
struct ListedSignature<'a> {
    category: &'a str,
    id: &'a str,
    priority: i32,
    revision: u32,
    role: Role,
    severity: Severity,
    source: &'a str,
    tags: &'a [String],
    title: &'a str,
}

/// `s` as one line of `db list --format json` (without the newline).
fn signature_json(s: &SignatureInfo) -> String {
    let listed = ListedSignature {
        category: &s.category,
        id: &s.id,
        priority: s.priority,
        revision: s.revision,
        role: s.role,
        severity: s.severity,
        source: &s.source,
        tags: &s.tags,
        title: &s.title,
    };
    serde_json::to_string(&listed).expect("a struct of strings and numbers serialises")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_listed_signature_keeps_its_keys_in_alphabetical_order() {
        let info = SignatureInfo {
            id: "v.a.b".into(),
            revision: 3,
            title: "A \"quoted\" title".into(),
            role: Role::Symptom,
            severity: Severity::Warning,
            category: "c".into(),
            tags: vec!["x".into(), "y".into()],
            priority: -2,
            survivable: true,
            remediation: "not listed".into(),
            source: "vendor: f.py".into(),
            anchor: faultline::Anchor::Message,
            quiet_levels: Vec::new(),
        };
        assert_eq!(
            signature_json(&info),
            r#"{"category":"c","id":"v.a.b","priority":-2,"revision":3,"role":"symptom","severity":"warning","source":"vendor: f.py","tags":["x","y"],"title":"A \"quoted\" title"}"#
        );
    }
}
