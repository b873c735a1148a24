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
// The searcher layout (how many anchors a packed searcher takes) is the engine's; the
// compiler chooses anchors to fit it.
pub use crate::database::matcher::{group_sizes, MAX_ANCHORS, MAX_GROUPS, MIN_LITERAL};
// What counts as a plain literal is part of the regex dialect.
pub use crate::database::dialect::{parse, plain_literal};

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

/// Longest anchor considered: longer substrings are rarer but shared by fewer literals.
const MAX_ANCHOR_LEN: usize = 12;
/// Bytes of generated healthy serving log that anchor frequencies are estimated on.
const BACKGROUND_BYTES: usize = 192 << 10;
/// Modelled fixed cost of confirming one candidate line, in nanoseconds (leaving and
/// restarting the searchers, the in-place literal checks, analysis of a hit).
const CONFIRM_NS: f64 = 300.0;
/// Modelled cost per byte of a candidate line, in nanoseconds: its bounds are found, every
/// searcher runs over it again and each pattern whose literal it holds runs over all of it.
/// Measured: a 907-byte prompt line cost 0.42 µs more as a candidate than as a passed line,
/// a 114-byte line about 0.3 µs (see BENCHMARKS.md, "Signature set 2027.01.0 vs 2026.12.0").
const CONFIRM_NS_PER_BYTE: f64 = 0.4;
/// Modelled cost of verifying one fingerprint hit of the packed searcher, in nanoseconds: a
/// mostly mispredicted branch and a comparison per bucket member. Measured at 20-55 ns by
/// the prefilter's time on prompt text against its fingerprint passes, two anchor sets.
const VERIFY_NS: f64 = 40.0;

/// A sample of healthy serving log (generated, fixed seed) that stands for "ordinary text"
/// when anchors are weighed by how often they would fire.
pub fn background() -> &'static [u8] {
    static BG: std::sync::OnceLock<Vec<u8>> = std::sync::OnceLock::new();
    BG.get_or_init(|| {
        let mut v = Vec::with_capacity(BACKGROUND_BYTES + 4096);
        crate::synth::LogGen::new(crate::synth::SynthOptions {
            seed: 0x00ba_c6d0,
            non_ascii: 0.01,
            long_line_rate: 0.0,
            ..crate::synth::SynthOptions::default()
        })
        .fill(&mut v, BACKGROUND_BYTES);
        v
    })
}

/// Modelled prefilter cost in nanoseconds per byte for `n` anchors (the packed searcher
/// slows as its buckets fill: measured on a 2-core x86-64 with AVX2, see BENCHMARKS.md).
fn searcher_ns_per_byte(n: usize) -> f64 {
    match n {
        0..=8 => 0.10,
        9..=16 => 0.12,
        17..=32 => 0.28,
        33..=MAX_ANCHORS => 0.38,
        _ => 4.0,
    }
}

/// One substring that may become an anchor.
struct Candidate<'a> {
    bytes: &'a [u8],
    /// Members (by index) that contain it.
    who: Vec<usize>,
    /// Occurrences per byte of ordinary text.
    freq: f64,
    /// Modelled nanoseconds per byte of ordinary text for confirming the lines it occurs
    /// on: each such line once, priced by its length.
    confirm: f64,
    /// Modelled nanoseconds per scanned byte it adds: confirming the lines it occurs on,
    /// and verifying the packed searcher's fingerprint hits on its first four bytes.
    cost: f64,
}

/// An anchor set and its modelled cost.
#[derive(Clone, Debug)]
pub struct AnchorChoice {
    /// The anchors, each a substring of at least one member; every member of at least
    /// [`MIN_LITERAL`] bytes contains one.
    pub anchors: Vec<Vec<u8>>,
    /// Per anchor: expected occurrences per MiB of ordinary serving log.
    pub per_mib: Vec<f64>,
}

/// Chooses anchors: short substrings such that every member contains at least one.
///
/// Weighted greedy set cover over substrings of 4 to 12 bytes, each weighed by how often it
/// occurs in ordinary log text ([`background`]) plus a per-anchor price; the price that
/// minimises the modelled scan cost (searcher speed for that many anchors plus confirming
/// the expected candidates) wins. Rare literals are preferred; a frequent substring is
/// picked only when it lets the packed searcher stay small.
pub fn choose_anchors(members: &[Vec<u8>]) -> AnchorChoice {
    choose_anchors_in(members, background())
}

/// [`choose_anchors`] with frequencies estimated on `sample`.
pub fn choose_anchors_in(members: &[Vec<u8>], sample: &[u8]) -> AnchorChoice {
    let mut covers: HashMap<&[u8], Vec<usize>> = HashMap::new();
    for (i, m) in members.iter().enumerate() {
        if m.len() < MIN_LITERAL {
            continue;
        }
        let mut seen = HashSet::new();
        for len in MIN_LITERAL..=m.len().min(MAX_ANCHOR_LEN) {
            for w in m.windows(len) {
                if seen.insert(w) {
                    covers.entry(w).or_default().push(i);
                }
            }
        }
    }
    let mut cands: Vec<Candidate> = covers
        .into_iter()
        .map(|(bytes, who)| Candidate {
            bytes,
            who,
            freq: 0.0,
            confirm: 0.0,
            cost: 0.0,
        })
        .collect();
    cands.sort_by(|a, b| a.bytes.cmp(b.bytes));
    estimate_frequencies(&mut cands, sample);
    let prefix_freq: HashMap<&[u8], f64> = cands
        .iter()
        .filter(|c| c.bytes.len() == MIN_LITERAL)
        .map(|c| (c.bytes, c.freq))
        .collect();
    for c in &mut cands {
        let f4 = prefix_freq
            .get(&c.bytes[..MIN_LITERAL])
            .copied()
            .unwrap_or(c.freq);
        c.cost = c.confirm + f4 * VERIFY_NS;
    }
    // Of the substrings that cover exactly the same members, only the rarest can be chosen
    // (ties: the longest, then the first); this shrinks the cover's work many times over.
    let mut by_who: HashMap<&[usize], usize> = HashMap::new();
    for (i, c) in cands.iter().enumerate() {
        let slot = by_who.entry(c.who.as_slice()).or_insert(i);
        let k = &cands[*slot];
        if (c.cost, std::cmp::Reverse(c.bytes.len())) < (k.cost, std::cmp::Reverse(k.bytes.len())) {
            *slot = i;
        }
    }
    let mut keep: Vec<usize> = by_who.into_values().collect();
    keep.sort_unstable();
    let mut slots: Vec<Option<Candidate>> = cands.into_iter().map(Some).collect();
    let cands: Vec<Candidate> = keep.iter().filter_map(|&i| slots[i].take()).collect();
    let needed = members.iter().filter(|m| m.len() >= MIN_LITERAL).count();
    // Per-anchor prices, in occurrences per byte: 0 picks the rarest substrings whatever
    // their number; larger prices trade rarity for sharing.
    let mut prices = vec![0.0];
    let mut p = 1e-6;
    while p < 1.0 {
        prices.push(p);
        // Finer steps where the anchor count crosses the packed searcher's limit.
        p *= if p < 1e-3 { 4.0 } else { 1.4 };
    }
    let freq = byte_freqs(sample);
    let windows = Windows::of(sample);
    let mut best: Option<(f64, Vec<usize>)> = None;
    // Over the packed searchers' limit, the general automaton runs at about the same speed
    // whatever its anchor count, so the rarest cover wins there (was: the fewest anchors,
    // which are the most common substrings: with 500 extra signatures, "ing " and "ion "
    // made 70% of a serving log's lines candidates and the scan 70 times slower).
    let mut rarest_over: Option<(f64, Vec<usize>)> = None;
    for price in prices {
        let chosen = weighted_cover(&cands, members.len(), needed, price);
        if chosen.len() > MAX_ANCHORS * MAX_GROUPS {
            // Over the limit: only as a last resort, the cheapest in confirmations.
            let cost = chosen.iter().map(|&c| cands[c].cost).sum::<f64>();
            if rarest_over.as_ref().is_none_or(|(r, _)| cost < *r) {
                rarest_over = Some((cost, chosen));
            }
            continue;
        }
        // Rarest anchors first, so each searcher holds alike ones; then each group dealt to
        // its buckets.
        let mut chosen = chosen;
        chosen.sort_by(|&a, &b| cands[a].cost.total_cmp(&cands[b].cost).then(a.cmp(&b)));
        let mut arranged = Vec::with_capacity(chosen.len());
        let mut cost = chosen.iter().map(|&c| cands[c].cost).sum::<f64>();
        let mut at = 0;
        for size in group_sizes(chosen.len()) {
            let group = &chosen[at..at + size];
            at += size;
            let bytes: Vec<&[u8]> = group.iter().map(|&c| cands[c].bytes).collect();
            let order = teddy_order(&bytes, &freq, &windows);
            cost += searcher_ns_per_byte(size)
                + fingerprint_passes(&bytes, &order, &windows) / sample.len().max(1) as f64
                    * VERIFY_NS;
            arranged.extend(order.into_iter().map(|i| group[i]));
        }
        if best.as_ref().is_none_or(|(c, _)| cost < *c) {
            best = Some((cost, arranged));
        }
    }
    let mut chosen = best.or(rarest_over).map(|(_, c)| c).unwrap_or_default();
    // The winner's buckets, refined on exact counts.
    let mut at = 0;
    for size in group_sizes(chosen.len()) {
        let group = chosen[at..at + size].to_vec();
        let bytes: Vec<&[u8]> = group.iter().map(|&c| cands[c].bytes).collect();
        let order = refine_order(&bytes, (0..size).collect(), &windows);
        for (slot, i) in chosen[at..at + size].iter_mut().zip(order) {
            *slot = group[i];
        }
        at += size;
    }
    AnchorChoice {
        anchors: chosen.iter().map(|&c| cands[c].bytes.to_vec()).collect(),
        per_mib: chosen
            .iter()
            .map(|&c| cands[c].freq * (1 << 20) as f64)
            .collect(),
    }
}

/// How often each byte occurs in a sample, per byte (never zero).
struct Freqs {
    bytes: [f64; 256],
}

fn byte_freqs(sample: &[u8]) -> Freqs {
    let mut counts = [1u64; 256];
    for &b in sample {
        counts[b as usize] += 1;
    }
    let total = (sample.len() + 256) as f64;
    Freqs {
        bytes: counts.map(|n| n as f64 / total),
    }
}

/// Buckets of aho-corasick's packed (Teddy) searcher for `n` patterns.
fn teddy_buckets(n: usize) -> usize {
    if n > 32 {
        16
    } else {
        8
    }
}

/// A Teddy bucket's fingerprint: per leading byte position, the low and high nibbles seen.
#[derive(Clone, Copy, Default)]
struct Fingerprint {
    lo: [u16; MIN_LITERAL],
    hi: [u16; MIN_LITERAL],
}

impl Fingerprint {
    fn with(mut self, anchor: &[u8]) -> Fingerprint {
        for (j, &b) in anchor.iter().take(MIN_LITERAL).enumerate() {
            self.lo[j] |= 1 << (b & 0xf);
            self.hi[j] |= 1 << (b >> 4);
        }
        self
    }

    /// Whether the window `w` passes this fingerprint.
    fn passes(&self, w: &[u8; MIN_LITERAL]) -> bool {
        (0..MIN_LITERAL)
            .all(|j| self.lo[j] & (1 << (w[j] & 0xf)) != 0 && self.hi[j] & (1 << (w[j] >> 4)) != 0)
    }

    /// Chance that a text position passes this fingerprint, its bytes taken as independent
    /// (a pair model of ordinary text was tried and ordered buckets worse).
    fn pass_rate(&self, freq: &Freqs) -> f64 {
        let mut rate = 1.0;
        for j in 0..MIN_LITERAL {
            let mut q = 0.0;
            for hi in bits(self.hi[j]) {
                for lo in bits(self.lo[j]) {
                    q += freq.bytes[hi << 4 | lo];
                }
            }
            rate *= q;
        }
        rate
    }
}

/// The set bits of `mask`, as indices.
fn bits(mask: u16) -> impl Iterator<Item = usize> {
    (0..16).filter(move |i| mask & (1 << i) != 0)
}

/// Orders anchors so that aho-corasick's packed searcher, which deals pattern `i` to bucket
/// `B - 1 - i % B`, groups anchors with alike leading bytes: a bucket's fingerprint accepts
/// any mix of its members' nibbles, so mixing unlike anchors makes it fire on ordinary text.
/// Greedy: each anchor goes to the bucket whose modelled pass rate grows least.
/// The greedy deal is a model; the plain order is kept when it passes less often on `sample`.
fn teddy_order(anchors: &[&[u8]], freq: &Freqs, windows: &Windows) -> Vec<usize> {
    let greedy = teddy_deal(anchors, freq);
    let plain: Vec<usize> = (0..anchors.len()).collect();
    if fingerprint_passes(anchors, &plain, windows) < fingerprint_passes(anchors, &greedy, windows)
    {
        plain
    } else {
        greedy
    }
}

fn teddy_deal(anchors: &[&[u8]], freq: &Freqs) -> Vec<usize> {
    let n = anchors.len();
    let b = teddy_buckets(n);
    // Bucket k receives the ids i with B - 1 - i % B == k.
    let capacity: Vec<usize> = (0..b)
        .map(|k| (0..n).filter(|i| b - 1 - i % b == k).count())
        .collect();
    let mut prints = vec![Fingerprint::default(); b];
    let mut rates = vec![0.0; b];
    let mut members: Vec<Vec<usize>> = vec![Vec::new(); b];
    // Anchors whose leading bytes are rarest first: they are the cheapest to keep apart.
    let mut todo: Vec<usize> = (0..n).collect();
    let alone = |i: &usize| Fingerprint::default().with(anchors[*i]).pass_rate(freq);
    todo.sort_by(|x, y| alone(x).total_cmp(&alone(y)).then(x.cmp(y)));
    for i in todo {
        let mut best: Option<(f64, usize)> = None;
        for k in 0..b {
            if members[k].len() >= capacity[k] {
                continue;
            }
            let grown = prints[k].with(anchors[i]).pass_rate(freq) - rates[k];
            if best.is_none_or(|(g, _)| grown < g) {
                best = Some((grown, k));
            }
        }
        if let Some((_, k)) = best {
            prints[k] = prints[k].with(anchors[i]);
            rates[k] = prints[k].pass_rate(freq);
            members[k].push(i);
        }
    }
    let mut order = Vec::with_capacity(n);
    let mut next = vec![0usize; b];
    for id in 0..n {
        let k = b - 1 - id % b;
        if let Some(&i) = members[k].get(next[k]) {
            order.push(i);
            next[k] += 1;
        }
    }
    order
}

/// The buckets aho-corasick's packed searcher puts anchors in when they are added in
/// `order`: the `id`-th added goes to bucket `B - 1 - id % B`, unless an earlier one has the
/// same low nibbles in its first four bytes, whose bucket it then shares.
fn realized_buckets(anchors: &[&[u8]], order: &[usize]) -> Vec<Vec<usize>> {
    let b = teddy_buckets(anchors.len());
    let mut out = vec![Vec::new(); b];
    let mut by_nibbles: HashMap<[u8; MIN_LITERAL], usize> = HashMap::new();
    for (id, &i) in order.iter().enumerate() {
        let mut key = [0u8; MIN_LITERAL];
        for (k, &byte) in key.iter_mut().zip(anchors[i]) {
            *k = byte & 0xf;
        }
        let k = *by_nibbles.entry(key).or_insert(b - 1 - id % b);
        out[k].push(i);
    }
    out
}

/// The distinct 4-byte windows of a sample, with counts: what a bucket fingerprint is tried
/// against.
struct Windows(Vec<([u8; MIN_LITERAL], u32)>);

impl Windows {
    fn of(sample: &[u8]) -> Windows {
        let mut counts: HashMap<[u8; MIN_LITERAL], u32> = HashMap::new();
        for w in sample.windows(MIN_LITERAL) {
            let mut key = [0u8; MIN_LITERAL];
            key.copy_from_slice(w);
            *counts.entry(key).or_default() += 1;
        }
        let mut v: Vec<_> = counts.into_iter().collect();
        v.sort_unstable();
        Windows(v)
    }

    /// Only the windows `print` passes: a bucket's fingerprint is a subset of its group's.
    fn passing(&self, print: &Fingerprint) -> Windows {
        Windows(
            self.0
                .iter()
                .filter(|(w, _)| print.passes(w))
                .copied()
                .collect(),
        )
    }

    fn passes(&self, print: &Fingerprint) -> u64 {
        self.0
            .iter()
            .filter(|(w, _)| print.passes(w))
            .map(|&(_, n)| u64::from(n))
            .sum()
    }
}

/// Bucket fingerprint passes over the sample `windows` came from, counted exactly (a bucket
/// passing at a position costs a verification of its members), with anchors added in `order`.
fn fingerprint_passes(anchors: &[&[u8]], order: &[usize], windows: &Windows) -> f64 {
    realized_buckets(anchors, order)
        .iter()
        .map(|members| bucket_passes(anchors, members, windows))
        .sum::<u64>() as f64
}

/// How often the bucket holding `members` passes over the sample `windows` came from.
fn bucket_passes(anchors: &[&[u8]], members: &[usize], windows: &Windows) -> u64 {
    let print = members
        .iter()
        .fold(Fingerprint::default(), |f, &i| f.with(anchors[i]));
    windows.passes(&print)
}

/// Improves an order by swapping pairs of anchors while the exact number of fingerprint
/// passes over the sample falls (a few rounds at most). The greedy deal's model takes bytes
/// as independent; on log text the swaps found here cut the passes many times over.
fn refine_order(anchors: &[&[u8]], mut order: Vec<usize>, windows: &Windows) -> Vec<usize> {
    let n = order.len();
    if n < 2 {
        return order;
    }
    let all = (0..n).fold(Fingerprint::default(), |f, i| f.with(anchors[i]));
    let windows = windows.passing(&all);
    let mut buckets = realized_buckets(anchors, &order);
    let mut costs: Vec<u64> = buckets
        .iter()
        .map(|m| bucket_passes(anchors, m, &windows))
        .collect();
    for _ in 0..4 {
        let before: u64 = costs.iter().sum();
        for x in 0..n {
            for y in x + 1..n {
                if costs.iter().all(|&c| c == 0) {
                    return order;
                }
                order.swap(x, y);
                let trial = realized_buckets(anchors, &order);
                // Only buckets whose members changed need counting again.
                let mut trial_costs = costs.clone();
                for (k, members) in trial.iter().enumerate() {
                    if *members != buckets[k] {
                        trial_costs[k] = bucket_passes(anchors, members, &windows);
                    }
                }
                if trial_costs.iter().sum::<u64>() < costs.iter().sum::<u64>() {
                    buckets = trial;
                    costs = trial_costs;
                } else {
                    order.swap(x, y);
                }
            }
        }
        if costs.iter().sum::<u64>() >= before {
            break;
        }
    }
    order
}

/// The modelled cost in nanoseconds of confirming a candidate line of `len` bytes.
fn confirm_ns(len: usize) -> f64 {
    CONFIRM_NS + CONFIRM_NS_PER_BYTE * len as f64
}

/// Counts every candidate's occurrences in `sample` (one overlapping automaton pass) and
/// turns them into occurrences per byte; prices the lines each occurs on (each line once,
/// by its length: a candidate on a long line is confirmed over the whole line).
fn estimate_frequencies(cands: &mut [Candidate], sample: &[u8]) {
    let mut counts = vec![0u64; cands.len()];
    let mut line_ns = vec![0f64; cands.len()];
    // Per candidate, the start of the last line it was priced on (+1; 0 for none).
    let mut last_line = vec![0usize; cands.len()];
    if let Ok(ac) = aho_corasick::AhoCorasick::builder()
        .match_kind(aho_corasick::MatchKind::Standard)
        .build(cands.iter().map(|c| c.bytes))
    {
        // Matches come in order of their end, so the current line only moves forward.
        let (mut line_start, mut line_end) = (0, 0);
        for m in ac.find_overlapping_iter(sample) {
            let i = m.pattern().as_usize();
            counts[i] += 1;
            if m.start() >= line_end {
                line_start = memchr::memrchr(b'\n', &sample[..m.start()]).map_or(0, |k| k + 1);
                line_end = memchr::memchr(b'\n', &sample[m.start()..])
                    .map_or(sample.len(), |k| m.start() + k);
            }
            if last_line[i] != line_start + 1 {
                last_line[i] = line_start + 1;
                line_ns[i] += confirm_ns(line_end - line_start);
            }
        }
    }
    let len = sample.len().max(1) as f64;
    let lines = bytecount::count(sample, b'\n').max(1);
    let mean_line = sample.len() / lines;
    let mut bytes = [1u64; 256];
    for &b in sample {
        bytes[b as usize] += 1;
    }
    for ((c, n), ns) in cands.iter_mut().zip(counts).zip(line_ns) {
        if n > 0 {
            c.freq = n as f64 / len;
            c.confirm = ns / len;
        } else {
            // Unseen: at most half an occurrence, less when its bytes are rare (an
            // independent-bytes model), so longer and rarer substrings still rank first;
            // on a line of average length.
            let model: f64 = c
                .bytes
                .iter()
                .map(|&b| bytes[b as usize] as f64 / len)
                .product();
            c.freq = model.min(0.5 / len);
            c.confirm = c.freq * confirm_ns(mean_line);
        }
    }
}

/// Greedy weighted set cover: repeatedly takes the substring with the most newly covered
/// members per unit of (frequency + price). Lazy: scores only fall, so a popped score that
/// is still the best after recomputing is taken.
fn weighted_cover(cands: &[Candidate], members: usize, needed: usize, price: f64) -> Vec<usize> {
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;
    let score = |gain: usize, c: &Candidate| gain as f64 / (c.cost + price);
    // Scores are positive, so their bit patterns order like the numbers.
    let mut heap: BinaryHeap<(u64, Reverse<usize>)> = cands
        .iter()
        .enumerate()
        .map(|(i, c)| (score(c.who.len(), c).to_bits(), Reverse(i)))
        .collect();
    let mut covered = vec![false; members];
    let mut left = needed;
    let mut chosen = Vec::new();
    while left > 0 {
        let Some((s, Reverse(i))) = heap.pop() else {
            break;
        };
        let gain = cands[i].who.iter().filter(|&&m| !covered[m]).count();
        if gain == 0 {
            continue;
        }
        let now = score(gain, &cands[i]).to_bits();
        if now < s && heap.peek().is_some_and(|&(top, _)| top > now) {
            heap.push((now, Reverse(i)));
            continue;
        }
        for &m in &cands[i].who {
            if !covered[m] {
                covered[m] = true;
                left -= 1;
            }
        }
        chosen.push(i);
    }
    chosen
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
            r"a.b", r"(?i)abc", r"a\d", r"\bword", r"a|b", r"x{2}", "", r"a\<", "\tab", "é",
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
        let anchors = choose_anchors(&members).anchors;
        for m in &members {
            assert!(anchors
                .iter()
                .any(|a| m.windows(a.len()).any(|w| w == a.as_slice())));
        }
        assert!(anchors.len() <= members.len(), "{anchors:?}");
    }

    #[test]
    fn anchors_prefer_rare_substrings() {
        // "request " is common in serving logs; each member has rarer text of its own.
        let members: Vec<Vec<u8>> = ["request XQZJ failed", "request QJXZ aborted"]
            .iter()
            .map(|s| s.as_bytes().to_vec())
            .collect();
        let choice = choose_anchors(&members);
        for a in &choice.anchors {
            let a = String::from_utf8_lossy(a);
            assert!(!a.contains("request") && !a.contains("ues"), "{a}");
        }
        assert_eq!(choice.anchors.len(), choice.per_mib.len());
    }

    #[test]
    fn teddy_deal_spreads_common_anchors() {
        // Dealt in plain order, bucket 7 - i % 8 pairs anchor i with i + 8: lowercase with
        // lowercase and uppercase with uppercase. A bucket's fingerprint admits every mix of
        // its members' nibbles, so two common-letter anchors together admit many common
        // 4-grams; one common and one rare anchor admit few more than the common one alone.
        let anchors: Vec<&[u8]> = vec![
            b"tion", b"ment", b"ness", b"able", b"ERRO", b"CUDA", b"NCCL", b"WARN", b"ious",
            b"ence", b"ship", b"ward", b"INFO", b"FAIL", b"KILL", b"DEAD",
        ];
        let freq = byte_freqs(background());
        let model = |order: &[usize]| {
            let mut prints = [Fingerprint::default(); 8];
            for (id, &i) in order.iter().enumerate() {
                prints[7 - id % 8] = prints[7 - id % 8].with(anchors[i]);
            }
            prints.iter().map(|p| p.pass_rate(&freq)).sum::<f64>()
        };
        let dealt = teddy_deal(&anchors, &freq);
        let mut sorted = dealt.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..16).collect::<Vec<_>>());
        let naive: Vec<usize> = (0..16).collect();
        let (d, n) = (model(&dealt), model(&naive));
        assert!(d < n, "{dealt:?}: {d} vs {n}");
        // The exact count on text agrees, and teddy_order keeps the better of the two.
        let windows = Windows::of(background());
        let order = teddy_order(&anchors, &freq, &windows);
        let passes = |o: &[usize]| fingerprint_passes(&anchors, o, &windows);
        assert!(passes(&order) < passes(&naive));
        // Refining on exact counts never makes it worse.
        let refined = refine_order(&anchors, order.clone(), &windows);
        assert!(passes(&refined) <= passes(&order));
    }
}
