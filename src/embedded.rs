//! The default signature set, built into the binary from `signatures/`.

use std::path::PathBuf;

use crate::signature::{load_sources, SignatureSet, SourceFile};

include!(concat!(env!("OUT_DIR"), "/embedded_signatures.rs"));

/// The embedded signature files, as a set (paths read `signatures/NAME`).
pub fn signature_set() -> crate::Result<SignatureSet> {
    load_sources(
        FILES
            .iter()
            .map(|(name, text)| SourceFile {
                path: PathBuf::from("signatures").join(name),
                text: (*text).to_string(),
            })
            .collect(),
    )
}
