//! The on-disk signature format: TOML files in a directory, loaded and checked for structure.
//!
//! A directory holds `db.toml` (the database's name, version and format) and any number of
//! other `*.toml` files, each a list of `[[signature]]` tables. Loading reports every
//! structural problem with `file:line:column`; pattern-level checks (regex syntax, required
//! literals, examples) happen when the set is compiled, see [`crate::Database::compile`].

mod load;

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

pub use load::{load_dir, load_sources, location, toml_problem};

/// What a matched line means for the diagnosis.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// A root cause: the thing to fix.
    Cause,
    /// A consequence of a cause, e.g. "Engine core initialization failed. See root cause above."
    Symptom,
    /// A harmless line that looks alarming.
    Noise,
    /// Evidence (format 3): a run's start-up banner (vLLM's `non-default args`, SGLang's
    /// `server_args`, torch elastic's launch configs).
    Start,
    /// Evidence (format 3): the run is making progress (server ready, requests served, steps or
    /// epochs advancing).
    Progress,
    /// Evidence (format 3): the run finished its work (a trainer's final summary, every worker
    /// exited with status 0, tests passed, a build finished).
    Completed,
    /// Evidence (format 3): the run was asked to stop (SIGTERM/SIGINT received, shutdown
    /// requested).
    Stopped,
}

impl Role {
    /// The lowercase name used in files and reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Cause => "cause",
            Role::Symptom => "symptom",
            Role::Noise => "noise",
            Role::Start => "start",
            Role::Progress => "progress",
            Role::Completed => "completed",
            Role::Stopped => "stopped",
        }
    }

    /// Whether the role is run evidence (start, progress, completed, stopped): such lines never
    /// make findings; they decide run boundaries and outcomes.
    pub fn is_evidence(self) -> bool {
        matches!(
            self,
            Role::Start | Role::Progress | Role::Completed | Role::Stopped
        )
    }
}

/// How bad a matched line is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// The process cannot go on.
    Fatal,
    /// Something failed; the process may go on.
    Error,
    /// Worth knowing; not a failure on its own.
    Warning,
    /// Informational.
    Info,
}

impl Severity {
    /// The lowercase name used in files and reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Fatal => "fatal",
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Info => "info",
        }
    }
}

/// Where on a line a signature's match must start for the line to count (format 3).
///
/// Logs carry text that outsiders control (request prompts and bodies, printed data
/// samples): a signature that matched anywhere would let such text choose the diagnosis.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Anchor {
    /// Where the software prints its message: at a boundary of the line's recognised
    /// prefix (timestamps, levels, process tags) or in the message's head (its exception
    /// chain and labels), never inside quoted data (the rule the analysis applies).
    #[default]
    Message,
    /// Anywhere on the line: for messages that real software prints quoted inside another
    /// (a wrapper quoting the error it caught). Needs `anchor_reason`.
    Anywhere,
}

impl Anchor {
    /// The lowercase name used in files.
    pub fn as_str(self) -> &'static str {
        match self {
            Anchor::Message => "message",
            Anchor::Anywhere => "anywhere",
        }
    }
}

/// A log level below WARNING at which a line still makes a cause or symptom through a
/// signature that declares it (format 3, `quiet_levels`): by default a cause or symptom
/// signature counts only on lines at WARNING or above, or with no level the prefix names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum QuietLevel {
    /// INFO (and glog `I`).
    Info,
    /// DEBUG (and glog `D`, TensorRT's verbose `V`).
    Debug,
}

/// Where a piece of a signature file starts: the file and a byte span within it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Span {
    /// Index of the file in [`SignatureSet::files`].
    pub file: usize,
    /// Byte offset where it starts.
    pub start: usize,
    /// Byte offset where it ends.
    pub end: usize,
}

/// A string value together with where it stands in its file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Located {
    /// The text, as parsed.
    pub value: String,
    /// Where it was written.
    pub span: Span,
}

/// What a signature says about the lines it matches: everything but its patterns and
/// examples. The one metadata type of a signature: a loaded [`Signature`] holds it, a
/// compiled database keeps it per signature (`Database::signature`), the archive stores it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SignatureInfo {
    /// Stable dotted id: `vendor.area.name`.
    pub id: String,
    /// Revision, bumped on any change of meaning.
    pub revision: u32,
    /// One-line title shown in reports.
    pub title: String,
    /// Cause, symptom or noise.
    pub role: Role,
    /// How bad a line it matches is.
    pub severity: Severity,
    /// Category name (e.g. `cuda-oom`), for summaries and accuracy by category.
    pub category: String,
    /// Free-form tags.
    pub tags: Vec<String>,
    /// On a line several signatures match, only the highest priority makes a finding (default 0).
    pub priority: i32,
    /// Whether the process can go on after this line (a per-request error, a retried
    /// download): a survivable failure ranks below every fatal one. Format 1 sets default it
    /// from severity (`fatal` is not survivable).
    pub survivable: bool,
    /// What to do about it; may hold `{name}` placeholders filled from captures.
    pub remediation: String,
    /// Where on a line its match must start (format 3; default [`Anchor::Message`]).
    pub anchor: Anchor,
    /// The levels below WARNING at which its lines still count (format 3; default none:
    /// a cause or symptom logged at INFO or DEBUG is log text, not a failure).
    pub quiet_levels: Vec<QuietLevel>,
    /// The real software that prints the message (`vendor: path/file.py`).
    pub source: String,
}

/// One failure signature as loaded: its metadata, patterns and examples.
#[derive(Clone, Debug)]
pub struct Signature {
    /// Id, title, role, severity and the rest of what a report shows.
    pub info: SignatureInfo,
    /// Regexes in faultline's dialect, matched against one whole line.
    pub patterns: Vec<Located>,
    /// Real lines every pattern set must match (checked at compile).
    pub examples: Vec<Located>,
    /// Near misses that must not match (checked at compile).
    pub counterexamples: Vec<Located>,
    /// Whether `survivable` was written in the file (format 2 requires it).
    pub survivable_given: bool,
    /// Examples that were constructed (a source template filled in) rather than copied from a
    /// real log; each must also be listed in `examples`.
    pub constructed: Vec<String>,
    /// Why a cause or symptom that is not survivable may match a line of a healthy log (the
    /// precision lint, `db check --corpus`, accepts its matches there); format 3.
    pub healthy_ok: Option<String>,
    /// Why the signature matches anywhere on a line (`anchor = "anywhere"`, which needs it);
    /// format 3.
    pub anchor_reason: Option<String>,
    /// Whether `anchor` was written in the file.
    pub anchor_given: bool,
    /// Where the signature's `id` stands.
    pub span: Span,
}

/// The database header from `db.toml`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DbInfo {
    /// The database's name, shown in reports and `--version`.
    pub name: String,
    /// Its version (calendar versioning).
    pub version: String,
    /// The signature-file format, 1 to 3.
    pub format: u32,
    #[serde(default)]
    /// Ids removed for good; they may not be reused.
    pub retired: Vec<String>,
}

/// The signature-file format this faultline writes and prefers: format 2 requires
/// `survivable` on every cause, symptom and noise signature; format 3 adds the evidence roles
/// (`start`, `progress`, `completed`, `stopped`), `healthy_ok`, `anchor`/`anchor_reason` and
/// `quiet_levels`.
pub(crate) const FORMAT_VERSION: u32 = 3;

/// Every signature-file format this faultline reads. Format 1 sets load with `survivable`
/// defaulted from severity, and `db check` warns about them.
pub(crate) const SUPPORTED_FORMATS: [u32; 3] = [1, 2, 3];

/// Most patterns one database may hold (a signature set, or an archive, with more is refused).
pub(crate) const MAX_PATTERNS: usize = 20_000;
/// Longest pattern accepted, in bytes.
pub(crate) const MAX_PATTERN_LEN: usize = 4096;

/// A source file of a signature set, kept so that problems can name line and column.
#[derive(Clone, Debug)]
pub struct SourceFile {
    /// Path shown in problems (`file:line:column`).
    pub path: PathBuf,
    /// The file's text.
    pub text: String,
}

/// A loaded, structurally valid set of signatures.
#[derive(Clone, Debug)]
pub struct SignatureSet {
    /// The database's name, version and format (`db.toml`).
    pub info: DbInfo,
    /// Every signature, in file order.
    pub signatures: Vec<Signature>,
    /// The files the set was loaded from, for locating problems.
    pub files: Vec<SourceFile>,
    /// Per file, the byte offsets where its lines start (built at the first `locate`), so
    /// locating every signature of a set costs a binary search each, not a rescan.
    line_starts: std::sync::OnceLock<Vec<Vec<usize>>>,
}

impl SignatureSet {
    /// The `file:line:column` of a span.
    pub fn locate(&self, span: &Span) -> crate::error::Location {
        let file = &self.files[span.file];
        let index = self.line_starts.get_or_init(|| {
            self.files
                .iter()
                .map(|f| load::line_starts(&f.text))
                .collect()
        });
        match index.get(span.file) {
            // The index is of the files as they were: one changed since is located afresh.
            Some(starts) if starts.last().is_some_and(|&s| s <= file.text.len()) => {
                load::location_in(&file.path, &file.text, starts, span.start)
            }
            _ => load::location(&file.path, &file.text, span.start),
        }
    }

    /// Merges another set into this one (a set of extra signatures), keeping this set's header.
    pub fn extend(&mut self, other: SignatureSet) -> crate::Result<()> {
        let offset = self.files.len();
        self.files.extend(other.files);
        self.line_starts = std::sync::OnceLock::new();
        for mut sig in other.signatures {
            sig.span.file += offset;
            for l in sig
                .patterns
                .iter_mut()
                .chain(sig.examples.iter_mut())
                .chain(sig.counterexamples.iter_mut())
            {
                l.span.file += offset;
            }
            self.signatures.push(sig);
        }
        load::check_ids(self)
    }

    /// Warnings that do not stop the set from loading: a `format = 1` header (survivable
    /// values defaulted from severity), a set without run evidence.
    pub fn warnings(&self) -> Vec<String> {
        let mut w = Vec::new();
        if !self.signatures.iter().any(|s| s.info.role.is_evidence()) {
            w.push("the set has no evidence signatures (roles start, progress, completed, stopped): runs are told apart only by clock steps, and run outcomes are only failed or unknown".into());
        }
        if self.info.format < 2 {
            let defaulted = self
                .signatures
                .iter()
                .filter(|s| !s.survivable_given)
                .count();
            w.push(format!(
                "signature format {} is deprecated: {defaulted} signatures have `survivable` defaulted from severity (fatal = not survivable); set `format = {FORMAT_VERSION}` in db.toml and write `survivable = true|false` on each signature",
                self.info.format
            ));
        }
        w
    }

    /// How many examples are listed as constructed (not copied from a real log).
    pub fn constructed_examples(&self) -> usize {
        self.signatures.iter().map(|s| s.constructed.len()).sum()
    }

    /// The distinct vendor prefixes (an id's first dotted component), `noise` excluded.
    pub fn vendors(&self) -> std::collections::BTreeSet<&str> {
        self.signatures
            .iter()
            .filter_map(|s| s.info.id.split('.').next())
            .filter(|v| *v != "noise")
            .collect()
    }

    /// Removes the signatures whose id is listed; an unknown id is an error.
    pub fn disable(&mut self, ids: &[String]) -> crate::Result<()> {
        for id in ids {
            if !self.signatures.iter().any(|s| &s.info.id == id) {
                return Err(crate::Error::UnknownId(id.clone()));
            }
        }
        self.signatures.retain(|s| !ids.contains(&s.info.id));
        Ok(())
    }
}
