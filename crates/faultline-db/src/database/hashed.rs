//! The prefilter for more anchors than the packed (Teddy) searchers take: a bitmap of the
//! hashes of the anchors' first four bytes, tested at every position of the haystack, and
//! the anchors of a set bit compared in place.
//!
//! Aho-Corasick (the general automaton this replaces when every anchor has four bytes or
//! more) follows one transition per byte with a branch on each; with 800 to 10,000 rare
//! anchors it ran at 110-150 MB/s on a serving log. Here a position costs a multiply, a
//! shift and a bit test in a 128 KiB table, four positions per 8-byte load; with 6,000
//! anchors about 0.6% of the positions of ordinary text hit a set bit and are looked at.

/// Bits of the hash: a 2^20-bit (128 KiB) table, in L2, with 10,000 anchors about 1% full.
const HASH_BITS: u32 = 20;

/// The table index of a 4-byte window (multiplicative hashing; the high bits mix all four).
#[inline(always)]
fn hash(w: u32) -> usize {
    (w.wrapping_mul(0x9e37_79b1) >> (32 - HASH_BITS)) as usize
}

/// Bits of the bucket index (the hash's high bits) of the anchor lists: 2^16 buckets, a
/// 256 KiB index that is quick to build at load and to look up while building the matcher.
const BUCKET_BITS: u32 = 16;

/// The hashed prefilter over a list of anchors of at least four bytes each.
#[derive(Debug)]
pub(crate) struct Hashed {
    /// One bit per hash value: set when an anchor's first four bytes have that hash.
    bits: Vec<u64>,
    /// Per bucket `b` (the hash's top [`BUCKET_BITS`] bits), its anchors are
    /// `members[starts[b]..starts[b + 1]]`, as (hash, anchor) sorted: those of one hash are
    /// together and ascending (so the first that matches is the one leftmost-first search
    /// reports).
    starts: Vec<u32>,
    members: Vec<(u32, u32)>,
    anchors: Vec<Vec<u8>>,
}

/// The first four bytes of `b` as a little-endian number (`b` holds at least four).
#[inline(always)]
fn word(b: &[u8]) -> u32 {
    u32::from_le_bytes([b[0], b[1], b[2], b[3]])
}

impl Hashed {
    /// The prefilter for `anchors`; `None` when one is shorter than four bytes (its window
    /// would not be a whole word).
    pub(crate) fn new(anchors: &[Vec<u8>]) -> Option<Hashed> {
        if anchors.is_empty() || anchors.iter().any(|a| a.len() < 4) {
            return None;
        }
        let mut bits = vec![0u64; (1usize << HASH_BITS) / 64];
        let mut members: Vec<(u32, u32)> = anchors
            .iter()
            .enumerate()
            .map(|(i, a)| (hash(word(a)) as u32, i as u32))
            .collect();
        members.sort_unstable();
        let buckets = 1usize << BUCKET_BITS;
        let mut starts = vec![0u32; buckets + 1];
        for &(h, _) in &members {
            bits[h as usize / 64] |= 1 << (h % 64);
            starts[(h >> (HASH_BITS - BUCKET_BITS)) as usize + 1] += 1;
        }
        for b in 0..buckets {
            starts[b + 1] += starts[b];
        }
        Some(Hashed {
            bits,
            starts,
            members,
            anchors: anchors.to_vec(),
        })
    }

    #[inline(always)]
    fn hit(&self, w: u32) -> bool {
        let h = hash(w);
        self.bits[h / 64] >> (h % 64) & 1 != 0
    }

    /// The anchors (ascending) whose first four bytes hash as `hay[at..at + 4]` does.
    #[inline(always)]
    fn bucket(&self, hay: &[u8], at: usize) -> impl Iterator<Item = usize> + '_ {
        let h = hash(word(&hay[at..])) as u32;
        let b = (h >> (HASH_BITS - BUCKET_BITS)) as usize;
        let (lo, hi) = (self.starts[b] as usize, self.starts[b + 1] as usize);
        self.members[lo..hi]
            .iter()
            .filter(move |&&(mh, _)| mh == h)
            .map(|&(_, a)| a as usize)
    }

    /// The anchor (lowest index) that starts at `at` in `hay`, if any (`at + 4 <= hay.len()`).
    fn at(&self, hay: &[u8], at: usize) -> Option<usize> {
        self.bucket(hay, at)
            .find(|&a| hay[at..].starts_with(&self.anchors[a]))
    }

    /// Every anchor (ascending) that starts at `at` in `hay` (`at + 4 <= hay.len()`).
    pub(crate) fn all_at<'a>(
        &'a self,
        hay: &'a [u8],
        at: usize,
    ) -> impl Iterator<Item = usize> + 'a {
        let hit = self.hit(word(&hay[at..]));
        hit.then(|| self.bucket(hay, at))
            .into_iter()
            .flatten()
            .filter(move |&a| hay[at..].starts_with(&self.anchors[a]))
    }

    /// The leftmost anchor occurrence at or after `start` in `hay`: (anchor, position), the
    /// lowest anchor index among those starting there (as leftmost-first Aho-Corasick).
    pub(crate) fn find(&self, hay: &[u8], start: usize) -> Option<(usize, usize)> {
        let mut i = start;
        // Four windows per 8-byte load.
        while i + 8 <= hay.len() {
            let mut b = [0u8; 8];
            b.copy_from_slice(&hay[i..i + 8]);
            let x = u64::from_le_bytes(b);
            if self.hit(x as u32)
                | self.hit((x >> 8) as u32)
                | self.hit((x >> 16) as u32)
                | self.hit((x >> 24) as u32)
            {
                for k in i..i + 4 {
                    if let Some(a) = self.at(hay, k) {
                        return Some((a, k));
                    }
                }
            }
            i += 4;
        }
        while i + 4 <= hay.len() {
            if self.hit(word(&hay[i..])) {
                if let Some(a) = self.at(hay, i) {
                    return Some((a, i));
                }
            }
            i += 1;
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use aho_corasick::{AhoCorasick, MatchKind};
    use proptest::prelude::*;

    proptest! {
        /// The same (anchor, position) as leftmost-first Aho-Corasick, from every start:
        /// small alphabets make anchors overlap, repeat and share prefixes.
        #[test]
        fn finds_what_leftmost_first_aho_corasick_finds(
            anchors in proptest::collection::vec(proptest::collection::vec(b'a'..=b'c', 4..7), 1..20),
            hay in proptest::collection::vec(b'a'..=b'd', 0..200),
        ) {
            let hashed = Hashed::new(&anchors).expect("anchors of four bytes or more");
            let ac = AhoCorasick::builder()
                .match_kind(MatchKind::LeftmostFirst)
                .build(&anchors)
                .expect("builds");
            for start in 0..=hay.len() {
                let want = ac
                    .find(aho_corasick::Input::new(&hay).range(start..))
                    .map(|m| (m.pattern().as_usize(), m.start()));
                prop_assert_eq!(hashed.find(&hay, start), want, "start {}", start);
            }
        }
    }

    #[test]
    fn short_anchors_are_left_to_the_automaton() {
        assert!(Hashed::new(&[b"abcd".to_vec(), b"abc".to_vec()]).is_none());
        assert!(Hashed::new(&[]).is_none());
    }
}
