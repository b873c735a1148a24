//! The integration tests: one test binary, one module per topic (one link instead of eleven,
//! and one place that lists them). `cargo test --test it <topic>::` runs one topic.
//!
//! Kept out of this binary: tests/pool.rs, which installs the global rayon pool and must own
//! its process for that.

// Shared with any test binary that runs the `faultline` executable.
#[path = "../common/mod.rs"]
mod common;

mod archive;
mod baseline;
mod bulk;
mod cli;
mod corpus;
mod diagnosis;
mod face;
mod habits;
mod hostile;
mod injection;
mod interleave;
mod job;
mod outcomes;
mod properties;
mod signatures;
mod usability;
