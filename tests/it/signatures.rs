//! The shipped signature database: it loads, compiles, and every signature carries examples
//! and counterexamples that the compiler checks through the full scan pipeline.

use faultline::embedded_signature_set;
use faultline::load_dir;
use faultline::Database;
use faultline::EmbeddedDatabase;
use std::path::Path;

#[test]
fn shipped_signatures_check() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("signatures");
    let set = load_dir(&dir).unwrap_or_else(|e| panic!("{e}"));
    for s in &set.signatures {
        assert!(!s.examples.is_empty(), "{} has no example", s.info.id);
        assert!(
            !s.counterexamples.is_empty(),
            "{} has no counterexample",
            s.info.id
        );
    }
    // compile() runs every example through prefilter + confirm and every counterexample.
    Database::compile(&set).unwrap_or_else(|e| panic!("{e}"));
}

#[test]
fn embedded_set_is_the_shipped_directory() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("signatures");
    let shipped = load_dir(&dir).unwrap();
    let embedded = embedded_signature_set().unwrap();
    assert_eq!(shipped.signatures.len(), embedded.signatures.len());
    assert_eq!(shipped.info, embedded.info);
    assert_eq!(
        Database::compile(&shipped).unwrap().hash(),
        Database::embedded().hash()
    );
}

#[test]
fn every_example_is_found_by_a_scan_with_its_line_number() {
    let db = Database::embedded();
    let set = embedded_signature_set().unwrap();
    let mut log = Vec::new();
    let mut expected = Vec::new();
    for (i, s) in set.signatures.iter().enumerate() {
        for ex in &s.examples {
            log.extend_from_slice(b"INFO harmless filler line\n");
            log.extend_from_slice(ex.value.as_bytes());
            log.push(b'\n');
            expected.push((log.iter().filter(|&&b| b == b'\n').count() as u64, i as u32));
        }
    }
    let mut hits = Vec::new();
    faultline::scan_slice(db, &log, &faultline::ScanOptions::default(), &mut |h| {
        hits.push(h)
    });
    for (line, sig) in expected {
        let hit = hits
            .iter()
            .find(|h| h.line == line)
            .unwrap_or_else(|| panic!("line {line} not found"));
        assert!(
            hit.matched.signatures.contains(&sig),
            "line {line}: {:?}",
            hit.matched
        );
    }
}
