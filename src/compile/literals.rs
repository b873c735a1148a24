//! Required-literal extraction by walking a pattern's parsed form, and anchor selection.
//!
//! regex-syntax's prefix/suffix extractor misses inner literals (`(\S+): undefined symbol:`),
//! so this walks the HIR: every match of a pattern must contain at least one member of its
//! required set. Anchors are short substrings chosen to cover every member with as few
//! strings as possible, so that the SIMD (Teddy) prefilter applies.

use std::collections::{HashMap, HashSet};

use regex_syntax::hir::{Class, Hir, HirKind};

/// Most alternatives an exact or required set may hold before it is abandoned.
const MAX_SET: usize = 64;
/// Longest member kept in an exact set; longer runs are cut (a prefix is still required).
const MAX_MEMBER: usize = 128;
/// Shortest member a required set may hold for the prefilter to use it.
pub const MIN_LITERAL: usize = 4;
/// Most anchors the packed (Teddy) searcher takes.
pub const MAX_ANCHORS: usize = 64;

/// Parses a pattern in faultline's dialect: Unicode classes off, any byte allowed.
#[allow(clippy::result_large_err)]
pub fn parse(pattern: &str) -> Result<Hir, regex_syntax::Error> {
    regex_syntax::ParserBuilder::new()
        .unicode(false)
        .utf8(false)
        .build()
        .parse(pattern)
}

/// A set of literals at least one of which occurs in every match of `hir`, if one exists.
pub fn required(hir: &Hir) -> Option<Vec<Vec<u8>>> {
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
pub fn rarity(bytes: &[u8]) -> usize {
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

/// Chooses anchors: short substrings such that every member contains at least one.
///
/// Greedy set cover over substrings of 4 to 8 bytes, weighing how many members a substring
/// covers against how rare it is in log text. Each member is covered; the result holds at
/// most as many anchors as members.
pub fn choose_anchors(members: &[Vec<u8>]) -> Vec<Vec<u8>> {
    let mut covers: HashMap<&[u8], Vec<usize>> = HashMap::new();
    for (i, m) in members.iter().enumerate() {
        let mut seen = HashSet::new();
        for len in MIN_LITERAL..=m.len().min(8) {
            for w in m.windows(len) {
                if seen.insert(w) {
                    covers.entry(w).or_default().push(i);
                }
            }
        }
    }
    let mut candidates: Vec<(&[u8], Vec<usize>)> = covers.into_iter().collect();
    candidates.sort_by(|a, b| a.0.cmp(b.0));
    let mut covered = vec![false; members.len()];
    let mut left = members.iter().filter(|m| m.len() >= MIN_LITERAL).count();
    let mut anchors = Vec::new();
    while left > 0 {
        let mut best: Option<(usize, usize)> = None;
        for (ci, (sub, who)) in candidates.iter().enumerate() {
            let gain = who.iter().filter(|&&i| !covered[i]).count();
            if gain == 0 {
                continue;
            }
            // Coverage counts most, rarity breaks the tie between wide-covering strings.
            let score = gain * 64 + rarity(sub) * 4 + sub.len();
            if best.is_none_or(|(_, s)| score > s) {
                best = Some((ci, score));
            }
        }
        let Some((ci, _)) = best else { break };
        for &i in &candidates[ci].1 {
            if !covered[i] {
                covered[i] = true;
                left -= 1;
            }
        }
        anchors.push(candidates[ci].0.to_vec());
    }
    anchors
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(p: &str) -> Vec<String> {
        required(&parse(p).unwrap())
            .unwrap_or_default()
            .into_iter()
            .map(|m| String::from_utf8(m).unwrap())
            .collect()
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

    #[test]
    fn anchors_cover_every_member() {
        let members: Vec<Vec<u8>> = [
            "CUDA out of memory",
            "CUDA error: an illegal",
            "NCCL WARN x",
        ]
        .iter()
        .map(|s| s.as_bytes().to_vec())
        .collect();
        let anchors = choose_anchors(&members);
        for m in &members {
            assert!(anchors
                .iter()
                .any(|a| m.windows(a.len()).any(|w| w == a.as_slice())));
        }
        assert!(anchors.len() <= 2, "{anchors:?}");
    }
}
