//! Interleaving processes' lines differently, each process's own order kept, gives the same
//! first finding when the lines carry timestamps or one process holds the only cause.

use faultline::EmbeddedDatabase;
use std::collections::BTreeMap;
use std::path::Path;

use faultline::Database;
use faultline::{analyze_input, fold_key, parse_line, AnalyzeOptions};
use faultline::{Input, ScanOptions};
use proptest::prelude::*;

/// The example log's lines grouped by process tag, each group in its own order.
fn streams(path: &str) -> Vec<Vec<String>> {
    let text = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(path)).unwrap();
    let mut by: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for l in text.lines() {
        let p = parse_line(l.as_bytes()).process.unwrap_or_default();
        by.entry(p).or_default().push(l.to_string());
    }
    by.into_values().collect()
}

fn merge(streams: &[Vec<String>], picks: &[usize]) -> String {
    let mut pos = vec![0; streams.len()];
    let mut out = String::new();
    let mut k = 0;
    loop {
        let live: Vec<usize> = (0..streams.len())
            .filter(|&i| pos[i] < streams[i].len())
            .collect();
        if live.is_empty() {
            return out;
        }
        let s = live[picks.get(k).copied().unwrap_or(0) % live.len()];
        k += 1;
        out.push_str(&streams[s][pos[s]]);
        out.push('\n');
        pos[s] += 1;
    }
}

fn first_key(log: String) -> (Option<String>, String) {
    let r = analyze_input(
        Database::embedded(),
        Input::from_bytes(Path::new("x"), log.into_bytes()),
        &ScanOptions::default(),
        AnalyzeOptions::default(),
    );
    let f = &r.findings[0];
    (
        f.signature.clone(),
        fold_key(&parse_line(f.text.as_bytes()).message),
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(
        std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(12)
    ))]

    #[test]
    fn any_interleaving_of_the_example_gives_the_same_root_cause(picks in proptest::collection::vec(0usize..64, 0..4000)) {
        let streams = streams("examples/kimi-k2.5-launch.log");
        let expected = first_key(streams.concat().join("\n") + "\n");
        prop_assert_eq!(expected.0.as_deref(), Some("vllm.attention.mla-fp8-kv-no-backend"));
        prop_assert_eq!(first_key(merge(&streams, &picks)), expected);
    }

    #[test]
    fn one_process_holding_the_cause_wins_in_any_interleaving(picks in proptest::collection::vec(0usize..8, 0..64)) {
        let streams = vec![
            vec![
                "(Worker_TP0 pid=1) INFO starting".to_string(),
                "(Worker_TP0 pid=1) Traceback (most recent call last):".to_string(),
                "(Worker_TP0 pid=1)   File \"w.py\", line 3, in load".to_string(),
                "(Worker_TP0 pid=1) ModuleNotFoundError: No module named 'flash_attn'".to_string(),
            ],
            vec![
                "(EngineCore_DP0 pid=2) ERROR EngineCore failed to start.".to_string(),
                "(EngineCore_DP0 pid=2) Exception: WorkerProc initialization failed due to an exception in a background process. See stack trace for root cause.".to_string(),
            ],
            vec![
                "(APIServer pid=3) RuntimeError: Engine core initialization failed. See root cause above. Failed core proc(s): {}".to_string(),
            ],
        ];
        let (sig, _) = first_key(merge(&streams, &picks));
        prop_assert_eq!(sig.as_deref(), Some("python.import.module-not-found"));
    }
}
