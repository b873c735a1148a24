//! The stored DFAs of an archive database and the buffer they borrow from. Below both the
//! matcher (which runs them) and the archive (which validates and builds them), so neither
//! has to use the other for them.

use regex_automata::dfa::{dense, Automaton};
use regex_automata::Input;
use rkyv::util::AlignedVec;

/// The bytes an archive database lives in.
pub(crate) enum Backing {
    Static(&'static [u8]),
    Heap(AlignedVec<16>),
    /// A file read into a plain vector whose start happened to be 16-byte aligned.
    Vec(Vec<u8>),
}

impl Backing {
    /// The buffer's bytes, wherever they live.
    pub(crate) fn bytes(&self) -> &[u8] {
        match self {
            Backing::Static(b) => b,
            Backing::Heap(v) => v.as_slice(),
            Backing::Vec(v) => v,
        }
    }
}

/// Per pattern index, its DFA borrowing its tables from the buffer (`None`: no stored DFA).
pub(crate) type DfaList<'a> = Vec<Option<dense::DFA<&'a [u32]>>>;

self_cell::self_cell!(
    /// The archive's buffer and the DFAs that borrow their tables from it, by pattern index.
    pub(crate) struct Dfas {
        owner: Backing,
        #[covariant]
        dependent: DfaList,
    }
);

impl std::fmt::Debug for Dfas {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let stored = self
            .borrow_dependent()
            .iter()
            .filter(|d| d.is_some())
            .count();
        f.debug_struct("Dfas").field("stored", &stored).finish()
    }
}

impl Dfas {
    /// Runs pattern `p`'s DFA: `Some(found)`, or `None` if it has no DFA or the DFA cannot
    /// answer (a search error), in which case the caller uses the regex.
    pub fn is_match(&self, p: usize, input: &Input<'_>) -> Option<bool> {
        let dfa = self.borrow_dependent().get(p)?.as_ref()?;
        dfa.try_search_fwd(input).ok().map(|m| m.is_some())
    }
}
