//! The compiled database as a file: an rkyv archive behind a small header, validated on load
//! and used in place.
//!
//! Layout (all integers little-endian):
//!
//! | bytes  | field                                                        |
//! |--------|--------------------------------------------------------------|
//! | 0..8   | magic `\x89FLTLN\r\n`                                        |
//! | 8..12  | archive format ([`ARCHIVE_FORMAT`])                                  |
//! | 12..16 | reserved, zero                                               |
//! | 16..24 | payload length in bytes                                      |
//! | 24..32 | xxh3-64 of the payload                                       |
//! | 32..   | the rkyv payload (16-byte aligned in the buffer it is read into) |
//!
//! The payload holds the metadata, pattern sources, per-pattern required literals, the
//! prefilter anchors and, per pattern, a serialised dense DFA (regex-automata) that confirms
//! candidate lines. Loading checks the header, the hash, validates the payload with bytecheck,
//! checks every index it holds and validates each DFA (`DFA::from_bytes`), which then borrows
//! its transition table from the buffer: no copy. The aho-corasick prefilter and literal
//! automaton cannot be serialised; they are rebuilt at load from the stored literals, which
//! takes about a millisecond for the full database (benches/load.rs). A pattern whose DFA would exceed the size limit stores
//! only its source and is compiled to a regex the first time it must confirm a line; one that
//! matches exactly its required literals (plain text, `|`, `(?:…)`) stores none: the literal
//! found in place confirms it.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use regex_automata::dfa::{dense, StartKind};
use regex_automata::nfa::thompson;
use rkyv::rancor;
use rkyv::util::AlignedVec;

use super::dfas::{Backing, DfaList, Dfas};
use super::matcher::{Anchors, CompiledPattern, Confirm, Matcher, Owner, MARKERS};
use super::{Database, SignatureInfo};
use crate::error::{ArchiveInvalid, ArchiveProblem, DfaProblem, Error, Limit, Result};
use crate::signature::{Anchor, QuietLevel, Role, Severity};

/// The archive format this faultline reads and writes. Bump it on any change of the payload
/// types below or of the header (`tests::layout_fingerprint` fails until you do).
pub const ARCHIVE_FORMAT: u32 = 4;
/// The first bytes of every archive.
pub const ARCHIVE_MAGIC: [u8; 8] = *b"\x89FLTLN\r\n";
/// Header bytes before the payload; a multiple of 16 so the payload stays aligned.
const HEADER: usize = 32;
/// Default cap on one pattern's serialised DFA; a larger one is left out of the archive.
pub const MAX_DFA_BYTES: usize = 1 << 20;
/// Largest archive file read.
pub(crate) const MAX_ARCHIVE_BYTES: u64 = 1 << 30;

/// The serialised database. Owners: `marker == 0` means signature `signature`; otherwise
/// the pattern is the structural marker with that bit.
#[derive(rkyv::Archive, rkyv::Serialize)]
struct Payload {
    name: String,
    version: String,
    hash: String,
    signatures: Vec<SignatureRecord>,
    /// Signature patterns first (in index order), then the markers in [`MARKERS`] order.
    patterns: Vec<PatternRecord>,
    anchors: Vec<Vec<u8>>,
    /// How many of the first anchors the packed searchers hold; the hashed prefilter holds
    /// the others.
    packed_anchors: u32,
}

#[derive(rkyv::Archive, rkyv::Serialize)]
struct SignatureRecord {
    id: String,
    revision: u32,
    title: String,
    role: u8,
    severity: u8,
    category: String,
    tags: Vec<String>,
    priority: i32,
    survivable: bool,
    remediation: String,
    source: String,
    /// 0: the message, 1: anywhere.
    anchor: u8,
    /// Bit 0: INFO, bit 1: DEBUG.
    quiet_levels: u8,
    patterns: Vec<u32>,
}

#[derive(rkyv::Archive, rkyv::Serialize)]
struct PatternRecord {
    signature: u32,
    marker: u8,
    source: String,
    required: Vec<Vec<u8>>,
    /// The dense DFA as `to_bytes_little_endian` wrote it, in 4-byte words so that rkyv
    /// aligns it as `DFA::from_bytes` requires; `dfa_len` is its length in bytes.
    dfa: Option<Vec<u32>>,
    dfa_len: u32,
}

/// A written archive and what went into it.
#[derive(Clone, Debug)]
pub struct Archive {
    /// The file's bytes.
    pub bytes: Vec<u8>,
    /// Signature patterns confirmed by a stored DFA (the structural markers always are).
    pub dfas: usize,
    /// Signature patterns that match exactly their required literals (plain text, `|`,
    /// `(?:…)`): confirmed by the literal the prefilter found, no DFA stored.
    pub literal: usize,
    /// Total bytes of the stored DFAs, the markers' included.
    pub dfa_bytes: usize,
    /// Signature patterns stored as source only (DFA over the limit), with the reason; their
    /// regex is compiled at first use.
    pub lazy: Vec<(u32, DfaProblem)>,
}

fn role_code(r: Role) -> u8 {
    match r {
        Role::Cause => 0,
        Role::Symptom => 1,
        Role::Noise => 2,
        Role::Start => 3,
        Role::Progress => 4,
        Role::Completed => 5,
        Role::Stopped => 6,
    }
}

fn role_from(c: u8) -> Option<Role> {
    Some(match c {
        0 => Role::Cause,
        1 => Role::Symptom,
        2 => Role::Noise,
        3 => Role::Start,
        4 => Role::Progress,
        5 => Role::Completed,
        6 => Role::Stopped,
        _ => return None,
    })
}

fn anchor_code(a: Anchor) -> u8 {
    match a {
        Anchor::Message => 0,
        Anchor::Anywhere => 1,
    }
}

fn anchor_from(c: u8) -> Option<Anchor> {
    Some(match c {
        0 => Anchor::Message,
        1 => Anchor::Anywhere,
        _ => return None,
    })
}

fn quiet_code(levels: &[QuietLevel]) -> u8 {
    levels.iter().fold(0, |bits, l| {
        bits | match l {
            QuietLevel::Info => 1,
            QuietLevel::Debug => 2,
        }
    })
}

fn quiet_from(c: u8) -> Option<Vec<QuietLevel>> {
    if c > 3 {
        return None;
    }
    Some(
        [(1, QuietLevel::Info), (2, QuietLevel::Debug)]
            .into_iter()
            .filter(|(bit, _)| c & bit != 0)
            .map(|(_, l)| l)
            .collect(),
    )
}

fn severity_code(s: Severity) -> u8 {
    match s {
        Severity::Fatal => 0,
        Severity::Error => 1,
        Severity::Warning => 2,
        Severity::Info => 3,
    }
}

fn severity_from(c: u8) -> Option<Severity> {
    Some(match c {
        0 => Severity::Fatal,
        1 => Severity::Error,
        2 => Severity::Warning,
        3 => Severity::Info,
        _ => return None,
    })
}

/// Builds the confirmation DFA of one pattern in faultline's dialect: Unicode off, any byte,
/// unanchored start only. `Err` says why it is left out (over `limit` bytes, or unsupported).
fn build_dfa(pattern: &str, limit: usize) -> Result<Vec<u32>, DfaProblem> {
    // The stored length is a u32.
    let limit = limit.min(u32::MAX as usize);
    let dfa = dense::Builder::new()
        .syntax(super::dialect::syntax_config())
        .thompson(
            thompson::Config::new()
                .utf8(false)
                .nfa_size_limit(Some(4 << 20)),
        )
        .configure(
            dense::Config::new()
                .start_kind(StartKind::Unanchored)
                .dfa_size_limit(Some(limit))
                .determinize_size_limit(Some(limit.saturating_mul(4))),
        )
        .build(pattern)
        .map_err(|e| DfaProblem::Build(Box::new(e)))?;
    let (bytes, pad) = dfa.to_bytes_little_endian();
    let bytes = &bytes[pad..];
    if bytes.len() > limit {
        return Err(DfaProblem::TooLarge {
            bytes: bytes.len(),
            limit,
        });
    }
    Ok(bytes
        .chunks(4)
        .map(|c| {
            let mut w = [0u8; 4];
            w[..c.len()].copy_from_slice(c);
            u32::from_le_bytes(w)
        })
        .collect())
}

impl Database {
    /// Serialises the database as an archive file's bytes, building each pattern's DFA;
    /// a DFA over `max_dfa_bytes` (see [`MAX_DFA_BYTES`]) is left out and its pattern's
    /// regex compiled at first use instead.
    ///
    /// ```
    /// use faultline_db::{load_dir, Database, MAX_DFA_BYTES};
    ///
    /// let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../signatures");
    /// let db = Database::compile(&load_dir(&dir).unwrap()).unwrap();
    /// let archive = db.to_archive(MAX_DFA_BYTES).unwrap();
    /// let loaded = Database::from_archive_bytes(&archive.bytes).unwrap();
    /// assert_eq!(loaded.hash(), db.hash());
    /// ```
    pub fn to_archive(&self, max_dfa_bytes: usize) -> Result<Archive> {
        let (payload, mut out) = self.payload(Some(max_dfa_bytes), &self.hash)?;
        let body = rkyv::to_bytes::<rancor::Error>(&payload).map_err(Limit::Serialise)?;
        let mut bytes = Vec::with_capacity(HEADER + body.len());
        bytes.extend_from_slice(&ARCHIVE_MAGIC);
        bytes.extend_from_slice(&ARCHIVE_FORMAT.to_le_bytes());
        bytes.extend_from_slice(&0u32.to_le_bytes());
        bytes.extend_from_slice(&(body.len() as u64).to_le_bytes());
        bytes.extend_from_slice(&xxhash_rust::xxh3::xxh3_64(&body).to_le_bytes());
        bytes.extend_from_slice(&body);
        out.bytes = bytes;
        Ok(out)
    }

    /// The serialised payload that identifies the database: what an archive of it stores,
    /// with the hash field blank and no DFA (a pattern's DFA is a function of its source and
    /// the dialect's settings, which the compiler's revision covers). The compiler hashes it
    /// into the database hash.
    pub(crate) fn identity_payload(&self) -> Result<Vec<u8>> {
        let (payload, _) = self.payload(None, "")?;
        let body = rkyv::to_bytes::<rancor::Error>(&payload).map_err(Limit::Serialise)?;
        Ok(body.to_vec())
    }

    /// The archive's payload with `hash` in its hash field; each pattern's DFA built unless
    /// `max_dfa_bytes` is `None`, and the archive's account of them (its bytes left empty).
    fn payload(&self, max_dfa_bytes: Option<usize>, hash: &str) -> Result<(Payload, Archive)> {
        let mut required: Vec<Vec<Vec<u8>>> = vec![Vec::new(); self.matcher.patterns.len()];
        for (member, owners) in self.matcher.members() {
            for &p in owners {
                if let Some(r) = required.get_mut(p as usize) {
                    r.push(member.to_vec());
                }
            }
        }
        let mut out = Archive {
            bytes: Vec::new(),
            dfas: 0,
            literal: 0,
            dfa_bytes: 0,
            lazy: Vec::new(),
        };
        let mut patterns = Vec::with_capacity(self.matcher.patterns.len());
        for (p, (pat, required)) in self.matcher.patterns.iter().zip(required).enumerate() {
            let (signature, marker, source) = match pat.owner {
                Owner::Signature(s) => (s, 0, self.pattern_sources[p].as_str()),
                Owner::Marker(m) => {
                    // Markers follow the signature patterns, in MARKERS order (a marker may
                    // have more than one pattern).
                    let source = p
                        .checked_sub(self.pattern_sources.len())
                        .and_then(|i| MARKERS.get(i))
                        .map(|(_, s)| *s)
                        .unwrap_or_default();
                    (0, m as u8, source)
                }
            };
            // A plain pattern never runs a DFA in a scan: the literal found decides. (Should
            // anything ask it to run, it compiles its regex at first use.)
            let built = if pat.plain && marker == 0 {
                out.literal += 1;
                None
            } else {
                max_dfa_bytes.map(|max| build_dfa(source, max))
            };
            let (dfa, dfa_len) = match built {
                None => (None, 0),
                Some(Ok(words)) => {
                    let len = words.len() * 4;
                    out.dfas += usize::from(marker == 0);
                    out.dfa_bytes += len;
                    (Some(words), len as u32)
                }
                Some(Err(reason)) if marker == 0 => {
                    out.lazy.push((p as u32, reason));
                    (None, 0)
                }
                Some(Err(reason)) => return Err(Limit::MarkerDfa(reason).into()),
            };
            patterns.push(PatternRecord {
                signature,
                marker,
                source: source.to_string(),
                required,
                dfa,
                dfa_len,
            });
        }
        let payload = Payload {
            name: self.name.clone(),
            version: self.version.clone(),
            hash: hash.to_string(),
            signatures: self
                .signatures
                .iter()
                .zip(&self.signature_patterns)
                .map(|(s, patterns)| SignatureRecord {
                    id: s.id.clone(),
                    revision: s.revision,
                    title: s.title.clone(),
                    role: role_code(s.role),
                    severity: severity_code(s.severity),
                    category: s.category.clone(),
                    tags: s.tags.clone(),
                    priority: s.priority,
                    survivable: s.survivable,
                    remediation: s.remediation.clone(),
                    source: s.source.clone(),
                    anchor: anchor_code(s.anchor),
                    quiet_levels: quiet_code(&s.quiet_levels),
                    patterns: patterns.clone(),
                })
                .collect(),
            patterns,
            anchors: self.matcher.anchors().to_vec(),
            packed_anchors: self.matcher.packed_len() as u32,
        };
        Ok((payload, out))
    }

    /// Writes the database as an archive file, through a fresh temporary file in the same
    /// directory and a rename, so a reader never sees half a file (see `replace_file`).
    pub fn write_archive(&self, path: &Path, max_dfa_bytes: usize) -> Result<Archive> {
        let archive = self.to_archive(max_dfa_bytes)?;
        replace_file(path, &mut |file| file.write_all(&archive.bytes))?;
        Ok(archive)
    }

    /// Opens a database archive written by [`Database::write_archive`] (`faultline db
    /// compile`). The file is read into one aligned buffer, checked (header, format, content
    /// hash, bytecheck validation, every index, every DFA) and used in place.
    ///
    /// Only a regular file (or a symlink to one) is opened: a FIFO would block forever with
    /// no writer, and a directory, a device or a socket holds no archive. Anything else is an
    /// error naming the path, found with `stat` before any open.
    pub fn open(path: &Path) -> Result<Database> {
        let io = |source| Error::Io {
            path: path.to_path_buf(),
            source,
        };
        let not_regular = |meta: &std::fs::Metadata| {
            io(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                format!(
                    "not a regular file ({}): a database archive is a file written by `faultline db compile`",
                    file_kind(meta)
                ),
            ))
        };
        let meta = std::fs::metadata(path).map_err(io)?;
        if !meta.is_file() {
            return Err(not_regular(&meta));
        }
        let mut file = std::fs::File::open(path).map_err(io)?;
        let meta = file.metadata().map_err(io)?;
        // Replaced between the `stat` and the open: checked again on what was opened.
        if !meta.is_file() {
            return Err(not_regular(&meta));
        }
        let too_large = || {
            archive_error(
                path,
                ArchiveProblem::TooLarge {
                    max: MAX_ARCHIVE_BYTES,
                },
            )
        };
        // The known size read into a buffer that never reallocates and is not filled with
        // zeros first (writing 50 MB of zeros would be a quarter of a large archive's load):
        // `read_to_end` reads into the spare capacity.
        if meta.len() > MAX_ARCHIVE_BYTES {
            return Err(too_large());
        }
        let len = meta.len() as usize;
        let mut bytes = Vec::new();
        bytes.reserve_exact(len);
        (&mut file)
            .take(meta.len())
            .read_to_end(&mut bytes)
            .map_err(io)?;
        if bytes.len() < len {
            return Err(archive_error(path, ArchiveProblem::TruncatedWhileRead));
        }
        // A large allocation is page-aligned in practice; otherwise one copy aligns it.
        if (bytes.as_ptr() as usize).is_multiple_of(16) {
            return load(Backing::Vec(bytes), path);
        }
        let mut buf = AlignedVec::<16>::with_capacity(bytes.len());
        buf.extend_from_slice(&bytes);
        load(Backing::Heap(buf), path)
    }

    /// Loads a database from an archive's bytes (copied once into an aligned buffer).
    /// Errors name the source `<archive>`.
    pub fn from_archive_bytes(bytes: &[u8]) -> Result<Database> {
        let mut buf = AlignedVec::<16>::with_capacity(bytes.len());
        buf.extend_from_slice(bytes);
        load(Backing::Heap(buf), Path::new("<archive>"))
    }

    /// Loads a database from an archive in static memory (the embedded default database).
    /// The bytes must start 16-byte aligned, else they are copied into an aligned buffer.
    pub fn from_static_archive(bytes: &'static [u8], name: &Path) -> Result<Database> {
        if (bytes.as_ptr() as usize).is_multiple_of(16) {
            load(Backing::Static(bytes), name)
        } else {
            let mut buf = AlignedVec::<16>::with_capacity(bytes.len());
            buf.extend_from_slice(bytes);
            load(Backing::Heap(buf), name)
        }
    }
}

fn archive_error(path: &Path, reason: impl Into<ArchiveProblem>) -> Error {
    Error::Archive {
        path: path.to_path_buf(),
        reason: reason.into(),
    }
}

fn le_u32(b: &[u8], at: usize) -> u32 {
    let mut w = [0u8; 4];
    w.copy_from_slice(&b[at..at + 4]);
    u32::from_le_bytes(w)
}

fn le_u64(b: &[u8], at: usize) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(w)
}

/// Checks the header and hash; returns the payload's offset range.
fn check_header(bytes: &[u8], path: &Path) -> Result<std::ops::Range<usize>> {
    if bytes.len() < ARCHIVE_MAGIC.len() || bytes[..ARCHIVE_MAGIC.len()] != ARCHIVE_MAGIC {
        return Err(archive_error(path, ArchiveProblem::BadMagic));
    }
    if bytes.len() < HEADER {
        return Err(archive_error(
            path,
            ArchiveProblem::ShortHeader {
                len: bytes.len(),
                header: HEADER,
            },
        ));
    }
    let format = le_u32(bytes, 8);
    if format != ARCHIVE_FORMAT {
        return Err(archive_error(
            path,
            ArchiveProblem::Format {
                found: format,
                reads: ARCHIVE_FORMAT,
            },
        ));
    }
    if le_u32(bytes, 12) != 0 {
        return Err(archive_error(path, ArchiveProblem::ReservedBytes));
    }
    let len = le_u64(bytes, 16);
    let have = (bytes.len() - HEADER) as u64;
    if len != have {
        return Err(archive_error(
            path,
            ArchiveProblem::PayloadLength { len, have },
        ));
    }
    let payload = &bytes[HEADER..];
    let stored = le_u64(bytes, 24);
    let computed = xxhash_rust::xxh3::xxh3_64(payload);
    if stored != computed {
        return Err(archive_error(
            path,
            ArchiveProblem::HashMismatch { stored, computed },
        ));
    }
    Ok(HEADER..bytes.len())
}

/// What `load` takes from the validated payload before the buffer moves into [`Dfas`].
struct Parts {
    name: String,
    version: String,
    hash: String,
    signatures: Vec<SignatureInfo>,
    signature_patterns: Vec<Vec<u32>>,
    pattern_sources: Vec<String>,
    patterns: Vec<CompiledPattern>,
    required: Vec<Vec<Vec<u8>>>,
    anchors: Vec<Vec<u8>>,
    packed_anchors: usize,
    /// Per pattern, the byte range of its DFA in the buffer.
    dfa_ranges: Vec<Option<std::ops::Range<usize>>>,
}

fn parts(bytes: &[u8], path: &Path) -> Result<Parts> {
    let range = check_header(bytes, path)?;
    let payload = &bytes[range.clone()];
    let archived = rkyv::access::<ArchivedPayload, rancor::Error>(payload)
        .map_err(|e| archive_error(path, ArchiveProblem::Payload(e)))?;
    let bad = |what: ArchiveInvalid| archive_error(path, what);
    let packed_anchors = archived.packed_anchors.to_native() as usize;
    if packed_anchors > archived.anchors.len() {
        return Err(bad(ArchiveInvalid::PackedAnchors {
            packed: packed_anchors,
            anchors: archived.anchors.len(),
        }));
    }
    let n_sigs = archived.signatures.len();
    let n_pats = archived.patterns.len();
    let n_sig_pats = n_pats.checked_sub(MARKERS.len()).ok_or_else(|| {
        bad(ArchiveInvalid::FewerThanMarkers {
            patterns: n_pats,
            markers: MARKERS.len(),
        })
    })?;
    if n_sig_pats > crate::signature::MAX_PATTERNS {
        return Err(bad(ArchiveInvalid::TooManyPatterns(n_sig_pats)));
    }
    let mut signatures = Vec::with_capacity(n_sigs);
    let mut signature_patterns: Vec<Vec<u32>> = Vec::with_capacity(n_sigs);
    for (si, s) in archived.signatures.iter().enumerate() {
        let role = role_from(s.role).ok_or_else(|| bad(ArchiveInvalid::RoleCode(si)))?;
        let severity =
            severity_from(s.severity).ok_or_else(|| bad(ArchiveInvalid::SeverityCode(si)))?;
        let anchor = anchor_from(s.anchor).ok_or_else(|| bad(ArchiveInvalid::AnchorCode(si)))?;
        let quiet_levels =
            quiet_from(s.quiet_levels).ok_or_else(|| bad(ArchiveInvalid::QuietLevelCode(si)))?;
        let mut pats = Vec::with_capacity(s.patterns.len());
        for p in s.patterns.iter() {
            let p = p.to_native();
            let owner = archived.patterns.get(p as usize);
            match owner {
                Some(o)
                    if (p as usize) < n_sig_pats && o.marker == 0 && o.signature == si as u32 =>
                {
                    pats.push(p)
                }
                _ => {
                    return Err(bad(ArchiveInvalid::ForeignPattern {
                        signature: si,
                        pattern: p,
                    }))
                }
            }
        }
        signatures.push(SignatureInfo {
            id: s.id.to_string(),
            revision: s.revision.to_native(),
            title: s.title.to_string(),
            role,
            severity,
            category: s.category.to_string(),
            tags: s.tags.iter().map(|t| t.to_string()).collect(),
            priority: s.priority.to_native(),
            survivable: s.survivable,
            remediation: s.remediation.to_string(),
            source: s.source.to_string(),
            anchor,
            quiet_levels,
        });
        signature_patterns.push(pats);
    }
    let base = bytes.as_ptr() as usize;
    let mut patterns = Vec::with_capacity(n_pats);
    let mut required = Vec::with_capacity(n_pats);
    let mut dfa_ranges = Vec::with_capacity(n_pats);
    let mut pattern_sources = Vec::with_capacity(n_sig_pats);
    for (p, rec) in archived.patterns.iter().enumerate() {
        let owner = if p < n_sig_pats {
            let s = rec.signature.to_native();
            if rec.marker != 0 || s as usize >= n_sigs {
                return Err(bad(ArchiveInvalid::PatternOwner {
                    pattern: p,
                    signature: s,
                    signatures: n_sigs,
                }));
            }
            if !signature_patterns[s as usize].contains(&(p as u32)) {
                return Err(bad(ArchiveInvalid::Unlisted(p)));
            }
            pattern_sources.push(rec.source.to_string());
            Owner::Signature(s)
        } else {
            let (marker, source) = MARKERS[p - n_sig_pats];
            if rec.marker != marker as u8 || rec.source.as_str() != source {
                return Err(archive_error(path, ArchiveProblem::OtherMarkers));
            }
            Owner::Marker(marker)
        };
        let mut req = Vec::with_capacity(rec.required.len());
        for m in rec.required.iter() {
            if m.is_empty() {
                return Err(bad(ArchiveInvalid::EmptyLiteral(p)));
            }
            req.push(m.as_slice().to_vec());
        }
        if req.is_empty() {
            return Err(bad(ArchiveInvalid::NoLiteral(p)));
        }
        let dfa_range = match rec.dfa.as_ref() {
            Some(words) => {
                let len = rec.dfa_len.to_native() as usize;
                let start = words.as_ptr() as usize - base;
                if len > words.len() * 4 {
                    return Err(bad(ArchiveInvalid::DfaLength(p)));
                }
                Some(start..start + len)
            }
            None => None,
        };
        patterns.push(CompiledPattern::new(
            owner,
            Confirm::archived(&rec.source, dfa_range.is_some()),
            &rec.source,
            &req,
        ));
        required.push(req);
        dfa_ranges.push(dfa_range);
    }
    let mut anchors = Vec::with_capacity(archived.anchors.len());
    for a in archived.anchors.iter() {
        if a.is_empty() {
            return Err(bad(ArchiveInvalid::EmptyAnchor));
        }
        anchors.push(a.as_slice().to_vec());
    }
    Ok(Parts {
        name: archived.name.to_string(),
        version: archived.version.to_string(),
        hash: archived.hash.to_string(),
        signatures,
        signature_patterns,
        pattern_sources,
        patterns,
        required,
        anchors,
        packed_anchors,
        dfa_ranges,
    })
}

fn load(backing: Backing, path: &Path) -> Result<Database> {
    let parts = parts(backing.bytes(), path)?;
    let ranges = &parts.dfa_ranges;
    let dfas = Dfas::try_new(backing, |b| -> Result<DfaList<'_>> {
        let bytes = b.bytes();
        ranges
            .iter()
            .enumerate()
            .map(|(p, r)| {
                let Some(r) = r else { return Ok(None) };
                let slice = bytes.get(r.clone()).unwrap_or_default();
                dense::DFA::from_bytes(slice)
                    .map(|(dfa, _)| Some(dfa))
                    .map_err(|source| {
                        archive_error(path, ArchiveProblem::Dfa { pattern: p, source })
                    })
            })
            .collect()
    })?;
    let matcher = Matcher::build(
        parts.patterns,
        &parts.required,
        Anchors {
            list: parts.anchors,
            packed: parts.packed_anchors,
            // Stored in an archive: the anchors' expected rates were not kept.
            rates: Vec::new(),
        },
        Some(dfas),
    )
    .map_err(|e| archive_error(path, ArchiveInvalid::Matcher(e)))?;
    // Every required literal the anchors are chosen to cover (see `choose_anchors`) must
    // hold an anchor, else the prefilter would skip lines the compiled database finds.
    for (member, _) in matcher.members() {
        if member.len() >= super::matcher::MIN_LITERAL
            && matcher.find_candidate(member, 0).is_none()
        {
            return Err(archive_error(path, ArchiveInvalid::UnanchoredLiteral));
        }
    }
    let capture_regexes = parts
        .pattern_sources
        .iter()
        .map(|_| OnceLock::new())
        .collect();
    Ok(Database {
        name: parts.name,
        version: parts.version,
        hash: parts.hash,
        signatures: parts.signatures,
        signature_patterns: parts.signature_patterns,
        pattern_sources: parts.pattern_sources,
        matcher,
        capture_regexes,
    })
}

/// Replaces `path` with what `write` puts in a new file. The new file is created next to
/// `path` exclusively (`O_EXCL`: a symlink or file planted under its name is never
/// followed nor reused) under a name no other user can predict, flushed to disk, then
/// renamed over `path`; on any failure it is removed and `path` is left as it was. A `path`
/// that exists and is not a regular file (a symlink, a device, a FIFO, a directory) is
/// refused rather than replaced.
pub(crate) fn replace_file(
    path: &Path,
    write: &mut dyn FnMut(&mut std::fs::File) -> std::io::Result<()>,
) -> Result<()> {
    let io = |source| Error::Io {
        path: path.to_path_buf(),
        source,
    };
    match std::fs::symlink_metadata(path) {
        Ok(m) if !m.file_type().is_file() => {
            let what = if m.file_type().is_symlink() {
                "a symlink"
            } else if m.is_dir() {
                "a directory"
            } else {
                "a device, FIFO or socket"
            };
            return Err(io(std::io::Error::other(format!(
                "is {what}, not a regular file: not replaced (`-o -` writes to standard output)"
            ))));
        }
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(io(e)),
    }
    let name = path
        .file_name()
        .ok_or_else(|| io(std::io::Error::other("not a file name")))?;
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let (tmp, mut file) = create_temp(dir, name).map_err(io)?;
    /// Removes the temporary file unless it was renamed into place.
    struct Remove(Option<PathBuf>);
    impl Drop for Remove {
        fn drop(&mut self) {
            if let Some(p) = self.0.take() {
                let _ = std::fs::remove_file(p);
            }
        }
    }
    let mut remove = Remove(Some(tmp.clone()));
    write(&mut file)
        .and_then(|()| file.sync_all())
        .map_err(io)?;
    drop(file);
    std::fs::rename(&tmp, path).map_err(io)?;
    remove.0 = None;
    Ok(())
}

/// Creates `.NAME.XXXXXXXXXXXXXXXX.tmp` in `dir` with `O_EXCL`, the X's from a keyed hash
/// (std's per-process random SipHash keys) of the process id, the time and the attempt.
fn create_temp(dir: &Path, name: &std::ffi::OsStr) -> std::io::Result<(PathBuf, std::fs::File)> {
    use std::hash::BuildHasher;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let mut last = None;
    for attempt in 0..64u32 {
        let salt = std::collections::hash_map::RandomState::new().hash_one((
            std::process::id(),
            now,
            attempt,
        ));
        let mut file_name = std::ffi::OsString::from(".");
        file_name.push(name);
        file_name.push(format!(".{salt:016x}.tmp"));
        let tmp = dir.join(file_name);
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)
        {
            Ok(f) => return Ok((tmp, f)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => last = Some(e),
            Err(e) => return Err(e),
        }
    }
    Err(last.unwrap_or_else(|| std::io::Error::other("no temporary file name left")))
}

#[cfg(test)]
mod tests;

/// What a file that is not a regular file is, for an error message.
fn file_kind(meta: &std::fs::Metadata) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        let ft = meta.file_type();
        if ft.is_fifo() {
            return "a FIFO";
        }
        if ft.is_socket() {
            return "a socket";
        }
        if ft.is_block_device() || ft.is_char_device() {
            return "a device";
        }
    }
    if meta.is_dir() {
        "a directory"
    } else {
        "not a file"
    }
}
