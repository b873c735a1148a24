//! The habits of a grep-family tool: which files a directory sweep reads, and what it says
//! about the ones it leaves out.

use std::path::Path;

use crate::common::{faultline, stderr, stdout};

const OOM: &str = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n";

fn write(dir: &Path, name: &str, text: &str) {
    let p = dir.join(name);
    std::fs::create_dir_all(p.parent().expect("a parent")).expect("mkdir");
    std::fs::write(p, text).expect("write");
}

/// The `input` of every JSON report line, in output order.
fn inputs(out: &str, root: &Path) -> Vec<String> {
    out.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).expect("a JSON line");
            let input = v["input"].as_str().expect("input").to_string();
            let root = format!("{}/", root.display());
            input.strip_prefix(&root).unwrap_or(&input).to_string()
        })
        .collect()
}

#[test]
fn a_directory_sweep_skips_files_that_are_not_logs_by_name_and_counts_them() {
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    for name in [
        "README.md",
        "conf/a.toml",
        "conf/b.toml",
        "job.YAML",
        "run.sh",
        "pic.png",
    ] {
        write(d, name, OOM);
    }
    for name in [
        "train.log",
        "slurm-7.out",
        "rank0.err",
        "stdout",
        "notes.txt",
    ] {
        write(d, name, OOM);
    }
    let root = d.to_str().expect("utf-8 path");
    let o = faultline(&["scan", "--format", "json", root]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(
        inputs(&stdout(&o), d),
        [
            "notes.txt",
            "rank0.err",
            "slurm-7.out",
            "stdout",
            "train.log"
        ]
    );
    let err = stderr(&o);
    let notes: Vec<&str> = err.lines().filter(|l| l.contains("by name")).collect();
    assert_eq!(
        notes,
        ["faultline: skipped 6 files by name (.toml 2, .md 1, .png 1, .sh 1, .yaml 1); --all-files scans them"],
        "{err}"
    );

    // --all-files and --glob choose the files instead; a file named directly is always read.
    let o = faultline(&["scan", "--format", "json", "--all-files", root]);
    assert_eq!(inputs(&stdout(&o), d).len(), 11, "{}", stderr(&o));
    assert!(!stderr(&o).contains("by name"), "{}", stderr(&o));
    let o = faultline(&["scan", "--format", "json", "--glob", "*.toml", root]);
    assert_eq!(inputs(&stdout(&o), d), ["conf/a.toml", "conf/b.toml"]);
    let readme = d.join("README.md");
    let o = faultline(&["scan", "--format", "json", readme.to_str().expect("utf-8")]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(inputs(&stdout(&o), d), ["README.md"]);
    assert!(!stderr(&o).contains("by name"), "{}", stderr(&o));
}

#[test]
fn a_directory_of_only_skipped_files_says_so_and_exits_2() {
    let dir = tempfile::tempdir().expect("tempdir");
    write(dir.path(), "README.md", OOM);
    let o = faultline(&["scan", dir.path().to_str().expect("utf-8")]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(err.contains("skipped 1 file by name (.md 1)"), "{err}");
    assert!(err.contains("no input was selected from"), "{err}");
}

#[test]
fn scan_without_a_path_reads_a_piped_stdin_without_a_note() {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let mut child = Command::new(env!("CARGO_BIN_EXE_faultline"))
        .arg("scan")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run faultline");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(OOM.as_bytes())
        .expect("write stdin");
    let o = child.wait_with_output().expect("wait");
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        !stderr(&o).contains("reading standard input"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn quiet_prints_nothing_on_stdout_and_keeps_the_exit_status() {
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    write(d, "oom.log", OOM);
    write(d, "clean.log", "INFO all good\n");
    std::fs::write(d.join("bad.log.gz"), b"\x1f\x8b\x08\x00garbage").expect("write");
    let path = |n: &str| d.join(n).to_str().expect("utf-8").to_string();
    for (files, code) in [
        (vec!["oom.log"], 0),
        (vec!["clean.log"], 1),
        (vec!["clean.log", "bad.log.gz", "oom.log"], 2),
    ] {
        let mut args = vec!["scan".to_string()];
        args.extend(files.iter().map(|f| path(f)));
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let loud = faultline(&args);
        assert_eq!(loud.status.code(), Some(code), "{}", stderr(&loud));
        for q in ["-q", "--quiet"] {
            let mut quiet_args = args.clone();
            quiet_args.insert(1, q);
            let o = faultline(&quiet_args);
            assert_eq!(o.status.code(), Some(code), "{files:?} {q}: {}", stderr(&o));
            assert!(o.stdout.is_empty(), "{files:?} {q}: {}", stdout(&o));
            assert_eq!(stderr(&o), stderr(&loud), "{files:?} {q}");
        }
    }
    for extra in [["--summary", ""], ["--format", "json"]] {
        let mut args = vec!["scan", "-q"];
        args.extend(extra.iter().filter(|a| !a.is_empty()));
        let clean = path("clean.log");
        args.push(&clean);
        let o = faultline(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(stderr(&o).contains("cannot be used with"), "{}", stderr(&o));
    }
}

#[test]
fn color_always_marks_the_root_cause_and_fix_never_json_and_never_by_default_into_a_pipe() {
    let log = "examples/kimi-k2.5-launch.log";
    let o = faultline(&["scan", "--color", "always", log]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    let root = out
        .lines()
        .find(|l| l.contains("ROOT CAUSE"))
        .expect("a root cause");
    assert!(root.starts_with("\x1b[1;31mROOT CAUSE: "), "{root:?}");
    assert!(root.ends_with("\x1b[0m"), "{root:?}");
    assert!(out.contains("  \x1b[1;32mFix:\x1b[0m "), "{out}");
    // Without the escapes, the text is the uncoloured report's.
    let plain = stdout(&faultline(&["scan", "--color", "never", log]));
    let stripped = out
        .replace("\x1b[1;31m", "")
        .replace("\x1b[1;32m", "")
        .replace("\x1b[0m", "");
    assert_eq!(stripped, plain);
    assert!(!plain.contains('\x1b'));
    // auto into a pipe (these runs): no colour; JSON is never coloured.
    assert_eq!(stdout(&faultline(&["scan", log])), plain);
    let json = faultline(&["scan", "--color", "always", "--format", "json", log]);
    assert!(!stdout(&json).contains('\x1b'), "{}", stdout(&json));
}
