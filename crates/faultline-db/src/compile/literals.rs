//! Required-literal extraction by walking a pattern's parsed form.
//!
//! regex-syntax's prefix/suffix extractor misses inner literals (`(\S+): undefined symbol:`),
//! so this walks the HIR: every match of a pattern must contain at least one member of its
//! required set. Which short substrings of those members become anchors is
//! [`super::anchors`]' choice; how anchors are dealt to the packed searcher's buckets is
//! the `buckets` module's.

use regex_syntax::hir::{Class, Hir, HirKind};

/// Most alternatives an exact or required set may hold before it is abandoned.
const MAX_SET: usize = 64;
/// Longest member kept in an exact set; longer runs are cut (a prefix is still required).
const MAX_MEMBER: usize = 128;
// The searcher layout (how many anchors a packed searcher takes) is the engine's; the
// compiler chooses anchors to fit it.
pub(crate) use crate::database::matcher::{group_sizes, MAX_ANCHORS, MAX_GROUPS, MIN_LITERAL};
// What counts as a plain literal is part of the regex dialect.
pub(crate) use crate::database::dialect::parse;

/// A set of literals at least one of which occurs in every match of `hir`, if one exists.
pub(crate) fn required(hir: &Hir) -> Option<Vec<Vec<u8>>> {
    if let Some(set) = exact(hir) {
        if set.iter().all(|m| !m.is_empty()) {
            return Some(set);
        }
    }
    match hir.kind() {
        HirKind::Capture(c) => required(&c.sub),
        HirKind::Repetition(r) if r.min >= 1 => required(&r.sub),
        HirKind::Alternation(branches) => {
            let mut out: Vec<Vec<u8>> = Vec::new();
            for b in branches {
                out.extend(required(b)?);
                if out.len() > MAX_SET {
                    return None;
                }
            }
            Some(dedup(out))
        }
        HirKind::Concat(children) => {
            let mut best: Option<Vec<Vec<u8>>> = None;
            let mut run: Option<Vec<Vec<u8>>> = Some(vec![Vec::new()]);
            let consider = |cand: Vec<Vec<u8>>, best: &mut Option<Vec<Vec<u8>>>| {
                if cand.iter().any(|m| m.is_empty()) {
                    return;
                }
                if best.as_ref().is_none_or(|b| quality(&cand) > quality(b)) {
                    *best = Some(cand);
                }
            };
            for child in children {
                match exact(child) {
                    Some(e) => {
                        let joined = run.take().and_then(|r| product(&r, &e));
                        match joined {
                            Some(j) => run = Some(j),
                            None => {
                                // The run grew too large: keep what it had, restart from this child.
                                run = Some(e);
                            }
                        }
                    }
                    None => {
                        if let Some(r) = run.take() {
                            consider(r, &mut best);
                        }
                        run = Some(vec![Vec::new()]);
                        if let Some(req) = required(child) {
                            consider(req, &mut best);
                        }
                    }
                }
            }
            if let Some(r) = run {
                consider(r, &mut best);
            }
            best
        }
        _ => None,
    }
}

/// The finite language of `hir`, if it is small.
fn exact(hir: &Hir) -> Option<Vec<Vec<u8>>> {
    match hir.kind() {
        HirKind::Empty | HirKind::Look(_) => Some(vec![Vec::new()]),
        HirKind::Literal(lit) => Some(vec![lit.0.to_vec()]),
        HirKind::Class(Class::Bytes(c)) => {
            let n: usize = c.ranges().iter().map(|r| r.len()).sum();
            (n <= 4).then(|| {
                c.ranges()
                    .iter()
                    .flat_map(|r| r.start()..=r.end())
                    .map(|b| vec![b])
                    .collect()
            })
        }
        HirKind::Class(Class::Unicode(c)) => {
            let n: u32 = c
                .ranges()
                .iter()
                .map(|r| r.end() as u32 - r.start() as u32 + 1)
                .sum();
            if n > 4 || c.ranges().iter().any(|r| !r.end().is_ascii()) {
                return None;
            }
            Some(
                c.ranges()
                    .iter()
                    .flat_map(|r| (r.start() as u8)..=(r.end() as u8))
                    .map(|b| vec![b])
                    .collect(),
            )
        }
        HirKind::Capture(c) => exact(&c.sub),
        HirKind::Repetition(r) if Some(r.min) == r.max && r.min <= 8 => {
            let sub = exact(&r.sub)?;
            let mut acc = vec![Vec::new()];
            for _ in 0..r.min {
                acc = product(&acc, &sub)?;
            }
            Some(acc)
        }
        HirKind::Concat(children) => {
            let mut acc = vec![Vec::new()];
            for c in children {
                acc = product(&acc, &exact(c)?)?;
            }
            Some(acc)
        }
        HirKind::Alternation(branches) => {
            let mut out = Vec::new();
            for b in branches {
                out.extend(exact(b)?);
                if out.len() > MAX_SET {
                    return None;
                }
            }
            Some(dedup(out))
        }
        _ => None,
    }
}

fn product(a: &[Vec<u8>], b: &[Vec<u8>]) -> Option<Vec<Vec<u8>>> {
    if a.len() * b.len() > MAX_SET {
        return None;
    }
    let mut out = Vec::with_capacity(a.len() * b.len());
    for x in a {
        for y in b {
            if x.len() + y.len() > MAX_MEMBER {
                return None;
            }
            let mut m = x.clone();
            m.extend_from_slice(y);
            out.push(m);
        }
    }
    Some(dedup(out))
}

fn dedup(mut v: Vec<Vec<u8>>) -> Vec<Vec<u8>> {
    v.sort();
    v.dedup();
    v
}

/// Orders required sets: longer shortest member first (up to a point), then fewer members,
/// then rarer bytes.
fn quality(set: &[Vec<u8>]) -> (usize, isize, usize) {
    let min_len = set.iter().map(Vec::len).min().unwrap_or(0);
    let rarity = set.iter().map(|m| rarity(m)).min().unwrap_or(0);
    (min_len.min(12), -(set.len() as isize), rarity)
}

/// A rough rarity score of a byte string in log text: higher is rarer.
pub(crate) fn rarity(bytes: &[u8]) -> usize {
    bytes
        .iter()
        .map(|&b| match b {
            b' ' | b'e' | b't' | b'a' | b'o' | b'i' | b'n' | b's' | b'r' => 1,
            b'a'..=b'z' | b'0'..=b'9' => 2,
            b'.' | b',' | b':' | b'/' | b'_' | b'-' | b'=' | b'[' | b']' | b'(' | b')' => 2,
            b'A'..=b'Z' => 4,
            0x80..=0xff => 5,
            _ => 3,
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::database::dialect::literal_language;

    fn plain_literal(p: &str) -> Option<Vec<u8>> {
        literal_language(p).and_then(|mut l| (l.len() == 1).then(|| l.remove(0)))
    }

    fn req(p: &str) -> Vec<String> {
        required(&parse(p).unwrap())
            .unwrap_or_default()
            .into_iter()
            .map(|m| String::from_utf8(m).unwrap())
            .collect()
    }

    #[test]
    fn plain_literals_are_only_escaped_text() {
        assert_eq!(
            plain_literal(r"cuda\.py:").as_deref(),
            Some(&b"cuda.py:"[..])
        );
        assert_eq!(
            plain_literal(" NCCL INFO ").as_deref(),
            Some(&b" NCCL INFO "[..])
        );
        for not in [
            r"a.b", r"(?i)abc", r"a\d", r"\bword", r"x{2}", r"a\<", "\tab", "é",
        ] {
            assert_eq!(plain_literal(not), None, "{not}");
        }
        // What it accepts, the regex engine reads the same way.
        for lit in [r"cuda\.py:", r"\[rank0\]: \(x\) \$1 \^ \| a-b # & ~"] {
            let text = plain_literal(lit).unwrap();
            let re = crate::database::matcher::build_regex(lit).unwrap();
            assert!(re.is_match(text.as_slice()));
            let hir = parse(lit).unwrap();
            assert_eq!(required(&hir), Some(vec![text]));
        }
    }

    #[test]
    fn finds_inner_literals() {
        assert_eq!(
            req(r"(\S+): undefined symbol: (\S+)"),
            vec![": undefined symbol: "]
        );
        assert_eq!(
            req(r"No module named '(?P<module>[^']+)'"),
            vec!["No module named '"]
        );
    }

    #[test]
    fn alternation_needs_every_branch() {
        assert_eq!(req("(?:foo bar|baz qux)"), vec!["baz qux", "foo bar"]);
        assert!(req(r"(?:foo bar|\d+)").is_empty());
    }

    #[test]
    fn optional_parts_are_not_required() {
        assert_eq!(req(r"(?:optional )?needed text"), vec!["needed text"]);
        assert_eq!(req(r"x*longer literal\d+"), vec!["longer literal"]);
    }

    #[test]
    fn small_case_variants_expand() {
        let mut r = req("[Cc]annot allocate");
        r.sort();
        assert_eq!(r, vec!["Cannot allocate", "cannot allocate"]);
    }
}
