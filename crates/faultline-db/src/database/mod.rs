//! The compiled database's runtime side: the two-stage matcher the scan runs, and the
//! archive format that stores it.

pub mod archive;
pub(crate) mod matcher;

#[doc(hidden)]
pub use matcher::Matcher;
