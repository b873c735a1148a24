//! The packed searcher for a handful of short anchors, 64 bytes a step where the CPU has
//! AVX-512 (BW).
//!
//! The split prefilter leaves the anchors too short for the hashed prefilter's stride (in
//! the default set, seven structural words such as `Error`, `FATAL` and `Killed`) to one
//! packed searcher, aho-corasick's Teddy, which takes 32 bytes a step: on a serving log that
//! is a third of the scan's CPU time. This is the same algorithm (each anchor's first four
//! bytes as a fingerprint, looked up a nibble at a time with byte shuffles, one bucket per
//! anchor) with 64-byte registers; where AVX-512 is missing, or there are more anchors than
//! buckets, Teddy does the work.

use aho_corasick::packed;

/// Buckets, one per anchor: the bits of a byte.
const BUCKETS: usize = 8;
/// Bytes of each anchor the fingerprint holds.
const FINGERPRINT: usize = 4;

/// A leftmost-first searcher over a few anchors of at least four bytes.
#[derive(Clone, Debug)]
pub(crate) struct Short {
    anchors: Vec<Vec<u8>>,
    /// Per fingerprint byte: for each value of its low nibble, then of its high nibble, the
    /// buckets (anchors) whose byte has it.
    masks: [([u8; 16], [u8; 16]); FINGERPRINT],
    wide: bool,
    teddy: packed::Searcher,
}

impl Short {
    /// The searcher for `anchors`, or `None` where Teddy cannot be built for them (see
    /// `aho_corasick::packed::Builder::build`).
    pub(crate) fn new(anchors: &[Vec<u8>]) -> Option<Short> {
        let teddy = packed::Config::new()
            .match_kind(packed::MatchKind::LeftmostFirst)
            .builder()
            .extend(anchors)
            .build()?;
        let mut masks = [([0u8; 16], [0u8; 16]); FINGERPRINT];
        for (b, anchor) in anchors.iter().enumerate().take(BUCKETS) {
            for (k, &byte) in anchor.iter().take(FINGERPRINT).enumerate() {
                masks[k].0[usize::from(byte & 0xf)] |= 1 << b;
                masks[k].1[usize::from(byte >> 4)] |= 1 << b;
            }
        }
        let fits = anchors.len() <= BUCKETS && anchors.iter().all(|a| a.len() >= FINGERPRINT);
        Some(Short {
            anchors: anchors.to_vec(),
            masks,
            wide: fits && has_avx512bw(),
            teddy,
        })
    }

    /// The leftmost anchor occurrence in `hay[start..]`: (anchor index, position); at one
    /// position, the lowest index (as leftmost-first Aho-Corasick).
    pub(crate) fn find(&self, hay: &[u8], start: usize) -> Option<(usize, usize)> {
        #[cfg(target_arch = "x86_64")]
        if self.wide {
            // SAFETY: the CPU has AVX-512 F and BW (checked when built).
            return unsafe { self.find_avx512(hay, start) };
        }
        self.teddy_from(hay, start)
    }

    fn teddy_from(&self, hay: &[u8], start: usize) -> Option<(usize, usize)> {
        if start >= hay.len() {
            return None;
        }
        self.teddy
            .find_in(hay, aho_corasick::Span::from(start..hay.len()))
            .map(|m| (m.pattern().as_usize(), m.start()))
    }

    /// Sixty-four starting positions a step: fingerprint byte `k` of a position is loaded at
    /// offset `k`, each nibble looked up in its bucket mask; a position whose four bytes all
    /// keep a bucket is compared with that bucket's anchor in place. The last bytes (fewer
    /// than a step and the fingerprint's overhang) go to Teddy.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f,avx512bw")]
    unsafe fn find_avx512(&self, hay: &[u8], start: usize) -> Option<(usize, usize)> {
        use std::arch::x86_64::*;
        let table = |t: &[u8; 16]| {
            // SAFETY: `t` is 16 readable bytes.
            _mm512_broadcast_i32x4(unsafe { _mm_loadu_si128(t.as_ptr() as *const __m128i) })
        };
        let lo: [__m512i; FINGERPRINT] = std::array::from_fn(|k| table(&self.masks[k].0));
        let hi: [__m512i; FINGERPRINT] = std::array::from_fn(|k| table(&self.masks[k].1));
        let nibble = _mm512_set1_epi8(0xf);
        let mut i = start;
        let mut buckets = [0u8; 64];
        while i + 64 + FINGERPRINT - 1 <= hay.len() {
            let mut keep = _mm512_set1_epi8(-1);
            for k in 0..FINGERPRINT {
                // SAFETY: `i + k + 64 <= hay.len()`.
                let v = unsafe { _mm512_loadu_si512(hay.as_ptr().add(i + k) as *const __m512i) };
                let low = _mm512_and_si512(v, nibble);
                let high = _mm512_and_si512(_mm512_srli_epi16::<4>(v), nibble);
                keep = _mm512_and_si512(
                    keep,
                    _mm512_and_si512(
                        _mm512_shuffle_epi8(lo[k], low),
                        _mm512_shuffle_epi8(hi[k], high),
                    ),
                );
            }
            let mut set = _mm512_test_epi8_mask(keep, keep);
            if set != 0 {
                // SAFETY: `buckets` is 64 writable bytes.
                unsafe { _mm512_storeu_si512(buckets.as_mut_ptr() as *mut __m512i, keep) };
                while set != 0 {
                    let j = set.trailing_zeros() as usize;
                    let p = i + j;
                    let mut bits = buckets[j];
                    while bits != 0 {
                        let b = bits.trailing_zeros() as usize;
                        if super::holds_at(hay, p, &self.anchors[b]) {
                            return Some((b, p));
                        }
                        bits &= bits - 1;
                    }
                    set &= set - 1;
                }
            }
            i += 64;
        }
        self.teddy_from(hay, i)
    }
}

fn has_avx512bw() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx512f")
            && std::arch::is_x86_feature_detected!("avx512bw")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn agrees(anchors: &[Vec<u8>], hay: &[u8]) -> Result<(), TestCaseError> {
        let short = Short::new(anchors).expect("builds");
        let reference = crate::database::leftmost_first(anchors);
        for start in 0..=hay.len() {
            let want = reference(hay, start);
            prop_assert_eq!(short.find(hay, start), want, "start {}", start);
            prop_assert_eq!(short.teddy_from(hay, start), want, "teddy, start {}", start);
        }
        Ok(())
    }

    #[test]
    fn the_wide_search_runs_where_the_cpu_has_avx512() {
        let short = Short::new(&[b"Error".to_vec(), b"FATAL".to_vec()]).expect("builds");
        assert_eq!(short.wide, has_avx512bw());
        if !short.wide {
            eprintln!("no AVX-512 BW on this CPU: only Teddy's path is tested");
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]
        /// Few letters, so that fingerprints collide and anchors overlap, share prefixes and
        /// start at the same place; haystacks long enough for several 64-byte steps.
        #[test]
        fn agrees_with_leftmost_first_aho_corasick(
            anchors in proptest::collection::vec(proptest::collection::vec(b'a'..b'e', 4..7), 1..9),
            hay in proptest::collection::vec(b'a'..b'f', 0..300),
        ) {
            agrees(&anchors, &hay)?;
        }

        #[test]
        fn agrees_on_ordinary_text(
            picks in proptest::collection::vec(0usize..7, 0..12),
            filler in "[ -~]{0,200}",
        ) {
            const WORDS: [&str; 7] = ["Error", "RROR", "FATAL", "Exit", "Killed", "[NO]", "[YES]"];
            let anchors: Vec<Vec<u8>> = WORDS.iter().map(|w| w.as_bytes().to_vec()).collect();
            let mut hay = filler.into_bytes();
            for (n, p) in picks.into_iter().enumerate() {
                let at = (n * 37) % (hay.len() + 1);
                hay.splice(at..at, WORDS[p].bytes());
            }
            agrees(&anchors, &hay)?;
        }
    }
}
