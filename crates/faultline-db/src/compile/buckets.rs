//! The packed-searcher bucket model: how the compiler orders each searcher's anchors so
//! that aho-corasick's packed (Teddy) searcher puts alike anchors in one bucket.
//!
//! Design note. A Teddy searcher tests every text position against a fingerprint per
//! bucket: for each of the anchors' first bytes (up to four here), the set of low nibbles
//! and the set of high nibbles its members have there. A position passes a bucket when
//! every byte's nibbles are in the sets; a pass costs a verification of the bucket's
//! members (a mostly mispredicted branch). A fingerprint admits every mix of its members'
//! nibbles, so a bucket holding `tion` and `CUDA` also passes `tUDA`, `CioN`, ...: mixing
//! unlike anchors makes a bucket fire on ordinary text. aho-corasick deals the `id`-th
//! added pattern to bucket `B - 1 - id % B` (B = 8 up to 32 patterns, 16 above), except
//! that a pattern whose first four low nibbles equal an earlier one's shares that one's
//! bucket ([`realized_buckets`] mirrors this rule). The compiler controls only the order.
//!
//! Two steps: [`teddy_deal`] greedily gives each anchor (rarest leading bytes first) to the
//! bucket whose modelled pass rate grows least, bytes taken as independent
//! ([`Fingerprint::pass_rate`]); [`refine_order`] then swaps pairs while the exact number of
//! passes over the sample's distinct 4-byte windows ([`Windows`]) falls. On log text the
//! independent-bytes model is poor (bytes are strongly correlated), and the exact count cut
//! the passes many times over (BENCHMARKS.md, "Where the time goes").

use std::collections::HashMap;

use super::literals::MIN_LITERAL;

/// How often each byte occurs in a sample, per byte (never zero).
pub(super) struct Freqs {
    bytes: [f64; 256],
}

pub(super) fn byte_freqs(sample: &[u8]) -> Freqs {
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
    /// (a pair model of ordinary text orders buckets worse).
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
pub(super) fn teddy_order(anchors: &[&[u8]], freq: &Freqs, windows: &Windows) -> Vec<usize> {
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
pub(super) struct Windows(Vec<([u8; MIN_LITERAL], u32)>);

impl Windows {
    pub(super) fn of(sample: &[u8]) -> Windows {
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
pub(super) fn fingerprint_passes(anchors: &[&[u8]], order: &[usize], windows: &Windows) -> f64 {
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
pub(super) fn refine_order(
    anchors: &[&[u8]],
    mut order: Vec<usize>,
    windows: &Windows,
) -> Vec<usize> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compile::anchors::background;

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
