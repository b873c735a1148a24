//! Turning the paths a user names into the inputs of a sweep: directories walked recursively
//! (sorted, include and exclude globs applied, symlinked directories followed only on request
//! and never round a loop), FIFOs, sockets and devices found in a walk skipped (opening a FIFO
//! blocks), and a [`Shard`] `I/N` keeping a stable 1/N of the inputs.

use std::fmt;
#[cfg(unix)]
use std::io;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use globset::{GlobSet, GlobSetBuilder};

use crate::error::{Error, Result, Usage};

/// One of N disjoint parts of a sweep (`I/N`, I in 1..=N).
///
/// An input belongs to shard `1 + xxh3_64(relative path) mod N`, where the relative path is
/// the input's path below the directory named on the command line (`/`-separated, as UTF-8
/// with U+FFFD for a byte that is not), or the path as written for a file named directly
/// (`-`, standard input, is in shard 1). So every node of a job array, given the same root,
/// agrees on the split without coordination, whatever the absolute mount point.
///
/// ```
/// use faultline::Shard;
///
/// let shards: Vec<Shard> = (1..=3).map(|i| format!("{i}/3").parse().unwrap()).collect();
/// let owners = shards.iter().filter(|s| s.contains("2026-11/run-17.log")).count();
/// assert_eq!(owners, 1);
/// assert!("0/3".parse::<Shard>().is_err());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    /// 1-based.
    pub index: u64,
    /// How many shards, N.
    pub count: u64,
}

impl Shard {
    /// The shard (1-based) that `relative` belongs to among `count`.
    pub fn of(relative: &str, count: u64) -> u64 {
        1 + xxhash_rust::xxh3::xxh3_64(relative.as_bytes()) % count.max(1)
    }

    /// Whether the input with this relative path belongs to this shard.
    pub fn contains(&self, relative: &str) -> bool {
        Shard::of(relative, self.count) == self.index
    }
}

impl FromStr for Shard {
    type Err = Error;

    fn from_str(s: &str) -> Result<Shard> {
        let bad = || Error::Usage(Usage::Shard(s.to_string()));
        let (i, n) = s.split_once('/').ok_or_else(bad)?;
        let index: u64 = i.trim().parse().map_err(|_| bad())?;
        let count: u64 = n.trim().parse().map_err(|_| bad())?;
        if index == 0 || count == 0 || index > count {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// How paths become inputs.
#[derive(Clone, Debug, Default)]
pub struct WalkOptions {
    /// Keep only files in a walk that match one of these globs (all files if empty).
    pub globs: Vec<String>,
    /// Leave out files and directories in a walk that match one of these globs.
    pub excludes: Vec<String>,
    /// Follow symlinked directories (loops are detected and reported, never followed).
    pub follow: bool,
    /// Scan every file a walk finds. Off (the default) and without `globs`, files that are
    /// not logs by their name ([`not_a_log_by_name`]) are skipped with
    /// [`SkipReason::ByName`]; non-empty `globs` choose the files instead.
    pub all_files: bool,
}

impl WalkOptions {
    /// The roots of a sweep and these filters, for a message: `DIR1 DIR2 (--glob *.log
    /// --exclude old)`, or the roots alone without filters.
    pub fn describe(&self, roots: &[PathBuf]) -> String {
        let names: Vec<String> = roots.iter().map(|p| p.display().to_string()).collect();
        let filters: Vec<String> = (self.globs.iter().map(|g| format!("--glob {g}")))
            .chain(self.excludes.iter().map(|g| format!("--exclude {g}")))
            .collect();
        if filters.is_empty() {
            names.join(" ")
        } else {
            format!("{} ({})", names.join(" "), filters.join(" "))
        }
    }
}

/// Fails when a root of a sweep does not exist, with the error opening it gives
/// (`ROOT: No such file or directory (os error 2)`, the line `faultline scan ROOT` prints
/// before it exits 2), so that a program can refuse the sweep before it starts, as the
/// Python package does. `-` (standard input) always exists.
pub fn roots_exist(roots: &[PathBuf]) -> Result<()> {
    for root in roots.iter().filter(|r| r.as_path() != Path::new("-")) {
        match std::fs::metadata(root) {
            Err(source) if source.kind() == io::ErrorKind::NotFound => {
                return Err(Error::Io {
                    path: root.clone(),
                    source,
                });
            }
            _ => {}
        }
    }
    Ok(())
}

/// Fails with [`Usage::NothingSelected`] when the walk of `roots` gave no input and no path
/// that failed (an empty directory, `--glob`/`--exclude` filters that leave nothing): such a
/// sweep is an error (`faultline scan` exits 2; Python raises `InputError`), never a clean
/// one.
///
/// ```
/// use faultline::{check_selection, walk, WalkOptions};
///
/// let dir = tempfile::tempdir()?;
/// let roots = [dir.path().to_path_buf()];
/// let opts = WalkOptions { globs: vec!["*.log".into()], ..WalkOptions::default() };
/// let entries = walk(&roots, &opts)?;
/// let e = check_selection(&roots, &opts, &entries).unwrap_err();
/// assert_eq!(e.to_string(), format!("no input was selected from {} (--glob *.log)", dir.path().display()));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn check_selection(roots: &[PathBuf], opts: &WalkOptions, entries: &[Entry]) -> Result<()> {
    if entries
        .iter()
        .any(|e| matches!(e, Entry::Input { .. } | Entry::Failed(_)))
    {
        return Ok(());
    }
    Err(Usage::NothingSelected(opts.describe(roots)).into())
}

/// One entry of a sweep, in output order.
#[derive(Debug)]
pub enum Entry {
    /// A file to scan (or `-`, standard input) and its path relative to the scan root.
    Input {
        /// The path as found.
        path: PathBuf,
        /// Its path relative to the scan root (what shards hash).
        relative: String,
    },
    /// Something found in a walk and deliberately not opened (a FIFO, a socket, a symlink loop).
    Skipped {
        /// The path.
        path: PathBuf,
        /// Why it was not opened.
        reason: SkipReason,
    },
    /// A path that could not be listed or examined.
    Failed(Error),
}

/// Why a walk left an entry unopened.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SkipReason {
    /// The same file (device and inode) as this earlier entry, which is scanned instead.
    SameFile(PathBuf),
    /// A symlinked directory that leads back to this ancestor of the walk.
    SymlinkLoop(PathBuf),
    /// A symlink to a directory, and [`WalkOptions::follow`] is off.
    DirectorySymlink,
    /// A FIFO (opening it would block), a socket or a device: what it is.
    Special(&'static str),
    /// A file whose name says it is not a log (documentation, configuration, source, an
    /// image, an archive the scan cannot read): its extension, lowercase with the dot.
    ByName(String),
}

impl fmt::Display for SkipReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SkipReason::SameFile(first) => {
                write!(f, "the same file as {} (scanned once)", first.display())
            }
            SkipReason::SymlinkLoop(ancestor) => {
                write!(f, "symlink loop back to {}", ancestor.display())
            }
            SkipReason::DirectorySymlink => f.write_str("symlink to a directory (not followed)"),
            SkipReason::Special(what) => f.write_str(what),
            SkipReason::ByName(ext) => write!(f, "not a log by its name ({ext})"),
        }
    }
}

/// Extensions of files a directory walk leaves out by default: documentation, configuration
/// and source files that sit beside logs (a README, a job's YAML, a launcher script) and
/// would be reported as logs, images, and archives other than `.gz` and `.zst` (which the
/// scan decompresses). Every other name is scanned: `.log`, `.out`, `.err`, `.txt`, none.
const NOT_LOGS: &[&str] = &[
    "md", "markdown", "rst", "yaml", "yml", "json", "toml", "py", "sh", "png", "jpg", "jpeg",
    "gif", "bmp", "svg", "webp", "ico", "tif", "tiff", "zip", "tar", "tgz", "bz2", "tbz2", "xz",
    "txz", "7z", "rar", "lz4", "lzma", "jar", "whl",
];

/// The extension (lowercase, with its dot) of a file name that `NOT_LOGS` leaves out of a
/// directory walk, or `None` for a name that is scanned.
///
/// ```
/// use faultline::not_a_log_by_name;
///
/// assert_eq!(not_a_log_by_name("README.MD").as_deref(), Some(".md"));
/// assert_eq!(not_a_log_by_name("job.yaml").as_deref(), Some(".yaml"));
/// for scanned in ["train.log", "slurm-17.out", "rank0.err", "stdout", "a.log.gz", "b.zst"] {
///     assert_eq!(not_a_log_by_name(scanned), None, "{scanned}");
/// }
/// ```
pub fn not_a_log_by_name(name: &str) -> Option<String> {
    let (stem, ext) = name.rsplit_once('.')?;
    if stem.is_empty() {
        return None;
    }
    let ext = ext.to_ascii_lowercase();
    NOT_LOGS.contains(&ext.as_str()).then(|| format!(".{ext}"))
}

/// The line `faultline scan` prints on standard error when a walk skipped files by name
/// (`skipped 12 files by name (.toml 10, .md 2); --all-files scans them`, extensions by count,
/// most first), or `None` when it skipped none.
pub fn skipped_by_name_note(entries: &[Entry]) -> Option<String> {
    let mut counts = std::collections::BTreeMap::<&str, usize>::new();
    for e in entries {
        if let Entry::Skipped {
            reason: SkipReason::ByName(ext),
            ..
        } = e
        {
            *counts.entry(ext.as_str()).or_default() += 1;
        }
    }
    let total: usize = counts.values().sum();
    if total == 0 {
        return None;
    }
    let mut by_count: Vec<(&str, usize)> = counts.into_iter().collect();
    by_count.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    let parts: Vec<String> = by_count.iter().map(|(e, n)| format!("{e} {n}")).collect();
    Some(format!(
        "skipped {total} file{} by name ({}); --all-files scans them",
        if total == 1 { "" } else { "s" },
        parts.join(", ")
    ))
}

/// A glob filter: a pattern without `/` matches a file name at any depth, one with `/`
/// matches the path relative to the scan root.
struct Filter {
    names: GlobSet,
    paths: GlobSet,
    empty: bool,
}

impl Filter {
    fn new(globs: &[String], what: &'static str) -> Result<Filter> {
        let mut names = GlobSetBuilder::new();
        let mut paths = GlobSetBuilder::new();
        for g in globs {
            let glob = globset::GlobBuilder::new(g)
                .literal_separator(true)
                .build()
                .map_err(|e| Usage::Glob {
                    what,
                    glob: g.clone(),
                    source: Box::new(e),
                })?;
            if g.contains('/') {
                paths.add(glob);
            } else {
                names.add(glob);
            }
        }
        let build = |b: GlobSetBuilder| {
            b.build().map_err(|e| Usage::GlobSet {
                what,
                source: Box::new(e),
            })
        };
        Ok(Filter {
            names: build(names)?,
            paths: build(paths)?,
            empty: globs.is_empty(),
        })
    }

    fn matches(&self, relative: &str) -> bool {
        let name = relative.rsplit('/').next().unwrap_or(relative);
        self.names.is_match(name) || self.paths.is_match(relative)
    }
}

fn relative_of(path: &Path, root: &Path) -> String {
    let rel = path.strip_prefix(root).unwrap_or(path);
    let parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    parts.join("/")
}

/// What kind of special file `ft` is, if it is one a sweep must not open.
#[cfg(unix)]
fn special(ft: &std::fs::FileType) -> Option<&'static str> {
    use std::os::unix::fs::FileTypeExt;
    if ft.is_fifo() {
        Some("a FIFO (opening it would block)")
    } else if ft.is_socket() {
        Some("a socket")
    } else if ft.is_block_device() || ft.is_char_device() {
        Some("a device")
    } else {
        None
    }
}

#[cfg(not(unix))]
fn special(_: &std::fs::FileType) -> Option<&'static str> {
    None
}

/// Fails with [`Usage::StdinTwice`] when `paths` name standard input more than once, in any
/// form (see [`walk`]); a program that reads inputs of several kinds (logs and baselines)
/// checks all of them together.
pub fn stdin_named_once(paths: &[PathBuf]) -> Result<()> {
    if names_of_stdin(paths) > 1 {
        return Err(Usage::StdinTwice.into());
    }
    Ok(())
}

/// Expands `paths` into entries. A directory's files come sorted by path; paths named
/// directly (files, FIFOs, `-`) are kept as given and not filtered by globs. An invalid glob
/// is an error; everything else that goes wrong is an entry, so the sweep goes on.
pub fn walk(paths: &[PathBuf], opts: &WalkOptions) -> Result<Vec<Entry>> {
    let globs = Filter::new(&opts.globs, "glob")?;
    let excludes = Filter::new(&opts.excludes, "exclude glob")?;
    stdin_named_once(paths)?;
    let mut out = Vec::new();
    for root in paths {
        if root == Path::new("-") || !root.is_dir() {
            out.push(Entry::Input {
                path: root.clone(),
                relative: relative_of(root, Path::new("")),
            });
            continue;
        }
        let by_name = globs.empty && !opts.all_files;
        walk_dir(root, opts.follow, by_name, &globs, &excludes, &mut out);
    }
    scan_once(&mut out);
    Ok(out)
}

/// How many of `paths` name standard input: each `-`, and, when file descriptor 0 is a
/// stream (a pipe, a FIFO, a socket, a terminal), each path whose device and inode are fd 0's
/// (`/dev/stdin`, `/dev/fd/0`, `/proc/self/fd/0`, the FIFO itself). Two names of one stream
/// would split it between two reports. When fd 0 is a regular file, opening a name of it
/// reads the file afresh from its start, so only `-` counts.
fn names_of_stdin(paths: &[PathBuf]) -> usize {
    let dashes = paths.iter().filter(|p| *p == Path::new("-")).count();
    #[cfg(unix)]
    {
        use std::os::fd::AsFd;
        use std::os::unix::fs::MetadataExt;
        // fstat(0) through a duplicate of the descriptor (no read, no open of a path).
        let Ok(fd0) = io::stdin().as_fd().try_clone_to_owned() else {
            return dashes;
        };
        let Ok(meta) = std::fs::File::from(fd0).metadata() else {
            return dashes;
        };
        if meta.is_file() {
            return dashes;
        }
        let id = (meta.dev(), meta.ino());
        dashes
            + paths
                .iter()
                .filter(|p| *p != Path::new("-"))
                .filter(|p| std::fs::metadata(p).is_ok_and(|m| (m.dev(), m.ino()) == id))
                .count()
    }
    #[cfg(not(unix))]
    dashes
}

/// Keeps one entry per file: a file reached twice (named twice, through a link, or both named
/// and found in a directory) would be scanned twice, and a FIFO named twice would split one
/// stream between two reports. Later names of the same device and inode become skipped
/// entries naming the first.
fn scan_once(entries: &mut [Entry]) {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let mut seen = std::collections::HashMap::new();
        for e in entries.iter_mut() {
            let Entry::Input { path, .. } = e else {
                continue;
            };
            if path == Path::new("-") {
                continue;
            }
            let Ok(meta) = std::fs::metadata(&*path) else {
                continue;
            };
            match seen.entry((meta.dev(), meta.ino())) {
                std::collections::hash_map::Entry::Vacant(v) => {
                    v.insert(path.clone());
                }
                std::collections::hash_map::Entry::Occupied(first) => {
                    *e = Entry::Skipped {
                        path: std::mem::take(path),
                        reason: SkipReason::SameFile(first.get().clone()),
                    };
                }
            }
        }
    }
    #[cfg(not(unix))]
    let _ = entries;
}

impl Shard {
    /// Whether this shard keeps `entry` of a walk. Standard input, skipped entries and walk
    /// errors are kept by shard 1 only.
    pub fn keeps(&self, entry: &Entry) -> bool {
        match entry {
            Entry::Input { path, relative } if path != Path::new("-") => self.contains(relative),
            _ => self.index == 1,
        }
    }
}

fn walk_dir(
    root: &Path,
    follow: bool,
    by_name: bool,
    globs: &Filter,
    excludes: &Filter,
    out: &mut Vec<Entry>,
) {
    let walker = walkdir::WalkDir::new(root)
        .follow_links(follow)
        .sort_by_file_name()
        .into_iter()
        .filter_entry(|e| e.depth() == 0 || !excludes.matches(&relative_of(e.path(), root)));
    for entry in walker {
        let entry = match entry {
            Ok(e) => e,
            Err(err) => {
                let path = err.path().unwrap_or(root).to_path_buf();
                if let Some(ancestor) = err.loop_ancestor() {
                    out.push(Entry::Skipped {
                        reason: SkipReason::SymlinkLoop(ancestor.to_path_buf()),
                        path,
                    });
                    continue;
                }
                let source = err
                    .into_io_error()
                    .unwrap_or_else(|| std::io::Error::other("directory walk failed"));
                out.push(Entry::Failed(Error::Io { path, source }));
                continue;
            }
        };
        let ft = entry.file_type();
        if ft.is_dir() {
            continue;
        }
        let relative = relative_of(entry.path(), root);
        let (mut kind, mut dangling) = (ft, None);
        if ft.is_symlink() {
            // Not followed (follow_links is off): a link to a directory is reported whatever
            // the globs (files below it could match), a dangling link that the globs select is an error.
            match std::fs::metadata(entry.path()) {
                Ok(m) if m.is_dir() => {
                    out.push(Entry::Skipped {
                        path: entry.into_path(),
                        reason: SkipReason::DirectorySymlink,
                    });
                    continue;
                }
                Ok(m) => kind = m.file_type(),
                Err(source) => dangling = Some(source),
            }
        }
        if !globs.empty && !globs.matches(&relative) {
            continue;
        }
        let name = entry.file_name().to_string_lossy();
        if let Some(ext) = by_name.then(|| not_a_log_by_name(&name)).flatten() {
            out.push(Entry::Skipped {
                path: entry.into_path(),
                reason: SkipReason::ByName(ext),
            });
            continue;
        }
        if let Some(source) = dangling {
            out.push(Entry::Failed(Error::Io {
                path: entry.into_path(),
                source,
            }));
            continue;
        }
        if let Some(what) = special(&kind) {
            out.push(Entry::Skipped {
                path: entry.into_path(),
                reason: SkipReason::Special(what),
            });
            continue;
        }
        out.push(Entry::Input {
            path: entry.into_path(),
            relative,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inputs(entries: &[Entry]) -> Vec<String> {
        entries
            .iter()
            .filter_map(|e| match e {
                Entry::Input { relative, .. } => Some(relative.clone()),
                _ => None,
            })
            .collect()
    }

    fn tree() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for f in ["b.log", "a.log.gz", "sub/c.log", "sub/d.txt", "skip/e.log"] {
            let p = dir.path().join(f);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, "x\n").unwrap();
        }
        dir
    }

    #[test]
    fn a_file_named_twice_is_scanned_once_and_stdin_only_once() {
        let dir = tree();
        let b = dir.path().join("b.log");
        #[cfg(unix)]
        std::os::unix::fs::symlink(&b, dir.path().join("link.log")).unwrap();
        let paths = vec![
            b.clone(),
            dir.path().join("sub"),
            b.clone(),
            dir.path().join("link.log"),
            dir.path().to_path_buf(),
        ];
        let all = walk(&paths, &WalkOptions::default()).unwrap();
        let scanned: Vec<&Path> = all
            .iter()
            .filter_map(|e| match e {
                Entry::Input { path, .. } => Some(path.as_path()),
                _ => None,
            })
            .collect();
        // b.log once, sub/ once, then the rest of the tree that was not seen yet.
        let files: Vec<String> = scanned.iter().map(|p| relative_of(p, dir.path())).collect();
        assert_eq!(
            files,
            ["b.log", "sub/c.log", "sub/d.txt", "a.log.gz", "skip/e.log"]
        );
        let notes: Vec<String> = all
            .iter()
            .filter_map(|e| match e {
                Entry::Skipped { reason, .. } => Some(reason.to_string()),
                _ => None,
            })
            .collect();
        assert!(
            notes.iter().all(|r| r.contains("the same file as")),
            "{notes:?}"
        );
        assert!(notes.len() >= 4, "{notes:?}");
        let twice = vec![PathBuf::from("-"), b, PathBuf::from("-")];
        let err = walk(&twice, &WalkOptions::default()).unwrap_err();
        assert!(matches!(err, Error::Usage(_)), "{err}");
    }

    #[test]
    fn walks_sorted_with_globs_and_excludes() {
        let dir = tree();
        let root = vec![dir.path().to_path_buf()];
        let all = walk(&root, &WalkOptions::default()).unwrap();
        assert_eq!(
            inputs(&all),
            ["a.log.gz", "b.log", "skip/e.log", "sub/c.log", "sub/d.txt"]
        );
        let opts = WalkOptions {
            globs: vec!["*.log".into(), "*.gz".into()],
            excludes: vec!["skip".into()],
            ..WalkOptions::default()
        };
        assert_eq!(
            inputs(&walk(&root, &opts).unwrap()),
            ["a.log.gz", "b.log", "sub/c.log"]
        );
        let opts = WalkOptions {
            globs: vec!["sub/*".into()],
            ..WalkOptions::default()
        };
        assert_eq!(
            inputs(&walk(&root, &opts).unwrap()),
            ["sub/c.log", "sub/d.txt"]
        );
        let bad = WalkOptions {
            globs: vec!["a[".into()],
            ..WalkOptions::default()
        };
        assert!(
            matches!(walk(&root, &bad), Err(Error::Usage(m)) if m.to_string().contains("glob a["))
        );
    }

    #[test]
    fn shards_partition_the_inputs() {
        let dir = tree();
        let root = vec![dir.path().to_path_buf()];
        let all = inputs(&walk(&root, &WalkOptions::default()).unwrap());
        let mut union = Vec::new();
        for i in 1..=3 {
            let shard: Shard = format!("{i}/3").parse().unwrap();
            let mut entries = walk(&root, &WalkOptions::default()).unwrap();
            entries.retain(|e| shard.keeps(e));
            union.extend(inputs(&entries));
        }
        union.sort();
        assert_eq!(union, all);
        // The documented hash: xxh3-64 of the relative path, mod N, plus one.
        assert_eq!(
            Shard::of("sub/c.log", 7),
            1 + xxhash_rust::xxh3::xxh3_64(b"sub/c.log") % 7
        );
        for bad in ["", "1", "0/2", "3/2", "a/b", "1/0"] {
            assert!(bad.parse::<Shard>().is_err(), "{bad}");
        }
    }

    #[test]
    fn skips_files_that_are_not_logs_by_name_unless_told() {
        let dir = tree();
        for f in [
            "README.md",
            "sub/job.yml",
            "sub/x.tar.gz",
            "sub/y.tar",
            ".md",
        ] {
            std::fs::write(dir.path().join(f), "x\n").unwrap();
        }
        let root = vec![dir.path().to_path_buf()];
        let all = walk(&root, &WalkOptions::default()).unwrap();
        assert_eq!(
            inputs(&all),
            [
                ".md",
                "a.log.gz",
                "b.log",
                "skip/e.log",
                "sub/c.log",
                "sub/d.txt",
                "sub/x.tar.gz"
            ]
        );
        assert_eq!(
            skipped_by_name_note(&all).as_deref(),
            Some("skipped 3 files by name (.md 1, .tar 1, .yml 1); --all-files scans them")
        );
        let every = WalkOptions {
            all_files: true,
            ..WalkOptions::default()
        };
        let every = walk(&root, &every).unwrap();
        assert_eq!(inputs(&every).len(), 10);
        assert_eq!(skipped_by_name_note(&every), None);
        let globbed = WalkOptions {
            globs: vec!["*.md".into()],
            ..WalkOptions::default()
        };
        assert_eq!(
            inputs(&walk(&root, &globbed).unwrap()),
            [".md", "README.md"]
        );
        let named = vec![dir.path().join("README.md")];
        assert_eq!(
            inputs(&walk(&named, &WalkOptions::default()).unwrap()).len(),
            1
        );
    }

    #[cfg(unix)]
    #[test]
    fn skips_fifos_and_symlink_loops() {
        let dir = tree();
        let fifo = dir.path().join("sub/pipe");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .is_ok_and(|s| s.success());
        std::os::unix::fs::symlink(dir.path(), dir.path().join("sub/loop")).unwrap();
        let root = vec![dir.path().to_path_buf()];
        for follow in [false, true] {
            let opts = WalkOptions {
                follow,
                ..WalkOptions::default()
            };
            let entries = walk(&root, &opts).unwrap();
            let skipped: Vec<String> = entries
                .iter()
                .filter_map(|e| match e {
                    Entry::Skipped { path, reason } => {
                        Some(format!("{}: {reason}", relative_of(path, dir.path())))
                    }
                    _ => None,
                })
                .collect();
            assert!(
                skipped.iter().any(|s| s.starts_with("sub/loop: symlink")),
                "{skipped:?}"
            );
            if made {
                assert!(
                    skipped.iter().any(|s| s.starts_with("sub/pipe: a FIFO")),
                    "{skipped:?}"
                );
            }
            assert_eq!(inputs(&entries).len(), 5);
        }
    }
}
