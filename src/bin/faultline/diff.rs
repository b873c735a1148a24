//! `faultline db diff`: what changed between two signature sets, and the first findings that
//! change on a corpus.

use std::fmt::Write;

use faultline::tools::{diff_corpus, diff_sets, Corpus, FindingChange, FirstFinding, SetDiff};
use faultline::{load_dir, Database, Error, ScanOptions};

use crate::args::TextOrJson;
use crate::output::{out, out_human, EXIT_DIAGNOSED, EXIT_ERROR};

pub fn run_diff(
    old: &std::path::Path,
    new: &std::path::Path,
    corpus: Option<&std::path::Path>,
    format: TextOrJson,
) -> Result<u8, Error> {
    let (a, b) = (load_dir(old)?, load_dir(new)?);
    let d = diff_sets(&a, &b);
    let mut corpus_part = None;
    if let Some(dir) = corpus {
        let c = Corpus::load(dir)?;
        let (da, db) = (Database::compile(&a)?, Database::compile(&b)?);
        let (changes, errors) = diff_corpus(&da, &db, &c.logs, &c.cases, &ScanOptions::default());
        corpus_part = Some((c.logs.len(), changes, errors));
    }
    let errored = corpus_part.as_ref().is_some_and(|(_, _, e)| !e.is_empty());
    match format {
        TextOrJson::Json => {
            let corpus = corpus_part.map(|(inputs, changes, errors)| {
                serde_json::json!({"inputs": inputs, "changes": changes, "errors": errors})
            });
            out(&(serde_json::json!({"diff": d, "corpus": corpus}).to_string() + "\n"));
        }
        TextOrJson::Human => {
            let mut text = set_diff_human(&d);
            if let Some((inputs, changes, errors)) = &corpus_part {
                text.push_str(&corpus_changes_human(changes, *inputs, errors));
            }
            out_human(&text);
        }
    }
    Ok(if errored { EXIT_ERROR } else { EXIT_DIAGNOSED })
}

fn show(f: &Option<FirstFinding>) -> String {
    match f {
        Some(f) => format!("{} ({}, line {})", f.signature, f.role, f.line),
        None => "no finding".into(),
    }
}

fn verdict(p: Option<bool>) -> &'static str {
    match p {
        Some(true) => "pass",
        Some(false) => "fail",
        None => "?",
    }
}

/// The diff of two signature sets for people.
fn set_diff_human(d: &SetDiff) -> String {
    {
        let mut out = format!("{} -> {}\n", d.old, d.new);
        let _ = writeln!(out, "\nadded ({}):", d.added.len());
        for id in &d.added {
            let _ = writeln!(out, "  + {id}");
        }
        let _ = writeln!(out, "\nremoved ({}):", d.removed.len());
        for r in &d.removed {
            let _ = writeln!(
                out,
                "  - {}{}",
                r.id,
                if r.retired {
                    " (retired)"
                } else {
                    "  NOT listed under retired in the new db.toml"
                }
            );
        }
        let _ = writeln!(out, "\nchanged ({}):", d.changed.len());
        for c in &d.changed {
            let _ = writeln!(
                out,
                "  ~ {}  r{} -> r{}  {}{}",
                c.id,
                c.old_revision,
                c.new_revision,
                if c.fields.is_empty() {
                    "(revision only)".to_string()
                } else {
                    c.fields.join(", ")
                },
                if c.needs_revision_bump {
                    "  WITHOUT a revision bump"
                } else {
                    ""
                }
            );
        }
        out
    }
}

/// The corpus part of the diff for people.
fn corpus_changes_human(changes: &[FindingChange], inputs: usize, errors: &[String]) -> String {
    let mut out = format!(
        "\nfirst finding changed ({} of {} inputs):\n",
        changes.len(),
        inputs
    );
    for c in changes {
        let _ = write!(out, "  {}: {} -> {}", c.input, show(&c.old), show(&c.new));
        if c.old_pass.is_some() {
            let _ = write!(
                out,
                "  [expected: {} -> {}]",
                verdict(c.old_pass),
                verdict(c.new_pass)
            );
        }
        out.push('\n');
    }
    for e in errors {
        let _ = writeln!(out, "  unreadable: {e}");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use faultline::{load_sources, SourceFile};
    use std::path::PathBuf;

    fn set(retired: &str, sigs: &[(&str, u32, &str)]) -> faultline::SignatureSet {
        let mut text = String::new();
        for (id, rev, pattern) in sigs {
            text.push_str(&format!(
                "[[signature]]\nid = \"{id}\"\nrevision = {rev}\ntitle = \"t\"\nrole = \"cause\"\nseverity = \"error\"\ncategory = \"c\"\npatterns = ['{pattern}']\nremediation = \"r\"\nsource = \"s\"\nexamples = ['{pattern}']\ncounterexamples = ['nothing']\n"
            ));
        }
        load_sources(vec![
            SourceFile {
                path: PathBuf::from("db.toml"),
                text: format!("name = \"d\"\nversion = \"1\"\nformat = 1\nretired = [{retired}]\n"),
            },
            SourceFile {
                path: PathBuf::from("a.toml"),
                text,
            },
        ])
        .unwrap()
    }

    #[test]
    fn set_diff_names_unbumped_changes_and_unlisted_removals() {
        let old = set(
            "",
            &[
                ("a.a.quiet", 1, "quiet one"),
                ("a.a.dropped", 1, "dropped one"),
            ],
        );
        let new = set("", &[("a.a.quiet", 1, "quiet two")]);
        let text = set_diff_human(&diff_sets(&old, &new));
        assert!(
            text.contains("~ a.a.quiet  r1 -> r1  patterns, examples  WITHOUT a revision bump"),
            "{text}"
        );
        assert!(text.contains("- a.a.dropped  NOT listed"), "{text}");
    }
}
