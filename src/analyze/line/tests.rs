use super::rules::RULES;
use super::*;

#[test]
fn process_alone_agrees_with_parse() {
    for line in [
        &b"(Worker_TP7 pid=207086) INFO 02-20 21:35:48 [cuda.py:456] Using backend X"[..],
        b"INFO 02-20 21:35:48 [core.py:1] (EngineCore_DP0 pid=12) started",
        b"trainer-1  | [rank3]: RuntimeError: x",
        b"[2025-01-01 12:00:00 TP0] Scheduler hit an exception",
        b"0: [rank0]: boom",
        b"gpu-node-07:207081:208120 [1] NCCL INFO Using network Socket",
        b"vllm-server-1  | (APIServer pid=1) ERROR 01-02 03:04:05 [x.py:1] boom",
        b"web.api-12 |INFO: started",
        b"17: [default3]:NCCL WARN x",
        b"(VllmWorker rank=3 pid=7) RuntimeError: x",
        b"(pid=5, ip=10.0.0.1) Traceback (most recent call last):",
        b"[2025-01-01 12:00:00 DP1 TP3] Scheduler hit an exception",
        b"2025-01-01T12:00:00Z (Worker pid=3) x",
        b"\x1b[36m(Worker_TP1 pid=9)\x1b[0m INFO boom",
        b"",
    ] {
        assert_eq!(
            process(line),
            parse_line(line).process,
            "{:?}",
            String::from_utf8_lossy(line)
        );
    }
}

proptest::proptest! {
    #[test]
    fn process_alone_agrees_with_parse_on_stacked_prefixes(
        picks in proptest::collection::vec(0usize..12, 0..5),
        tail in "[ -~]{0,20}",
    ) {
        const PIECES: [&str; 12] = [
            "trainer-1  | ", "0: ", "(Worker_TP2 pid=17) ", "(pid=5, ip=10.0.0.1) ",
            "[rank3]: ", "INFO 02-20 21:35:48 [cuda.py:456] ", "[2025-01-01 12:00:00 TP0] ",
            "2025-01-01 12:00:00,123 - vllm - ERROR - ", "2025-01-01T12:00:00Z ",
            "[W1031 15:15:48.123 ProcessGroupNCCL.cpp:1538] ", "ERROR: ", "x(",
        ];
        let mut line = String::new();
        for p in picks {
            line.push_str(PIECES[p]);
        }
        line.push_str(&tail);
        proptest::prop_assert_eq!(process(line.as_bytes()), parse_line(line.as_bytes()).process);
    }
}

#[test]
fn vllm_v1_worker_prefix() {
    let i =
        parse_line(b"(Worker_TP7 pid=207086) INFO 02-20 21:35:48 [cuda.py:456] Using backend X");
    assert_eq!(i.process.as_deref(), Some("Worker_TP7 pid=207086"));
    assert_eq!(i.level, Some(Level::Info));
    assert_eq!(i.source.as_deref(), Some("cuda.py:456"));
    assert_eq!(i.message, "Using backend X");
    assert!(i.timestamp.is_some());
}

#[test]
fn stacked_prefixes() {
    let i = parse_line(b"[rank0]:[W1031 15:15:48.123456 ProcessGroupNCCL.cpp:1538] Warning: x");
    assert_eq!(i.process.as_deref(), Some("rank0"));
    assert_eq!(i.level, Some(Level::Warning));
    assert_eq!(i.message, "Warning: x");
    let i = parse_line(b"(VllmWorker rank=3 pid=7) ERROR 10-31 15:15:48 [core.py:708] boom");
    assert_eq!(i.process.as_deref(), Some("VllmWorker rank=3 pid=7"));
    assert_eq!(i.level, Some(Level::Error));
    let i = parse_line(b"(RayWorkerWrapper pid=5, ip=10.0.0.1) boom");
    assert_eq!(
        i.process.as_deref(),
        Some("RayWorkerWrapper pid=5, ip=10.0.0.1")
    );
    let i = parse_line(b"vllm-1  | ERROR: boom");
    assert_eq!(i.process.as_deref(), Some("vllm-1"));
    assert_eq!(i.message, "boom");
}

#[test]
fn every_launcher_tag() {
    for (line, tag) in [
        ("(Worker_TP4_EP4 pid=12) INFO x", "Worker_TP4_EP4 pid=12"),
        ("(APIServer pid=1) x", "APIServer pid=1"),
        ("(pid=4242) x", "pid=4242"),
        ("[default0]:x", "default0"),
        ("[rank12]: x", "rank12"),
        ("sglang-router-1  | x", "sglang-router-1"),
        ("[2025-01-01 12:00:00 DP1 TP3] x", "DP1 TP3"),
    ] {
        let i = parse_line(line.as_bytes());
        assert_eq!(i.process.as_deref(), Some(tag), "{line}");
        assert_eq!(i.message, "x", "{line}");
    }
    assert_eq!(parse_line(b"plain message").process, None);
}

#[test]
fn ray_core_log_lines() {
    let i = parse_line(b"(raylet) [2025-04-02 15:02:00,117 E 135782 135782] (raylet) node_manager.cc:3069: 1 Workers (tasks / actors) killed due to memory pressure (OOM)");
    assert_eq!(i.process.as_deref(), Some("raylet"));
    assert_eq!(i.level, Some(Level::Error));
    assert_eq!(i.timestamp_text.as_deref(), Some("2025-04-02 15:02:00,117"));
    assert!(
        i.message.ends_with("killed due to memory pressure (OOM)"),
        "{}",
        i.message
    );
    let i = parse_line(b"(RayWorkerWrapper pid=24036) [2024-07-25 10:46:00,050 E 24036 24036] logging.cc:440: *** SIGSEGV received at time=1721904360 on cpu 140 ***");
    assert_eq!(i.level, Some(Level::Error));
    assert_eq!(i.process.as_deref(), Some("RayWorkerWrapper pid=24036"));
    // SGLang's bracketed timestamp is not Ray's.
    assert_eq!(parse_line(b"[2025-01-01 12:00:00 TP3] x").level, None);
}

#[test]
fn tensorrt_logger_lines() {
    // TensorRT's Python logger: stamp, `[TRT]`, level letter.
    let i = parse_line(b"[07/26/2022-11:14:38] [TRT] [W] Convolution + generic activation fusion is disable due to incompatible driver or nvrtc");
    assert_eq!(i.level, Some(Level::Warning));
    assert_eq!(i.timestamp_text.as_deref(), Some("07/26/2022-11:14:38"));
    assert!(
        i.message.starts_with("Convolution + generic"),
        "{}",
        i.message
    );
    let i = parse_line(b"[07/26/2022-11:14:39] [TRT] [E] 1: [ltWrapper.cpp::CublasLtWrapper::66] Error Code 1: Cublas (Could not initialize cublasLt. ");
    assert_eq!(i.level, Some(Level::Error));
    assert!(i.message.starts_with("1: [ltWrapper.cpp"), "{}", i.message);
    // trtexec and the C++ samples (samples/common/logging.h): level letter, then `[TRT]`.
    let i = parse_line(b"[05/20/2024-09:12:01] [I] [TRT] Loaded engine size: 12 MiB");
    assert_eq!(i.level, Some(Level::Info));
    assert_eq!(i.message, "Loaded engine size: 12 MiB");
    assert_eq!(
        parse_line(b"[05/20/2024-09:12:01] [V] [TRT] x").level,
        Some(Level::Debug)
    );
    // Not a TensorRT stamp: no level letter.
    assert_eq!(parse_line(b"[05/20/2024-09:12:01] done").level, None);
}

#[test]
fn sglang_pylogging_iso_and_task() {
    let i = parse_line(b"[2025-01-01 12:00:00 TP3] Scheduler hit an exception");
    assert_eq!(i.process.as_deref(), Some("TP3"));
    assert_eq!(i.message, "Scheduler hit an exception");
    let i = parse_line(b"2025-01-01 12:00:00,123 - vllm.x - ERROR - boom");
    assert_eq!(i.level, Some(Level::Error));
    assert_eq!(i.message, "boom");
    let i = parse_line(b"2: 2025-01-01T12:00:00.5Z boom");
    assert_eq!(i.process.as_deref(), Some("task 2"));
    assert_eq!(i.message, "boom");
}

#[test]
fn ansi_and_carriage_returns() {
    let i = parse_line(b"Loading 10%\rLoading 50%\r\x1b[31mERROR\x1b[0m boom");
    assert_eq!(i.level, Some(Level::Error));
    assert_eq!(i.message, "boom");
}

#[test]
fn timestamps_as_printed_and_indentation_kept() {
    let i =
        parse_line(b"(A pid=1) ERROR 02-20 21:35:48 [core.py:708]   File \"x.py\", line 1, in f");
    assert_eq!(i.timestamp_text.as_deref(), Some("02-20 21:35:48"));
    assert_eq!(i.message, "  File \"x.py\", line 1, in f");
    let i = parse_line(b"2024-09-18T09:23:46.627404Z  INFO text_generation_launcher: Args {");
    assert_eq!(
        i.timestamp_text.as_deref(),
        Some("2024-09-18T09:23:46.627404Z")
    );
    assert_eq!(i.level, Some(Level::Info));
    let i = parse_line(b"[2025-01-01 12:00:00 TP0] boom");
    assert_eq!(i.timestamp_text.as_deref(), Some("2025-01-01 12:00:00"));
    let i = parse_line(b"[W1031 15:15:48.123 ProcessGroupNCCL.cpp:1538] x");
    assert_eq!(i.timestamp_text.as_deref(), Some("1031 15:15:48.123"));
    assert_eq!(parse_line(b"no stamp").timestamp_text, None);
}

#[test]
fn masking_folds_ranks_and_addresses() {
    assert_eq!(
        fold_key("rank 3 at 0xdeadbeef took 12ms"),
        fold_key("rank 7 at 0x1 took 9ms")
    );
    assert_ne!(fold_key("a 1"), fold_key("b 1"));
}

/// The rules as regexes, in [`RULES`]' order: the specification the hand-written matchers of
/// `rules.rs` are held to (same match end, same group spans).
const RULE_REGEXES: [&str; 12] = [
    r"([A-Za-z0-9][A-Za-z0-9_.-]*-[0-9]+)\s+\|\s?",
    r"([0-9]{1,5}): ",
    r"\(((?:[A-Za-z_][A-Za-z0-9_]*[ ,]+)?(?:rank=[0-9]+[ ,]+)?pid=[0-9]+(?:,\s*ip=[^)]*)?|raylet|gcs_server)\)\s*",
    r"\[((?:rank|default)[0-9]+)\]:\s?",
    r"(DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL|FATAL)\s+([0-9]{2})-([0-9]{2}) ([0-9]{2}):([0-9]{2}):([0-9]{2})(?:\.([0-9]+))?\s+\[([^\]]+)\]\s?",
    r"\[[0-9]{4}-([0-9]{2})-([0-9]{2}) ([0-9]{2}):([0-9]{2}):([0-9]{2}),([0-9]+) ([DIWEF]) [0-9]+ [0-9]+\]\s?",
    r"\[[0-9]{4}-([0-9]{2})-([0-9]{2}) ([0-9]{2}):([0-9]{2}):([0-9]{2})(?:[.,]([0-9]+))?((?: [A-Z]{2,4}[0-9]+)*)\]\s*",
    r"[0-9]{4}-([0-9]{2})-([0-9]{2})[ T]([0-9]{2}):([0-9]{2}):([0-9]{2})(?:[.,]([0-9]+))?\s+-\s+([A-Za-z0-9_.]+)\s+-\s+(DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL|FATAL)\s+-\s*",
    r"\[?[0-9]{4}-([0-9]{2})-([0-9]{2})[ T]([0-9]{2}):([0-9]{2}):([0-9]{2})(?:[.,]([0-9]+))?(?:Z|[+-][0-9]{2}:?[0-9]{2})?\]?\s{1,2}",
    r"\[([0-9]{2})/([0-9]{2})/[0-9]{4}-([0-9]{2}):([0-9]{2}):([0-9]{2})\] (?:\[TRT\] )?\[([VIWEF])\] (?:\[TRT\] )?",
    r"\[?([IWEF])(?:[0-9]{4})?([0-9]{2})([0-9]{2}) ([0-9]{2}):([0-9]{2}):([0-9]{2})(?:\.([0-9]+))?\s+(?:[0-9]+\s+)?([^\]\s]+)\]\s?",
    r"\[?(DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL|FATAL)\]?(?::\s*|\s+)",
];

fn oracle() -> &'static [regex_automata::meta::Regex] {
    use regex_automata::{meta, util::syntax};
    static RES: std::sync::OnceLock<Vec<meta::Regex>> = std::sync::OnceLock::new();
    RES.get_or_init(|| {
        RULE_REGEXES
            .iter()
            .map(|pat| {
                meta::Builder::new()
                    .syntax(syntax::Config::new().unicode(false).utf8(false))
                    .configure(meta::Config::new().utf8_empty(false))
                    .build(pat)
                    .expect("rule regex compiles")
            })
            .collect()
    })
}

/// What the regex of `RULES[k]` reports at the start of `text`: match end and group spans.
fn by_regex(k: usize, text: &[u8]) -> Option<(usize, Groups)> {
    use regex_automata::{Anchored, Input};
    let re = &oracle()[k];
    let mut caps = re.create_captures();
    re.captures(Input::new(text).anchored(Anchored::Yes), &mut caps);
    let m = caps.get_match().filter(|m| m.end() > 0)?;
    let mut groups: Groups = [None; 9];
    for (i, g) in groups.iter_mut().enumerate() {
        *g = caps.get_group(i).map(|s| (s.start, s.end));
    }
    Some((m.end(), groups))
}

/// Every rule's matcher against its regex at `text`'s start.
fn rules_agree(text: &[u8]) -> Result<(), String> {
    for (k, rule) in RULES.iter().enumerate() {
        let want = by_regex(k, text);
        let got = match_rule(*rule, text);
        if got.is_some() && !rules_for(text[0]).any(|r| r == *rule) {
            return Err(format!(
                "{rule:?} matches {:?} but is not tried on its first byte",
                String::from_utf8_lossy(text)
            ));
        }
        if want != got {
            return Err(format!(
                "{rule:?} on {:?}: regex {want:?}, matcher {got:?}",
                String::from_utf8_lossy(text)
            ));
        }
    }
    Ok(())
}

#[test]
fn matchers_agree_with_the_rule_regexes_at_every_start_in_corpus_lines() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/corpus");
    let mut lines = 0usize;
    for entry in std::fs::read_dir(dir).expect("corpus dir") {
        let path = entry.expect("entry").path();
        if path.extension().is_none_or(|e| e != "log") {
            continue;
        }
        let bytes = std::fs::read(&path).expect("corpus log");
        for line in bytes.split(|&b| b == b'\n') {
            let text = display_text(line);
            // Every start in the line's first 160 bytes (where prefixes are).
            for start in 0..text.len().min(160) {
                rules_agree(&text[start..]).unwrap();
                lines += 1;
            }
        }
    }
    assert!(lines > 100_000, "only {lines} positions checked");
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(4000))]
    #[test]
    fn matchers_agree_with_the_rule_regexes(
        picks in proptest::collection::vec(0usize..22, 0..6),
        noise in "[ -~\t]{0,6}",
        cut in 0usize..80,
    ) {
        // Pieces of every prefix and near misses of them, stacked, then cut anywhere.
        const PIECES: [&str; 22] = [
            "trainer-1  | ", "web.api-12 |", "0: ", "123456: ", "(Worker_TP2 pid=17) ",
            "(pid=5, ip=10.0.0.1) ", "(raylet) ", "(VllmWorker rank=3 pid=7)", "[rank3]: ",
            "[default0]:", "INFO 02-20 21:35:48 [cuda.py:456] ", "WARNING 02-20 21:35:48.12  [x] ",
            "[2025-04-02 15:02:00,117 E 135782 135782] ", "[2025-01-01 12:00:00 TP0 DP12] ",
            "[2025-01-01 12:00:00.5]", "2025-01-01 12:00:00,123 - vllm.x - WARN - ",
            "2025-01-01T12:00:00.5+05:30] ", "2025-01-01T12:00:00Z  ",
            "[W1031 15:15:48.123 12 ProcessGroupNCCL.cpp:1538] ", "E20250825 11:10:33.595355   331 u.h:592] ",
            "[ERROR]: ", "WARNING ",
        ];
        let mut line = String::new();
        for p in picks {
            line.push_str(PIECES[p]);
            line.push_str(&noise[..noise.len().min(p % 3)]);
        }
        line.push_str(&noise);
        let bytes = line.as_bytes();
        let bytes = &bytes[..bytes.len().min(cut)];
        for start in 0..bytes.len() {
            proptest::prop_assert!(rules_agree(&bytes[start..]).is_ok(), "{}", rules_agree(&bytes[start..]).unwrap_err());
        }
    }
}

#[test]
fn glog_prefix_with_and_without_the_year() {
    let i = parse_line(b"E20250825 11:10:33.595355   331 util_rdma.h:592] Check failed: x");
    assert_eq!(i.level, Some(Level::Error));
    assert_eq!(i.source.as_deref(), Some("util_rdma.h:592"));
    assert_eq!(i.message, "Check failed: x");
    assert_eq!(
        i.timestamp_text.as_deref(),
        Some("20250825 11:10:33.595355")
    );
    let i = parse_line(b"I20250825 11:10:33.595355   331 util_rdma.h:592] ready");
    assert_eq!(i.level, Some(Level::Info));
    let i = parse_line(b"I1102 04:12:55.123 12 a.cc:1] ready");
    assert_eq!((i.level, i.message.as_str()), (Some(Level::Info), "ready"));
}
