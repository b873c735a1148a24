//! The hashed prefilter: a bitmap of the hashes of the anchors' 4-byte windows, tested at
//! every `stride`-th position of the haystack, and the anchors of a set bit compared in
//! place. It holds the anchors the packed (Teddy) searchers do not: those of seven bytes or
//! more in a default set's split layout, every anchor of a large set.
//!
//! Over anchors of seven bytes or more only every fourth position is tested ([`stride_for`]):
//! each anchor enters its windows at offsets 0 to 3, and wherever it occurs one of them lies
//! on a tested position. Aho-Corasick (the general automaton this replaces when every anchor
//! has four bytes or more) follows one transition per byte with a branch on each; with 800
//! to 10,000 rare anchors it ran at 110-150 MB/s on a serving log. Here, where the CPU has
//! AVX2, eight windows are hashed and tested at once (a multiply, a gather of table words and
//! a variable shift per eight; at a stride of four, per 32 bytes); elsewhere one at a time.
//! The table has about 128 bits per entry (2^16 to 2^22 bits), so few windows hit a set bit
//! by chance.

/// Fewest and most bits of the hash: tables of 2^16 bits (8 KiB, in L1) to 2^22 bits
/// (512 KiB, in L2).
const MIN_TABLE_BITS: u32 = 16;
const MAX_TABLE_BITS: u32 = 22;

/// Table bits per entry: the table is sized so that at most about 1/128 of its bits are set
/// (fewer false hits), and no larger (a smaller table stays in a nearer cache).
const BITS_PER_ENTRY: usize = 128;

/// The table index of a 4-byte window under a table of `32 - shift` bits (multiplicative
/// hashing; the high bits mix all four bytes).
#[inline(always)]
fn hash(w: u32, shift: u32) -> usize {
    (w.wrapping_mul(0x9e37_79b1) >> shift) as usize
}

/// Bits of the bucket index (the hash's high bits) of the anchor lists: 2^16 buckets, a
/// 256 KiB index that is quick to build at load and to look up while building the matcher.
const BUCKET_BITS: u32 = MIN_TABLE_BITS;

/// Longest stride: every fourth position, for anchors of seven bytes or more.
pub(crate) const MAX_STRIDE: usize = 4;

/// The stride the hashed prefilter takes over anchors whose shortest has `min_len` bytes:
/// the largest power of two up to [`MAX_STRIDE`] such that each anchor holds that many
/// whole 4-byte windows (an anchor of `len` bytes has `len - 3`).
pub(crate) fn stride_for(min_len: usize) -> usize {
    let windows = min_len.saturating_sub(3).clamp(1, MAX_STRIDE);
    1 << windows.ilog2()
}

/// The hashed prefilter over a list of anchors of at least four bytes each.
///
/// With a stride `s` over 1, only every `s`-th position (counted from where a search starts)
/// is hashed: each anchor holds `s` whole windows at its offsets `0..s`, and an occurrence
/// anywhere puts exactly one of them on a tested position, so each is entered with its
/// offset and a hit is compared at the position that offset points back to.
#[derive(Debug)]
pub(crate) struct Hashed {
    /// One bit per hash value: set when one of an anchor's windows has that hash (bit
    /// `31 - h % 32` of word `h / 32`: a gather reads the word, a shift by `h % 32` moves the
    /// bit to the sign, where a mask instruction collects it).
    bits: Vec<u32>,
    /// Per bucket `b` (the hash's top [`BUCKET_BITS`] bits), its windows are
    /// `members[starts[b]..starts[b + 1]]`, as (hash, anchor, offset) sorted.
    starts: Vec<u32>,
    members: Vec<(u32, u32, u32)>,
    anchors: Vec<Vec<u8>>,
    /// Per anchor: its first eight bytes (fewer, zero-padded, for a shorter one) as a
    /// little-endian number, and the mask of the bytes it has there; a hit compares these
    /// with one load before it compares the whole anchor.
    heads: Vec<(u64, u64)>,
    /// 32 minus the table's bits: the hash of a window is its product's top bits.
    shift: u32,
    /// Positions tested: every `stride`-th ([`stride_for`] the shortest anchor).
    stride: usize,
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
        let min_len = anchors.iter().map(Vec::len).min()?;
        if min_len < 4 {
            return None;
        }
        let stride = stride_for(min_len);
        let table_bits = (anchors.len() * stride * BITS_PER_ENTRY)
            .next_power_of_two()
            .ilog2()
            .clamp(MIN_TABLE_BITS, MAX_TABLE_BITS);
        let shift = 32 - table_bits;
        let mut bits = vec![0u32; (1usize << table_bits) / 32];
        let mut members: Vec<(u32, u32, u32)> = anchors
            .iter()
            .enumerate()
            .flat_map(|(i, a)| {
                (0..stride).map(move |k| (hash(word(&a[k..]), shift) as u32, i as u32, k as u32))
            })
            .collect();
        members.sort_unstable();
        let buckets = 1usize << BUCKET_BITS;
        let mut starts = vec![0u32; buckets + 1];
        for &(h, _, _) in &members {
            bits[h as usize / 32] |= 1 << (31 - h % 32);
            starts[(h >> (table_bits - BUCKET_BITS)) as usize + 1] += 1;
        }
        for b in 0..buckets {
            starts[b + 1] += starts[b];
        }
        let heads = anchors
            .iter()
            .map(|a| {
                let n = a.len().min(8);
                let mut head = [0u8; 8];
                head[..n].copy_from_slice(&a[..n]);
                (u64::from_le_bytes(head), u64::MAX >> (8 * (8 - n)))
            })
            .collect();
        Some(Hashed {
            bits,
            starts,
            members,
            anchors: anchors.to_vec(),
            heads,
            shift,
            stride,
            avx2: has_avx2(),
        })
    }

    /// Positions between two tested windows.
    pub(crate) fn stride(&self) -> usize {
        self.stride
    }

    #[inline(always)]
    fn hit(&self, w: u32) -> bool {
        let h = hash(w, self.shift);
        self.bits[h / 32] << (h % 32) & 1 << 31 != 0
    }

    /// The (anchor, offset) entries (ascending) whose window hashes as `hay[at..at + 4]` does.
    #[inline(always)]
    fn bucket(&self, hay: &[u8], at: usize) -> impl Iterator<Item = (usize, usize)> + '_ {
        let h = hash(word(&hay[at..]), self.shift) as u32;
        let b = (h >> (32 - self.shift - BUCKET_BITS)) as usize;
        let (lo, hi) = (self.starts[b] as usize, self.starts[b + 1] as usize);
        self.members[lo..hi]
            .iter()
            .filter(move |&&(mh, _, _)| mh == h)
            .map(|&(_, a, k)| (a as usize, k as usize))
    }

    /// The leftmost anchor occurrence (lowest anchor index among those starting there) that
    /// the window at `p` (a tested position, `p + 4 <= hay.len()`) reveals, at or after
    /// `start`: it starts in `p + 1 - stride..=p`.
    fn at(&self, hay: &[u8], p: usize, start: usize) -> Option<(usize, usize)> {
        let mut best: Option<(usize, usize)> = None;
        for (a, k) in self.bucket(hay, p) {
            let Some(q) = p.checked_sub(k) else {
                continue;
            };
            if q >= start && best.is_none_or(|(b, at)| (q, a) < (at, b)) && self.is_at(hay, q, a) {
                best = Some((a, q));
            }
        }
        best
    }

    /// Whether anchor `a` starts at `q` in `hay`: its first eight bytes compared in one load
    /// (most hits of a window fail there), then the rest.
    #[inline(always)]
    fn is_at(&self, hay: &[u8], q: usize, a: usize) -> bool {
        let anchor = &self.anchors[a];
        match hay.get(q..q + 8) {
            Some(eight) => {
                let (head, mask) = self.heads[a];
                let mut w = [0u8; 8];
                w.copy_from_slice(eight);
                u64::from_le_bytes(w) & mask == head
                    && (anchor.len() <= 8 || super::holds_at(hay, q + 8, &anchor[8..]))
            }
            None => super::holds_at(hay, q, anchor),
        }
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
            .filter(move |&(a, k)| k == 0 && self.is_at(hay, at, a))
            .map(|(a, _)| a)
    }

    /// The leftmost anchor occurrence at or after `start` in `hay`: (anchor, position), the
    /// lowest anchor index among those starting there (as leftmost-first Aho-Corasick).
    pub(crate) fn find(&self, hay: &[u8], start: usize) -> Option<(usize, usize)> {
        #[cfg(target_arch = "x86_64")]
        if self.avx2 {
            // SAFETY: the CPU has AVX2 (`has_avx2` when built).
            return unsafe {
                match self.stride {
                    1 => self.find_avx2::<1>(hay, start),
                    2 => self.find_avx2::<2>(hay, start),
                    _ => self.find_avx2::<4>(hay, start),
                }
            };
        }
        self.find_portable(hay, start, start)
    }

    /// [`Hashed::find`] without SIMD, testing the windows at `from`, `from + stride`, ...
    /// (`from - start` a multiple of the stride).
    fn find_portable(&self, hay: &[u8], start: usize, from: usize) -> Option<(usize, usize)> {
        let mut p = from;
        while p + 4 <= hay.len() {
            if self.hit(word(&hay[p..])) {
                if let Some(found) = self.at(hay, p, start) {
                    return Some(found);
                }
            }
            p += self.stride;
        }
        None
    }

    /// [`Hashed::find`] eight windows at a time, `S` bytes apart: they are shuffled out of
    /// one load (`S` = 1: 16 bytes; 2: two overlapping 16-byte halves; 4: the 32 bytes are
    /// the windows), hashed with one multiply, and their table bits fetched with one gather;
    /// a set bit sends that window, in order, to the in-place comparison.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn find_avx2<const S: usize>(&self, hay: &[u8], start: usize) -> Option<(usize, usize)> {
        use std::arch::x86_64::*;
        // Lane k (0..8) takes bytes k * S..k * S + 4 of what is loaded; the byte shuffle works
        // within each 128-bit half.
        let windows = match S {
            1 => _mm256_setr_epi8(
                0, 1, 2, 3, 1, 2, 3, 4, 2, 3, 4, 5, 3, 4, 5, 6, //
                4, 5, 6, 7, 5, 6, 7, 8, 6, 7, 8, 9, 7, 8, 9, 10,
            ),
            _ => _mm256_setr_epi8(
                0, 1, 2, 3, 2, 3, 4, 5, 4, 5, 6, 7, 6, 7, 8, 9, //
                0, 1, 2, 3, 2, 3, 4, 5, 4, 5, 6, 7, 6, 7, 8, 9,
            ),
        };
        let multiplier = _mm256_set1_epi32(0x9e37_79b1_u32 as i32);
        let low5 = _mm256_set1_epi32(31);
        let table = self.bits.as_ptr() as *const i32;
        let shift = _mm_cvtsi32_si128(self.shift as i32);
        // Bytes one round reads, and the bytes it moves past.
        let (reads, step) = match S {
            1 => (16, 8),
            2 => (24, 16),
            _ => (32, 32),
        };
        let mut i = start;
        while i + reads <= hay.len() {
            let at = hay.as_ptr().add(i);
            // SAFETY: `i + reads <= hay.len()`, so every byte read is in `hay`.
            let w = unsafe {
                match S {
                    1 => _mm256_shuffle_epi8(
                        _mm256_broadcastsi128_si256(_mm_loadu_si128(at as *const __m128i)),
                        windows,
                    ),
                    2 => _mm256_shuffle_epi8(
                        _mm256_loadu2_m128i(at.add(8) as *const __m128i, at as *const __m128i),
                        windows,
                    ),
                    _ => _mm256_loadu_si256(at as *const __m256i),
                }
            };
            let h = _mm256_srl_epi32(_mm256_mullo_epi32(w, multiplier), shift);
            // SAFETY: every index is `h / 32 < 2^(32 - shift) / 32`, the table's length in words.
            let words = unsafe { _mm256_i32gather_epi32::<4>(table, _mm256_srli_epi32::<5>(h)) };
            // Each window's bit moved to its lane's sign bit.
            let bits = _mm256_sllv_epi32(words, _mm256_and_si256(h, low5));
            let set = _mm256_movemask_ps(_mm256_castsi256_ps(bits));
            if set != 0 {
                let mut lanes = set as u32;
                while lanes != 0 {
                    let p = i + S * lanes.trailing_zeros() as usize;
                    if let Some(found) = self.at(hay, p, start) {
                        return Some(found);
                    }
                    lanes &= lanes - 1;
                }
            }
            i += step;
        }
        self.find_portable(hay, start, i)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The same (anchor, position) as leftmost-first Aho-Corasick, from every start, by the
    /// SIMD search (where the CPU has it) and the portable one.
    fn agrees_with_aho_corasick(anchors: &[Vec<u8>], hay: &[u8]) -> Result<(), TestCaseError> {
        let hashed = Hashed::new(anchors).expect("anchors of four bytes or more");
        let reference = crate::database::leftmost_first(anchors);
        for start in 0..=hay.len() {
            let want = reference(hay, start);
            prop_assert_eq!(hashed.find(hay, start), want, "start {}", start);
            prop_assert_eq!(
                hashed.find_portable(hay, start, start),
                want,
                "portable, start {}",
                start
            );
        }
        Ok(())
    }

    proptest! {
        /// Small alphabets make anchors overlap, repeat and share prefixes; the anchors'
        /// lengths give every stride (4: one, 5-6: two, 7 and more: four).
        #[test]
        fn finds_what_leftmost_first_aho_corasick_finds(
            anchors in proptest::collection::vec(proptest::collection::vec(b'a'..=b'c', 4..7), 1..20),
            hay in proptest::collection::vec(b'a'..=b'd', 0..200),
        ) {
            agrees_with_aho_corasick(&anchors, &hay)?;
        }

        #[test]
        fn strided_finds_what_leftmost_first_aho_corasick_finds(
            anchors in proptest::collection::vec(proptest::collection::vec(b'a'..=b'c', 5..12), 1..20),
            hay in proptest::collection::vec(b'a'..=b'd', 0..300),
        ) {
            agrees_with_aho_corasick(&anchors, &hay)?;
        }

        /// Anchors cut from the haystack itself, so that each search finds many.
        #[test]
        fn strided_finds_anchors_cut_from_the_text(
            hay in proptest::collection::vec(b'a'..=b'e', 40..300),
            cuts in proptest::collection::vec((0usize..1000, 7usize..12), 1..8),
        ) {
            let anchors: Vec<Vec<u8>> = cuts
                .iter()
                .map(|&(at, len)| {
                    let at = at % (hay.len() - len);
                    hay[at..at + len].to_vec()
                })
                .collect();
            prop_assert_eq!(Hashed::new(&anchors).map(|h| h.stride()), Some(4));
            agrees_with_aho_corasick(&anchors, &hay)?;
        }
    }

    #[test]
    fn the_stride_is_what_the_shortest_anchor_allows() {
        assert_eq!(
            (4..=12).map(stride_for).collect::<Vec<_>>(),
            [1, 2, 2, 4, 4, 4, 4, 4, 4]
        );
    }

    #[test]
    fn short_anchors_are_left_to_the_automaton() {
        assert!(Hashed::new(&[b"abcd".to_vec(), b"abc".to_vec()]).is_none());
        assert!(Hashed::new(&[]).is_none());
    }
}
