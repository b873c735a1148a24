//! A deterministic generator of synthetic signatures, for the signature-count scale bench
//! (BENCHMARKS.md, `benches/scale.sh`): N extra signatures, one pattern each, whose literals
//! are made-up words that ordinary serving logs ([`crate::synth::LogGen`]) never hold, so
//! adding them changes what the prefilter searches for and nothing that is found.
//!
//! Each signature gets three fresh words of random letters (so that two signatures rarely
//! share a 4-byte piece and each needs an anchor of its own), in one of three shapes a real
//! set has: a plain literal, a literal with a capture group, and an alternation
//! of two literals. Every signature has an example and a counterexample, as the format asks.
//!
//! ```
//! use faultline_db::synthetic_set;
//!
//! let a = synthetic_set(50, 7);
//! assert_eq!(a.files, synthetic_set(50, 7).files);
//! assert!(a.literals.len() >= 50 && a.files[0].1.matches("[[signature]]").count() == 50);
//! ```

use std::io;
use std::path::Path;

use crate::synth::Rng;

/// Signatures written per file: 1,000 take about 0.7 MB, far below the file-size cap.
pub(crate) const PER_FILE: usize = 1000;

/// A generated set: `db.toml`, the signature files and every literal the patterns require.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SyntheticSet {
    /// The text of a `db.toml` for the generated signatures alone.
    pub db_toml: String,
    /// `(file name, text)` of each signature file, `synthetic-000.toml` on.
    pub files: Vec<(String, String)>,
    /// The patterns' literals (one for a plain pattern, two for the others): a log line can
    /// only match a synthetic signature if it holds one of these.
    pub literals: Vec<String>,
}

/// What a synthetic message says after its made-up words (ordinary English, as real messages
/// mix rare names with common words).
const FAILURES: &[&str] = &[
    "failed to initialize",
    "handshake timed out",
    "ran out of buffers",
    "is not supported on this device",
    "lost its lease",
    "returned an invalid descriptor",
    "could not be mapped",
    "exceeded its retry budget",
];
/// The healthy message a counterexample says with the same words.
const HEALTHY: &[&str] = &[
    "initialized",
    "handshake completed",
    "buffers ready",
    "is supported",
];

/// A made-up word of 5 to 9 random lowercase letters. Random letters, not syllables: words
/// built from a small stock of syllables share so many 4-byte pieces that a few hundred
/// anchors cover 10,000 of them (measured: 140 anchors, packed searchers) and the bench would
/// not test many anchors; random words need about one anchor per signature, as distinct
/// identifiers in real messages do.
fn word(rng: &mut Rng) -> String {
    let len = 5 + rng.below(5) as usize;
    (0..len)
        .map(|_| char::from(b'a' + rng.below(26) as u8))
        .collect()
}

fn capitalized(w: &str) -> String {
    let mut c = w.chars();
    c.next()
        .map(|f| f.to_ascii_uppercase().to_string() + c.as_str())
        .unwrap_or_default()
}

/// A TOML basic string holding `s` (the generated text has no control characters).
fn quoted(s: &str) -> String {
    format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
}

/// `count` synthetic signatures from `seed`: equal arguments give equal sets.
pub fn synthetic_set(count: usize, seed: u64) -> SyntheticSet {
    let mut rng = Rng(seed ^ 0x51c7_5e75_0f5e_7a11);
    let mut files = Vec::new();
    let mut literals = Vec::with_capacity(count + count / 4);
    let mut text = String::new();
    for i in 0..count {
        if i % PER_FILE == 0 {
            if i > 0 {
                files.push((format!("synthetic-{:03}.toml", i / PER_FILE - 1), text));
            }
            text = String::from(
                "# Synthetic signatures for the signature-count scale bench (faultline_db::synth_set);\n# made-up words that no real log holds.\n",
            );
        }
        let (a, b, c) = (word(&mut rng), word(&mut rng), word(&mut rng));
        let failure = *rng.pick(FAILURES);
        let healthy = *rng.pick(HEALTHY);
        // The patterns' literals are the random words alone: a common phrase in them would
        // let a few anchors cover many signatures (the phrase's rare pieces), which real
        // sets of distinct messages do not allow either. The failure text goes around them.
        let (pattern, example, counter) = match rng.below(5) {
            // A plain literal: confirmed without a regex.
            0 | 1 => {
                let lit = format!("{} {b} {c}", capitalized(&a));
                literals.push(lit.clone());
                (
                    lit.clone(),
                    format!(
                        "ERROR 12-03 10:{:02}:07 [{a}.py:{}] {lit} {failure}",
                        i % 60,
                        10 + i % 900
                    ),
                    format!(
                        "INFO 12-03 10:{:02}:07 [{a}.py:12] {} {b} {healthy}",
                        i % 60,
                        capitalized(&a)
                    ),
                )
            }
            // Two literals around a capture group, like most real patterns.
            2 | 3 => {
                let (x, y) = (
                    format!("{}{} ", capitalized(&a), capitalized(&b)),
                    format!(" {c}{a}"),
                );
                literals.push(x.clone());
                literals.push(y.clone());
                (
                    format!("{x}(?P<target>\\S+){y}"),
                    format!("RuntimeError: {x}rank{}{y} {failure}", i % 8),
                    format!("RuntimeError: {x}{c} {healthy}"),
                )
            }
            // An alternation: two required literals for one pattern.
            _ => {
                let (x, y) = (format!("{a} {c}"), format!("{b} {c}"));
                literals.push(x.clone());
                literals.push(y.clone());
                (
                    format!("(?:{a}|{b}) {c}"),
                    format!("(pid={}) {y} {failure}", 4000 + i),
                    format!("(pid={}) {c} {b} {healthy}", 4000 + i),
                )
            }
        };
        text.push_str(&format!(
            "\n[[signature]]\nid = \"synthetic.{a}.{b}-{i}\"\nrevision = 1\ntitle = {}\nrole = \"cause\"\nseverity = \"error\"\nsurvivable = false\ncategory = \"synthetic\"\ntags = [\"synthetic\"]\npatterns = ['{pattern}']\nremediation = \"Synthetic signature {i} of {count} (seed {seed}), for the scale bench; nothing to do.\"\nsource = \"faultline_db::synth_set (generated)\"\nexamples = [{}]\ncounterexamples = [{}]\nconstructed = [{}]\n",
            quoted(&format!("Synthetic failure {i}: {a} {b} {failure}")),
            quoted(&example),
            quoted(&counter),
            quoted(&example),
        ));
    }
    if count > 0 {
        files.push((
            format!("synthetic-{:03}.toml", (count - 1) / PER_FILE),
            text,
        ));
    }
    SyntheticSet {
        db_toml: "# A synthetic signature set (faultline_db::synth_set).\nname = \"synthetic\"\nversion = \"2027.01.0\"\nformat = 2\n".into(),
        files,
        literals,
    }
}

impl SyntheticSet {
    /// Writes the signature files into `dir` (created if missing), and `db.toml` unless the
    /// directory already has one (a copy of a base set the synthetic signatures extend).
    pub fn write_dir(&self, dir: &Path) -> io::Result<()> {
        std::fs::create_dir_all(dir)?;
        let db = dir.join("db.toml");
        if !db.exists() {
            std::fs::write(db, &self.db_toml)?;
        }
        for (name, text) in &self.files {
            std::fs::write(dir.join(name), text)?;
        }
        Ok(())
    }

    /// How many times each literal occurs in `hay` (overlapping occurrences counted), in
    /// [`SyntheticSet::literals`] order.
    pub fn occurrences(&self, hay: &[u8]) -> Vec<u64> {
        let mut counts = vec![0u64; self.literals.len()];
        let Ok(ac) = aho_corasick::AhoCorasick::new(&self.literals) else {
            return counts;
        };
        for m in ac.find_overlapping_iter(hay) {
            counts[m.pattern().as_usize()] += 1;
        }
        counts
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::signature::{load_sources, SourceFile};
    use crate::synth::{LogGen, SynthOptions};

    fn sources(set: &SyntheticSet) -> Vec<SourceFile> {
        std::iter::once(("db.toml".to_string(), set.db_toml.clone()))
            .chain(set.files.iter().cloned())
            .map(|(name, text)| SourceFile {
                path: name.into(),
                text,
            })
            .collect()
    }

    #[test]
    fn the_same_seed_gives_the_same_set_and_another_seed_another() {
        let a = synthetic_set(1200, 1);
        assert_eq!(a, synthetic_set(1200, 1));
        assert_ne!(a.files, synthetic_set(1200, 2).files);
        assert_eq!(a.files.len(), 2);
        let signatures: usize = a
            .files
            .iter()
            .map(|(_, t)| t.matches("[[signature]]").count())
            .sum();
        assert_eq!(signatures, 1200);
        // Distinct literals, as many as the patterns require.
        let distinct: std::collections::HashSet<_> = a.literals.iter().collect();
        assert_eq!(distinct.len(), a.literals.len());
    }

    #[test]
    fn no_literal_occurs_in_the_generated_benchmark_log() {
        // The bench's log (genlog --seed 1), its first 16 MiB, with the embedded set's
        // examples as its rare failure lines, as genlog writes them.
        let failures = crate::testing::signature_set()
            .signatures
            .iter()
            .flat_map(|s| s.examples.iter().map(|e| e.value.trim_end().to_string()))
            .collect();
        let mut log = Vec::new();
        LogGen::new(SynthOptions {
            seed: 1,
            failures,
            ..SynthOptions::default()
        })
        .fill(&mut log, 16 << 20);
        let set = synthetic_set(10_000, 1);
        let counts = set.occurrences(&log);
        let found: Vec<_> = set
            .literals
            .iter()
            .zip(&counts)
            .filter(|(_, &n)| n > 0)
            .collect();
        assert!(found.is_empty(), "literals found in the log: {found:?}");
        // The counting itself works: a literal written into the log is counted.
        let mut with = log[..1 << 20].to_vec();
        with.extend_from_slice(set.literals[17].as_bytes());
        assert_eq!(set.occurrences(&with)[17], 1);
    }

    #[test]
    fn ten_thousand_signatures_pass_the_caps_and_a_small_set_compiles_and_checks() {
        let big = synthetic_set(10_000, 1);
        let loaded = load_sources(sources(&big)).expect("10,000 synthetic signatures load");
        assert_eq!(loaded.signatures.len(), 10_000);
        let small = load_sources(sources(&synthetic_set(300, 3))).expect("loads");
        let db = crate::Database::compile(&small).expect("compiles");
        // Past the packed searchers' 256 anchors: the examples run through the hashed prefilter.
        assert!(!db.anchors().1, "{} anchors", db.anchors().0.len());
        db.check_examples(&small)
            .expect("examples and counterexamples hold");
    }
}
