//! The command line as a user meets it: the shipped example, JSON fields, errors, exit codes.

use std::path::Path;
use std::process::Command;

use crate::common::{faultline, stderr, stdout};

#[test]
fn example_log_names_the_attention_backend_first() {
    let o = faultline(&["scan", "examples/kimi-k2.5-launch.log"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    let root = out
        .lines()
        .position(|l| l.starts_with("ROOT CAUSE"))
        .expect("a root cause");
    let block: Vec<&str> = out.lines().skip(root).take(4).collect();
    let block = block.join("\n");
    assert!(block.contains("attention backend"), "{block}");
    assert!(block.contains("line 2,909"), "{block}");
    assert!(block.contains("Worker_TP2 pid=207081"), "{block}");
    assert!(out.contains("--kv-cache-dtype auto"), "{out}");
    let symptoms = out.find("Symptoms").expect("symptoms listed");
    assert!(
        out[symptoms..].contains("See root cause above") || out[symptoms..].contains("Engine core")
    );
}

#[test]
fn example_log_json_has_the_contract_fields() {
    let o = faultline(&["scan", "--format", "json", "examples/kimi-k2.5-launch.log"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = stdout(&o);
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    assert_eq!(lines.len(), 1);
    let v: serde_json::Value = serde_json::from_str(lines[0]).expect("valid JSON");
    for key in [
        "schema_version",
        "input",
        "database",
        "error",
        "binary",
        "bytes",
        "lines",
        "findings",
    ] {
        assert!(v.get(key).is_some(), "missing {key}");
    }
    for key in ["name", "version", "hash"] {
        assert!(v["database"][key].is_string(), "database.{key}");
    }
    assert_eq!(v["input"], "examples/kimi-k2.5-launch.log");
    assert_eq!(v["lines"], 3265);
    let first = &v["findings"][0];
    for key in [
        "rank",
        "signature",
        "role",
        "severity",
        "category",
        "title",
        "line",
        "last_line",
        "offset",
        "text",
        "text_truncated",
        "count",
        "processes",
        "captures",
        "remediation",
        "traceback",
    ] {
        assert!(first.get(key).is_some(), "finding misses {key}");
    }
    assert_eq!(first["role"], "cause");
    assert_eq!(first["category"], "attention-backend");
    assert_eq!(first["line"], 2909);
    assert_eq!(first["count"], 8);
    assert_eq!(first["processes"].as_array().map(Vec::len), Some(8));
    assert!(first["text"]
        .as_str()
        .is_some_and(|t| t.contains("No valid attention backend found")));
    let tb = first["traceback"].as_array().expect("traceback");
    assert!(tb
        .last()
        .and_then(|l| l.as_str())
        .is_some_and(|l| l.starts_with("ValueError")));
    // The offset points at the line.
    let log = std::fs::read("examples/kimi-k2.5-launch.log").unwrap();
    let off = first["offset"].as_u64().unwrap() as usize;
    assert!(off == 0 || log[off - 1] == b'\n');
    assert_eq!(log[..off].iter().filter(|&&b| b == b'\n').count() + 1, 2909);
    // Symptoms rank below the cause; no noise outranks a symptom.
    let roles: Vec<&str> = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["role"].as_str().unwrap())
        .collect();
    let mut sorted = roles.clone();
    let order = |r: &str| {
        ["cause", "unclassified", "symptom", "noise"]
            .iter()
            .position(|x| *x == r)
    };
    sorted.sort_by_key(|r| order(r));
    assert_eq!(roles, sorted);
}

#[test]
fn unreadable_path_exits_2_naming_it() {
    let o = faultline(&["scan", "no/such/file.log"]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("no/such/file.log"), "{err}");
}

#[test]
fn unreadable_path_among_good_ones_still_scans_the_rest() {
    let o = faultline(&[
        "scan",
        "--format",
        "json",
        "no/such/file.log",
        "examples/kimi-k2.5-launch.log",
    ]);
    assert_eq!(o.status.code(), Some(2));
    let out = stdout(&o);
    let reports: Vec<serde_json::Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(reports.len(), 2);
    assert!(reports[0]["error"].is_string());
    assert_eq!(reports[1]["findings"][0]["category"], "attention-backend");
}

fn broken_dir(pattern: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("db.toml"),
        "name = \"t\"\nversion = \"2026.12.0\"\nformat = 1\n",
    )
    .unwrap();
    let sig = format!(
        "[[signature]]\nid = \"t.x.y\"\nrevision = 1\ntitle = \"t\"\nrole = \"cause\"\nseverity = \"error\"\ncategory = \"c\"\npatterns = ['{pattern}']\nremediation = \"r\"\nsource = \"s\"\nexamples = ['boom']\ncounterexamples = ['x']\n"
    );
    std::fs::write(dir.path().join("t.toml"), sig).unwrap();
    dir
}

#[test]
fn broken_signature_dir_exits_2_with_file_line_column() {
    let dir = broken_dir("boom (");
    let d = dir.path().to_str().unwrap();
    let o = faultline(&["scan", "--signatures", d, "examples/kimi-k2.5-launch.log"]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    let expected = format!("{}:8:", Path::new(d).join("t.toml").display());
    assert!(err.contains(&expected), "{err}");
    assert!(err.contains("bad regex"), "{err}");
    let o = faultline(&["db", "check", d]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains(&expected));
}

#[test]
fn nothing_found_exits_1_and_stdin_is_read() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_faultline"))
        .args(["scan", "-"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"all good\nnothing to see\n")
        .unwrap();
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(stdout(&o).contains("No failure found"));
}

#[test]
fn version_names_the_database() {
    let o = faultline(&["--version"]);
    let out = stdout(&o);
    assert!(
        out.contains(env!("CARGO_PKG_VERSION")) && out.contains("database faultline-core"),
        "{out}"
    );
}

#[test]
fn export_gives_one_pattern_per_line_with_or_without_group_names() {
    let named = stdout(&faultline(&["db", "export", "--format", "patterns"]));
    let unnamed = stdout(&faultline(&[
        "db",
        "export",
        "--format",
        "patterns-unnamed",
    ]));
    assert_eq!(named.lines().count(), unnamed.lines().count());
    assert!(named.contains("(?P<"));
    assert!(!unnamed.contains("(?P<") && !unnamed.contains("(?<"));
    for (a, b) in named.lines().zip(unnamed.lines()) {
        assert_eq!(a.contains("(?P<"), a != b, "{a}");
    }
}

#[test]
fn all_accounts_for_every_matched_line() {
    let o = faultline(&[
        "scan",
        "--all",
        "--format",
        "json",
        "examples/kimi-k2.5-launch.log",
    ]);
    let v: serde_json::Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    let matches = v["matches"].as_array().unwrap();
    let c = &v["counts"];
    let sum = c["cause_lines"].as_u64().unwrap()
        + c["symptom_lines"].as_u64().unwrap()
        + c["noise_lines"].as_u64().unwrap();
    assert_eq!(sum, c["matched_lines"].as_u64().unwrap());
    let signed = matches
        .iter()
        .filter(|m| m["signature"].is_string())
        .count() as u64;
    assert_eq!(signed, c["matched_lines"].as_u64().unwrap());
    let unsigned = matches.len() as u64 - signed;
    assert_eq!(
        unsigned,
        c["unclassified_lines"].as_u64().unwrap() + c["unmatched_error_lines"].as_u64().unwrap()
    );
    let folded: u64 = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["signature"].is_string())
        .map(|f| f["count"].as_u64().unwrap())
        .sum();
    assert_eq!(folded, c["matched_lines"].as_u64().unwrap());
    let human = stdout(&faultline(&["scan", "examples/kimi-k2.5-launch.log"]));
    assert!(
        human.contains("noise lines") && human.contains("--all shows them"),
        "{human}"
    );
}
