use super::*;
use faultline_db::{load_sources, SourceFile};

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
