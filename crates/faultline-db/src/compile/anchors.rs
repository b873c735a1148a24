//! Anchor choice: short substrings of the required literals such that every literal
//! contains one, weighed by how often they would fire on ordinary log text, so that the
//! SIMD (Teddy) prefilter applies with few candidate lines.

use std::collections::{HashMap, HashSet};

use super::buckets::{byte_freqs, fingerprint_passes, refine_order, teddy_order, Windows};
use super::literals::{group_sizes, MAX_ANCHORS, MAX_GROUPS, MIN_LITERAL};
use crate::database::hashed::MAX_STRIDE;

/// Longest anchor considered: longer substrings are rarer but shared by fewer literals.
const MAX_ANCHOR_LEN: usize = 12;
/// Modelled fixed cost of confirming one candidate line, in nanoseconds (the anchors'
/// in-place literal checks, the patterns run, analysis of a hit). Measured in instructions
/// (callgrind, 24 MiB logs, after the scan stopped searching a candidate line twice): a
/// candidate line costs 3,800 (serving log) to 5,900 (independent log) instructions, a fat
/// packed searcher 2.0 per byte; at the searcher's price of 0.38 ns per byte below, that is
/// 700-1,100 ns. At 300 ns a common anchor looks nearly free: with one literal more than two
/// searchers hold, the model would take `" to "` (26% of a serving log's lines candidates)
/// over a third searcher.
const CONFIRM_NS: f64 = 700.0;
/// Modelled cost per byte of a candidate line, in nanoseconds: its bounds are found and each
/// pattern whose literal it holds runs over all of it.
/// Measured: a 907-byte prompt line cost 0.42 µs more as a candidate than as a passed line,
/// a 114-byte line about 0.3 µs (see BENCHMARKS.md, "Signature set 2027.01.0 vs 2026.12.0").
const CONFIRM_NS_PER_BYTE: f64 = 0.4;
/// Modelled cost of verifying one fingerprint hit of the packed searcher, in nanoseconds: a
/// mostly mispredicted branch and a comparison per bucket member. Measured at 20-55 ns by
/// the prefilter's time on prompt text against its fingerprint passes, two anchor sets.
const VERIFY_NS: f64 = 40.0;

/// The generated text anchor frequencies are counted on, checked in
/// (`data/anchor-sample.log`) and covered by the database hash: 192 KiB of generated healthy
/// serving log. Regenerated on purpose by `cargo run --release -p faultline-db --example
/// anchor_sample -- generated` (see that file); the compiler does not generate it, so
/// editing the log generator does not change a compiled archive.
pub(crate) const SAMPLE: &[u8] = include_bytes!("../../data/anchor-sample.log");

/// The real text anchor frequencies are also counted on (`data/anchor-sample-real.log`,
/// covered by the database hash): the lines of the corpus logs (`tests/corpus`) that no
/// signature or structural marker matches, the ordinary lines of many projects' real
/// output. An anchor is priced at the higher of its two rates, so that anchors are not tuned
/// to the generator alone (`anchor_sample -- real tests/corpus`).
pub(crate) const REAL_SAMPLE: &[u8] = include_bytes!("../../data/anchor-sample-real.log");

/// The sample that stands for "ordinary text" when anchors are weighed by how often they
/// would fire ([`SAMPLE`]; [`REAL_SAMPLE`] prices them too).
pub(crate) fn background() -> &'static [u8] {
    SAMPLE
}

/// Packed searchers a layout should not exceed when a layout within it covers the literals.
/// The model priced a third searcher as cheaper once the sample held real corpus text (its
/// common words make more anchors look costly), but it measured slower on serving logs:
/// 7.65 against 5.51 instructions per byte (`.ci/perf-guard`'s log, 142 anchors in three
/// searchers against 126 in two), so the layout is held at two and the sample only moves
/// anchors within it.
const PREFERRED_GROUPS: usize = 2;

/// How many times its modelled cost a layout within [`PREFERRED_GROUPS`] may be held at
/// against the cheapest one beyond it: the preference for fewer searchers corrects a small
/// mispricing, so it must not keep a layout the model finds far costlier (common anchors
/// chosen only to stay within two searchers).
const HELD_LAYOUT_RATIO: f64 = 1.5;

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

/// Modelled cost of the hashed prefilter's pass at its longest stride, in nanoseconds per
/// byte: one 32-byte load, multiply and gather per eight windows.
const HASHED_NS_PER_BYTE: f64 = 0.30;

/// Shortest member the hashed prefilter covers at its longest stride: the anchor needs
/// [`MAX_STRIDE`] whole 4-byte windows. Shorter members are anchored in a packed searcher.
const LONG_MEMBER: usize = MAX_STRIDE + 3;

/// One substring that may become an anchor.
#[derive(Clone)]
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
pub(crate) struct AnchorChoice {
    /// The anchors, each a substring of at least one member; every member of at least
    /// [`MIN_LITERAL`] bytes contains one.
    pub anchors: Vec<Vec<u8>>,
    /// Per anchor: expected occurrences per MiB of ordinary serving log.
    pub per_mib: Vec<f64>,
    /// How many of the first anchors go to packed (Teddy) searchers; the others to the
    /// hashed prefilter.
    pub packed: usize,
}

/// Chooses anchors: short substrings such that every member contains at least one.
///
/// Weighted greedy set cover over substrings of 4 to 12 bytes, each weighed by how often it
/// occurs in ordinary log text ([`background`]) plus a per-anchor price; the price that
/// minimises the modelled scan cost (searcher speed for that many anchors plus confirming
/// the expected candidates) wins. Rare literals are preferred; a frequent substring is
/// picked only when it lets the packed searcher stay small.
pub(crate) fn choose_anchors(members: &[Vec<u8>]) -> AnchorChoice {
    choose_anchors_in(members, background(), REAL_SAMPLE)
}

/// [`choose_anchors`] with frequencies estimated on `sample` (the packed searchers' buckets
/// are also dealt on it) and on `real`, each candidate priced at the higher of its two rates.
pub(crate) fn choose_anchors_in(members: &[Vec<u8>], sample: &[u8], real: &[u8]) -> AnchorChoice {
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
    if !real.is_empty() {
        let mut on_real = cands.clone();
        estimate_frequencies(&mut on_real, real);
        for (c, r) in cands.iter_mut().zip(on_real) {
            c.freq = c.freq.max(r.freq);
            c.confirm = c.confirm.max(r.confirm);
        }
    }
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
    let freq = byte_freqs(sample);
    let windows = Windows::of(sample);
    let split = split_layout(&cands, members, &prefix_freq, &windows);
    let cands = rarest_of_alike(cands);
    let wanted: Vec<bool> = members.iter().map(|m| m.len() >= MIN_LITERAL).collect();
    // Per-anchor prices, in occurrences per byte: 0 picks the rarest substrings whatever
    // their number; larger prices trade rarity for sharing.
    let mut prices = vec![0.0];
    let mut p = 1e-6;
    while p < 1.0 {
        prices.push(p);
        // Finer steps where the anchor count crosses the packed searcher's limit.
        p *= if p < 1e-3 { 4.0 } else { 1.4 };
    }
    // The cheapest layout within PREFERRED_GROUPS searchers and the cheapest beyond it, by
    // modelled cost: the first wins unless it costs HELD_LAYOUT_RATIO times the second.
    let mut within: Option<(f64, Vec<usize>)> = None;
    let mut beyond: Option<(f64, Vec<usize>)> = None;
    // Over the packed searchers' limit, the general prefilter runs at about the same speed
    // whatever its anchor count, so the rarest cover wins there (not the fewest anchors,
    // which are the most common substrings: with 500 extra signatures, "ing " and "ion "
    // make 70% of a serving log's lines candidates and the scan 70 times slower).
    let mut rarest_over: Option<(f64, Vec<usize>)> = None;
    for price in prices {
        let chosen = weighted_cover(&cands, &wanted, price);
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
        let slot = if group_sizes(arranged.len()).len() > PREFERRED_GROUPS {
            &mut beyond
        } else {
            &mut within
        };
        if slot.as_ref().is_none_or(|(k, _)| cost < *k) {
            *slot = Some((cost, arranged));
        }
    }
    let best = match (within, beyond) {
        (Some(w), Some(b)) if w.0 > HELD_LAYOUT_RATIO * b.0 => Some(b),
        (Some(w), _) => Some(w),
        (None, b) => b,
    };
    // The split layout (short members' anchors packed, the others hashed at the longest
    // stride) when it is modelled cheaper than the packed searchers alone.
    if let Some(split) = split {
        if best.as_ref().is_none_or(|(cost, _)| split.cost < *cost) {
            return split.choice;
        }
    }
    let mut chosen = best
        .map(|(_, c)| c)
        .or(rarest_over.map(|(_, c)| c))
        .unwrap_or_default();
    refine_groups(&mut chosen, &cands, &windows);
    let packed = if chosen.len() <= MAX_ANCHORS * MAX_GROUPS {
        chosen.len()
    } else {
        0
    };
    AnchorChoice {
        packed,
        anchors: chosen.iter().map(|&c| cands[c].bytes.to_vec()).collect(),
        per_mib: chosen
            .iter()
            .map(|&c| cands[c].freq * (1 << 20) as f64)
            .collect(),
    }
}

/// Of the substrings that cover exactly the same members, only the rarest can be chosen
/// (ties: the longest, then the first); this shrinks the cover's work many times over.
fn rarest_of_alike(cands: Vec<Candidate>) -> Vec<Candidate> {
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
    keep.iter().filter_map(|&i| slots[i].take()).collect()
}

/// Each packed searcher's group of `chosen` (indices into `cands`, consecutive runs of
/// [`group_sizes`]) dealt to its buckets again, refined on exact fingerprint counts over
/// `windows`.
fn refine_groups(chosen: &mut [usize], cands: &[Candidate], windows: &Windows) {
    let mut at = 0;
    for size in group_sizes(chosen.len()) {
        let group = chosen[at..at + size].to_vec();
        let bytes: Vec<&[u8]> = group.iter().map(|&c| cands[c].bytes).collect();
        let order = refine_order(&bytes, (0..size).collect(), windows);
        for (slot, i) in chosen[at..at + size].iter_mut().zip(order) {
            *slot = group[i];
        }
        at += size;
    }
}

/// A layout and its modelled cost.
struct Priced {
    cost: f64,
    choice: AnchorChoice,
}

/// The split layout: the members shorter than [`LONG_MEMBER`] are covered first, by the
/// rarest substrings that fit one packed searcher group; the other members not yet covered
/// by anchors of [`LONG_MEMBER`] bytes or more in the hashed prefilter, which tests every
/// [`MAX_STRIDE`]-th position, each anchor priced by its lines and by how often each of its
/// first [`MAX_STRIDE`] windows (entered in the table) occurs. `None` when the short
/// members need more anchors than the packed searchers take, or there is nothing to hash.
fn split_layout(
    cands: &[Candidate],
    members: &[Vec<u8>],
    window_freq: &HashMap<&[u8], f64>,
    windows: &Windows,
) -> Option<Priced> {
    let short: Vec<bool> = members
        .iter()
        .map(|m| (MIN_LITERAL..LONG_MEMBER).contains(&m.len()))
        .collect();
    let long: Vec<bool> = members.iter().map(|m| m.len() >= LONG_MEMBER).collect();
    if !long.iter().any(|&l| l) {
        return None;
    }
    let packed_cands = rarest_of_alike(
        cands
            .iter()
            .filter(|c| c.bytes.len() < LONG_MEMBER && c.who.iter().any(|&m| short[m]))
            .cloned()
            .collect(),
    );
    let packed = weighted_cover(&packed_cands, &short, 0.0);
    if packed.len() > MAX_ANCHORS * MAX_GROUPS {
        return None;
    }
    let mut wanted = long;
    for &c in &packed {
        for &m in &packed_cands[c].who {
            wanted[m] = false;
        }
    }
    let hashed_cands = rarest_of_alike(
        cands
            .iter()
            .filter(|c| c.bytes.len() >= LONG_MEMBER)
            .map(|c| {
                let windows: f64 = (0..MAX_STRIDE)
                    .map(|k| {
                        window_freq
                            .get(&c.bytes[k..k + MIN_LITERAL])
                            .copied()
                            .unwrap_or(c.freq)
                    })
                    .sum();
                Candidate {
                    cost: c.confirm + windows * VERIFY_NS,
                    ..c.clone()
                }
            })
            .collect(),
    );
    let hashed = weighted_cover(&hashed_cands, &wanted, 0.0);
    if hashed.is_empty() {
        return None;
    }
    let mut cost = HASHED_NS_PER_BYTE
        + packed.iter().map(|&c| packed_cands[c].cost).sum::<f64>()
        + hashed.iter().map(|&c| hashed_cands[c].cost).sum::<f64>();
    let mut packed = packed;
    packed.sort_by(|&a, &b| {
        packed_cands[a]
            .cost
            .total_cmp(&packed_cands[b].cost)
            .then(a.cmp(&b))
    });
    cost += group_sizes(packed.len())
        .into_iter()
        .filter(|&size| size > 0)
        .map(searcher_ns_per_byte)
        .sum::<f64>();
    refine_groups(&mut packed, &packed_cands, windows);
    let picked = packed
        .iter()
        .map(|&c| &packed_cands[c])
        .chain(hashed.iter().map(|&c| &hashed_cands[c]));
    let (anchors, per_mib) = picked
        .map(|c| (c.bytes.to_vec(), c.freq * (1 << 20) as f64))
        .unzip();
    Some(Priced {
        cost,
        choice: AnchorChoice {
            anchors,
            per_mib,
            packed: packed.len(),
        },
    })
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

/// Greedy weighted set cover of the `wanted` members: repeatedly takes the substring with
/// the most newly covered wanted members per unit of (cost + price). Lazy: scores only
/// fall, so a popped score that is still the best after recomputing is taken.
fn weighted_cover(cands: &[Candidate], wanted: &[bool], price: f64) -> Vec<usize> {
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;
    let score = |gain: usize, c: &Candidate| gain as f64 / (c.cost + price);
    let mut covered: Vec<bool> = wanted.iter().map(|&w| !w).collect();
    let gain = |c: &Candidate, covered: &[bool]| c.who.iter().filter(|&&m| !covered[m]).count();
    // Scores are positive, so their bit patterns order like the numbers.
    let mut heap: BinaryHeap<(u64, Reverse<usize>)> = cands
        .iter()
        .enumerate()
        .map(|(i, c)| (score(gain(c, &covered), c).to_bits(), Reverse(i)))
        .collect();
    let mut left = wanted.iter().filter(|&&w| w).count();
    let mut chosen = Vec::new();
    while left > 0 {
        let Some((s, Reverse(i))) = heap.pop() else {
            break;
        };
        let gain = gain(&cands[i], &covered);
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
}
