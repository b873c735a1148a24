//! Issue 30, item 2 ("one line hides a real failure") and the open-traceback and
//! pending-process bounds: each test is built from generated lines.

use super::*;

/// A worker's traceback whose middle holds `inserted`, a line of another process.
fn worker_traceback_around(inserted: &str) -> String {
    format!(
        "(APIServer pid=1) INFO 02-20 21:00:00 [api_server.py:1] vLLM API server version 0.9.1\n\
         (Worker_TP0 pid=7) INFO 02-20 21:00:05 [worker.py:1] Loading weights\n\
         (Worker_TP0 pid=7) Traceback (most recent call last):\n\
         (Worker_TP0 pid=7)   File \"/app/worker.py\", line 10, in run\n\
         (Worker_TP0 pid=7)     self.step()\n\
         {inserted}\n\
         (Worker_TP0 pid=7)   File \"/app/worker.py\", line 20, in step\n\
         (Worker_TP0 pid=7)     raise ValueError(\"bad\")\n\
         (Worker_TP0 pid=7) ValueError: shape mismatch in fused gate projection\n"
    )
}

/// A banner string or torch elastic's `restart_count=1`, logged by another process in the
/// middle of a worker's traceback, starts no run and closes no traceback: the worker's
/// exception stays the fatal finding of run 1.
#[test]
fn a_banner_or_restart_inside_a_workers_traceback_starts_no_run() {
    for inserted in [
        "(APIServer pid=1) INFO 02-20 21:00:06 [logger.py:1] Received request cmpl-1: prompt: 'vLLM API server version 0.9.1', params: SamplingParams(n=1)",
        "(APIServer pid=1) INFO 02-20 21:00:06 [logger.py:1] Received request cmpl-1: prompt: 'restart_count=1', params: SamplingParams(n=1)",
        "(APIServer pid=1) INFO 02-20 21:00:06 [api_server.py:1] vLLM API server version 0.9.1",
    ] {
        let r = report(&worker_traceback_around(inserted));
        assert_eq!(r.runs, 1, "{inserted}");
        assert!(r.failed, "{inserted}: {:#?}", r.findings);
        let f = &r.findings[0];
        assert_eq!((f.line, f.run), (9, 1), "{inserted}");
        assert!(f.traceback.is_some());
        assert!(!r.ended_early);
    }
}

/// `Traceback (most recent call last):` quoted inside another message opens no traceback:
/// the log is not taken for cut (`ended_early`, `tentative`), and a later exception line is
/// read outside any traceback (a candidate for the fallback rules).
#[test]
fn an_echoed_traceback_opener_opens_no_traceback() {
    let echo = "INFO 02-20 21:00:01 [logger.py:1] Received request cmpl-1: prompt: 'Why does Python print Traceback (most recent call last): before an error?', params: SamplingParams(n=1)";
    let healthy = format!(
        "INFO 02-20 21:00:00 [api_server.py:1] Starting vLLM API server 0 on http://0.0.0.0:8000\n{echo}\nINFO 02-20 21:00:02 [metrics.py:1] Avg prompt throughput: 1.0 tokens/s\n"
    );
    let r = report(&healthy);
    assert!(!r.ended_early, "{:#?}", r.findings);
    assert!(r.findings.iter().all(|f| !f.tentative));
    assert!(!r.failed);
    // The same echo as a frame: no fragment of a traceback either.
    let frame = healthy.replace(
        "Traceback (most recent call last):",
        "File \"/app/x.py\", line 3, in f",
    );
    assert!(!report(&frame).ended_early);
    // An unknown exception line after the echo is read outside any traceback: a candidate
    // for the fallback rules, not the end of a traceback.
    let r = report(&format!(
        "{echo}\nRuntimeError: the decoder lost its shard map\nKilled\n"
    ));
    assert!(!r.ended_early);
    assert!(r.failed, "{:#?}", r.findings);
    assert_eq!(r.counts.unmatched_error_lines, 1, "{:#?}", r.findings);
    assert!(r.findings.iter().all(|f| f.line != 2), "{:#?}", r.findings);
}

/// A traceback its process left open while the log went on for many more lines was not cut
/// by the end of the input: `ended_early` stays false.
#[test]
fn ended_early_only_when_the_input_ends_inside_the_traceback() {
    let mut log = String::from(
        "(Worker_TP0 pid=7) Traceback (most recent call last):\n\
         (Worker_TP0 pid=7)   File \"/app/worker.py\", line 10, in run\n\
         (Worker_TP0 pid=7)     self.step()\n",
    );
    for i in 0..40 {
        log.push_str(&format!(
            "(APIServer pid=1) INFO 02-20 21:00:{:02} [metrics.py:1] Avg prompt throughput: {i}.0 tokens/s\n",
            i % 60
        ));
    }
    let r = report(&log);
    assert!(!r.ended_early, "{:#?}", r.findings);
    // Cut right after its frames, it did end early.
    let cut: String = log.lines().take(4).map(|l| format!("{l}\n")).collect();
    assert!(report(&cut).ended_early);
}

/// A chained-exception sentence quoted inside another message, or alone where no exception
/// of its process came right before it, chains nothing: the real traceback after it is the innermost exception,
/// not a dropped wrapper.
#[test]
fn an_echoed_chain_sentence_does_not_make_the_real_traceback_a_wrapper() {
    let tb = "Traceback (most recent call last):\n  File \"/app/main.py\", line 3, in <module>\n    main()\nValueError: shape mismatch in fused gate projection\n";
    for echo in [
        "INFO 02-20 21:00:01 [logger.py:1] Received request cmpl-1: prompt: 'The above exception was the direct cause of the following exception:', params: SamplingParams(n=1)",
        "INFO 02-20 21:00:01 [logger.py:1] Received request cmpl-1: prompt: 'During handling of the above exception, another exception occurred:', params: SamplingParams(n=1)",
        "The above exception was the direct cause of the following exception:",
    ] {
        // A request's exception, logged and survived, comes first: the process has an
        // exception the echo could chain to.
        let r = report(&format!("ERROR 02-20 21:00:00 [serving.py:1] Error in request cmpl-0\nTraceback (most recent call last):\n  File \"/app/serving.py\", line 5, in handle\n    check()\nKeyError: 'gate_proj'\nINFO 02-20 21:00:01 [logger.py:1] Served request cmpl-0\n{echo}\n\n{tb}"));
        assert!(r.failed, "{echo}: {:#?}", r.findings);
        let f = &r.findings[0];
        assert_eq!(f.line, 12, "{echo}: {:#?}", r.findings);
        // Found as its traceback's end, not only by the tail rule's guess.
        assert!(f.traceback.is_some() && !f.tentative, "{echo}: {f:#?}");
    }
    // A real chain still marks the outer exception as the wrapper.
    let chain = format!(
        "Traceback (most recent call last):\n  File \"/app/a.py\", line 1, in f\n    g()\nKeyError: 'gate_proj'\n\nThe above exception was the direct cause of the following exception:\n\n{tb}"
    );
    let r = report(&chain);
    assert_eq!(r.findings[0].line, 4, "{:#?}", r.findings);
}

/// A short name made of letters only (fold keys mask digits), distinct for each `i`.
fn letters(mut i: usize) -> String {
    let mut s = String::new();
    loop {
        s.push(char::from(b'a' + (i % 26) as u8));
        i /= 26;
        if i == 0 {
            return s;
        }
    }
}

/// 4,095 processes with open tracebacks, then thousands of processes whose tracebacks
/// close: each new process costs a bounded number of table entries, not a scan of the
/// whole table.
#[test]
fn open_tracebacks_do_not_make_each_new_process_scan_the_table() {
    let mut log = String::new();
    for p in 0..4095 {
        log.push_str(&format!(
            "(W{p} pid={p}) Traceback (most recent call last):\n(W{p} pid={p})   File \"/app/w.py\", line 1, in f\n"
        ));
    }
    let newcomers = 3000;
    for p in 0..newcomers {
        let q = 10_000 + p;
        log.push_str(&format!(
            "(W{q} pid={q})   File \"/app/w.py\", line 1, in f\n(W{q} pid={q}) ValueError: bad {}\n",
            letters(p)
        ));
    }
    let db = Database::embedded();
    let mut analyzer = Analyzer::new(db, AnalyzeOptions::default());
    let input = Input::from_bytes(Path::new("t.log"), log.into_bytes());
    let (_, err) = input.scan(db, &ScanOptions::default(), &mut |h| analyzer.push(&h));
    assert!(err.is_none());
    let work = analyzer.tracebacks.entries_examined();
    assert!(
        work < 10 * (4095 + newcomers as u64),
        "{work} table entries examined for {} processes",
        4095 + newcomers
    );
}

/// A worker's unknown exception that ended it (it printed nothing more), then 4,096 other
/// processes' failures waiting for their next line: the worker's stays fatal, with no limit
/// on findings and with a limit over 4,096.
#[test]
fn many_pending_processes_never_make_a_fatal_failure_survivable() {
    let mut log = String::from(
        "(Worker_TP0 pid=7) Traceback (most recent call last):\n\
         (Worker_TP0 pid=7)   File \"/app/worker.py\", line 10, in run\n\
         (Worker_TP0 pid=7)     self.step()\n\
         (Worker_TP0 pid=7) ValueError: shape mismatch in fused gate projection\n",
    );
    let n = 4200;
    for p in 0..n {
        log.push_str(&format!(
            "(R{p} pid={p}) Traceback (most recent call last):\n(R{p} pid={p})   File \"/app/r.py\", line 1, in f\n(R{p} pid={p}) KeyError: 'req {}'\n",
            letters(p)
        ));
    }
    for p in 0..n {
        log.push_str(&format!(
            "(R{p} pid={p}) INFO 02-20 21:00:00 [engine.py:1] Serving the next request\n"
        ));
    }
    for max_findings in [0, 5000, 10_000] {
        let input = Input::from_bytes(Path::new("t.log"), log.clone().into_bytes());
        let r = analyze_input(
            Database::embedded(),
            input,
            &ScanOptions::default(),
            AnalyzeOptions {
                all: false,
                max_findings,
                ..AnalyzeOptions::default()
            },
        );
        let worker = r.findings.iter().find(|f| f.line == 4);
        assert!(
            worker.is_some_and(|f| f.is_failure() && !f.survivable),
            "max_findings {max_findings}: {:?}",
            worker.map(|f| (&f.why, f.survivable))
        );
        assert!(r.failed);
        assert_eq!(r.findings[0].line, 4, "max_findings {max_findings}");
    }
}
