//! The prefilter for more anchors than the packed (Teddy) searchers take: a bitmap of the
//! hashes of the anchors' first four bytes, tested at every position of the haystack, and
//! the anchors of a set bit compared in place.
//!
//! Aho-Corasick (the general automaton this replaces when every anchor has four bytes or
//! more) follows one transition per byte with a branch on each; with 800 to 10,000 rare
//! anchors it ran at 110-150 MB/s on a serving log. Here a position costs a multiply, a
//! shift and a bit test in a 128 KiB table; with 6,000 anchors about 0.6% of the positions
//! of ordinary text hit a set bit and are looked at. Where the CPU has AVX2, eight positions
//! are hashed and tested at once (a multiply, a gather of table words and a variable shift
//! per eight); elsewhere four positions share an 8-byte load.

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
    /// One bit per hash value: set when an anchor's first four bytes have that hash (bit
    /// `h % 32` of word `h / 32`, the layout a 32-bit gather reads).
    bits: Vec<u32>,
    /// Per bucket `b` (the hash's top [`BUCKET_BITS`] bits), its anchors are
    /// `members[starts[b]..starts[b + 1]]`, as (hash, anchor) sorted: those of one hash are
    /// together and ascending (so the first that matches is the one leftmost-first search
    /// reports).
    starts: Vec<u32>,
    members: Vec<(u32, u32)>,
    anchors: Vec<Vec<u8>>,
    /// Whether the CPU running this has AVX2 (checked once, when built).
    avx2: bool,
}

/// Whether the CPU has AVX2, for the eight-at-a-time search.
fn has_avx2() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx2")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
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
        let mut bits = vec![0u32; (1usize << HASH_BITS) / 32];
        let mut members: Vec<(u32, u32)> = anchors
            .iter()
            .enumerate()
            .map(|(i, a)| (hash(word(a)) as u32, i as u32))
            .collect();
        members.sort_unstable();
        let buckets = 1usize << BUCKET_BITS;
        let mut starts = vec![0u32; buckets + 1];
        for &(h, _) in &members {
            bits[h as usize / 32] |= 1 << (h % 32);
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
            avx2: has_avx2(),
        })
    }

    #[inline(always)]
    fn hit(&self, w: u32) -> bool {
        let h = hash(w);
        self.bits[h / 32] >> (h % 32) & 1 != 0
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
        #[cfg(target_arch = "x86_64")]
        if self.avx2 {
            // SAFETY: the CPU has AVX2 (`has_avx2` when built).
            return unsafe { self.find_avx2(hay, start) };
        }
        self.find_portable(hay, start)
    }

    /// [`Hashed::find`] without SIMD.
    fn find_portable(&self, hay: &[u8], start: usize) -> Option<(usize, usize)> {
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

    /// [`Hashed::find`] eight positions at a time: the eight 4-byte windows starting at
    /// `i..i + 8` are shuffled out of one 16-byte load, hashed with one multiply, and their
    /// table bits fetched with one gather; a set bit sends those positions, in order, to the
    /// in-place comparison that the portable search does.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn find_avx2(&self, hay: &[u8], start: usize) -> Option<(usize, usize)> {
        use std::arch::x86_64::*;
        // Lane k (0..8) takes bytes k..k + 4 of the load; both 128-bit halves hold the same
        // 16 bytes, since the byte shuffle works within each half.
        let windows = _mm256_setr_epi8(
            0, 1, 2, 3, 1, 2, 3, 4, 2, 3, 4, 5, 3, 4, 5, 6, //
            4, 5, 6, 7, 5, 6, 7, 8, 6, 7, 8, 9, 7, 8, 9, 10,
        );
        let multiplier = _mm256_set1_epi32(0x9e37_79b1_u32 as i32);
        let low5 = _mm256_set1_epi32(31);
        let one = _mm256_set1_epi32(1);
        let table = self.bits.as_ptr() as *const i32;
        let mut i = start;
        while i + 16 <= hay.len() {
            // SAFETY: `i + 16 <= hay.len()`, so the 16 bytes read are in `hay`.
            let bytes = unsafe { _mm_loadu_si128(hay.as_ptr().add(i) as *const __m128i) };
            let w = _mm256_shuffle_epi8(_mm256_broadcastsi128_si256(bytes), windows);
            let h =
                _mm256_srli_epi32::<{ 32 - HASH_BITS as i32 }>(_mm256_mullo_epi32(w, multiplier));
            // SAFETY: every index is `h / 32 < 2^HASH_BITS / 32`, the table's length in words.
            let words = unsafe { _mm256_i32gather_epi32::<4>(table, _mm256_srli_epi32::<5>(h)) };
            let bits = _mm256_and_si256(_mm256_srlv_epi32(words, _mm256_and_si256(h, low5)), one);
            let set = _mm256_movemask_ps(_mm256_castsi256_ps(_mm256_cmpeq_epi32(bits, one)));
            if set != 0 {
                let mut lanes = set as u32;
                while lanes != 0 {
                    let k = i + lanes.trailing_zeros() as usize;
                    if let Some(a) = self.at(hay, k) {
                        return Some((a, k));
                    }
                    lanes &= lanes - 1;
                }
            }
            i += 8;
        }
        self.find_portable(hay, i)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use aho_corasick::{AhoCorasick, MatchKind};
    use proptest::prelude::*;

    proptest! {
        /// The same (anchor, position) as leftmost-first Aho-Corasick, from every start, by
        /// the SIMD search (where the CPU has it) and the portable one: small alphabets make
        /// anchors overlap, repeat and share prefixes.
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
                prop_assert_eq!(hashed.find_portable(&hay, start), want, "portable, start {}", start);
            }
        }
    }

    #[test]
    fn short_anchors_are_left_to_the_automaton() {
        assert!(Hashed::new(&[b"abcd".to_vec(), b"abc".to_vec()]).is_none());
        assert!(Hashed::new(&[]).is_none());
    }
}
