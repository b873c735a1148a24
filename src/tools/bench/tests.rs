use super::*;
use crate::EmbeddedDatabase;

fn corpus() -> Corpus {
    Corpus::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus")).unwrap()
}

#[test]
fn profile_counts_candidates_and_matches() {
    let db = Database::embedded();
    let mut p = Profiler::new(db);
    let oom = b"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 3 has a total capacity of 79.19 GiB of which 1.01 GiB is free.";
    let mut buf = Vec::new();
    for _ in 0..3 {
        buf.extend_from_slice(oom);
        buf.extend_from_slice(b"\nok\n");
    }
    p.scan(&buf);
    assert_eq!(p.candidate_lines, 3);
    let costs = p.costs();
    let hit = db.match_line(oom);
    for &s in &hit.signatures {
        let id = &db.signature(s).id;
        let c = costs.iter().find(|c| &c.id == id).unwrap();
        assert_eq!((c.candidates, c.matches), (3, 3), "{c:?}");
    }
    let never: u64 = costs
        .iter()
        .filter(|c| c.id.starts_with("vllm.attention"))
        .map(|c| c.matches)
        .sum();
    assert_eq!(never, 0);
}

#[test]
fn verdict_on_recorded_timings() {
    // Pass times (ms) recorded by `faultline bench --against` with one set against
    // itself over tests/corpus on a shared 2-core machine (JSON `pass_seconds`, the first
    // 11 pairs): alternating passes drift with the load, by up to 40% within a pair.
    let a = [
        24.72, 19.79, 14.94, 20.76, 27.22, 38.21, 40.17, 31.04, 21.84, 24.01, 19.36,
    ];
    let b = [
        31.55, 26.36, 14.93, 20.81, 24.26, 54.41, 38.15, 27.6, 25.19, 23.66, 23.95,
    ];
    let same = compare_pass_times(&a, &b);
    assert!(!same.significant, "{same:?}");
    assert_eq!(same.pairs, 11);
    let (lo, hi) = same.interval.unwrap();
    assert!(lo <= 1.0 && 1.0 <= hi, "{same:?}");
    assert!(same
        .describe("A", "B")
        .starts_with("no significant difference"));
    // The second set 18% slower in every pair, under the same noise.
    let slow: Vec<f64> = b.iter().map(|x| x * 1.18).collect();
    let v = compare_pass_times(&a, &slow);
    assert!(v.significant, "{v:?}");
    assert!((v.median_ratio - 1.0 / 1.18).abs() < 0.03, "{v:?}");
    assert!(
        v.describe("A", "B").starts_with("A is 1.1") && v.describe("A", "B").contains("faster"),
        "{}",
        v.describe("A", "B")
    );
    // The other way round.
    let v = compare_pass_times(&slow, &a);
    assert!(v.significant && v.median_ratio > 1.1, "{v:?}");
    assert!(v.describe("A", "B").contains("slower"));
    // Too few pairs: no interval, never significant.
    let v = compare_pass_times(&a[..5], &slow[..5]);
    assert_eq!(v.interval, None);
    assert!(!v.significant);
    // A consistent but tiny difference (1%) is inside the noise by rule.
    let tiny: Vec<f64> = a.iter().map(|x| x * 1.01).collect();
    assert!(!compare_pass_times(&a, &tiny).significant);
    // Nothing to compare.
    assert!(!compare_pass_times(&[], &[]).significant);
}

#[test]
fn same_set_twice_has_equal_candidates_and_charges_add_up() {
    let db = Database::embedded();
    let opts = BenchOptions {
        min_time: Duration::ZERO,
        ..BenchOptions::default()
    };
    let sets = profile_corpus_sets(&[db, db], &corpus(), &opts);
    let [a, b] = sets.as_slice() else {
        panic!("two sets")
    };
    assert!(a.candidate_lines > 0);
    assert_eq!(a.candidate_lines, b.candidate_lines);
    assert_eq!(a.passes as usize, MIN_PAIRS);
    assert_eq!(a.pass_seconds.len(), b.pass_seconds.len());
    for (x, y) in a.costs.iter().zip(&b.costs) {
        let mut y = y.clone();
        y.confirm_seconds = x.confirm_seconds;
        if x.id != y.id {
            // Equal times may order differently: compare by id.
            y = b.costs.iter().find(|c| c.id == x.id).unwrap().clone();
            y.confirm_seconds = x.confirm_seconds;
        }
        assert_eq!(*x, y);
    }
    let charged: u64 = a.costs.iter().map(|c| c.charged).sum();
    assert_eq!(charged, a.candidate_lines);
}

#[test]
fn a_signatures_anchor_is_charged_to_it_not_to_markers() {
    // A line that only a signature's anchor makes a candidate is charged to the
    // signature; one holding a marker's literal in place is charged to the marker.
    let db = Database::embedded();
    let oom = b"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.";
    let p = db.charged_pattern(oom).expect("a candidate line");
    let owner = db.pattern_owners().nth(p as usize).expect("a pattern");
    assert!(matches!(owner, Owner::Signature(_) | Owner::Marker(_)));
    let plain = b"INFO nothing to see here at all";
    assert_eq!(db.charged_pattern(plain), None);
    let mut prof = Profiler::new(db);
    let mut buf = Vec::new();
    for _ in 0..4 {
        buf.extend_from_slice(oom);
        buf.extend_from_slice(b"\n");
        buf.extend_from_slice(plain);
        buf.extend_from_slice(b"\n");
    }
    prof.scan(&buf);
    assert_eq!(prof.candidate_lines, 4);
    assert_eq!(prof.charged.iter().sum::<u64>(), 4);
    assert_eq!(prof.charged[prof.slot_of[p as usize]], 4);
}

#[test]
fn unreadable_logs_are_listed_and_left_out() {
    let dir = tempfile::tempdir().unwrap();
    let log = "ModuleNotFoundError: No module named 'flash_attn'\n";
    std::fs::write(dir.path().join("good.log"), log).unwrap();
    std::fs::write(
        dir.path().join("good.expect.toml"),
        "root_cause = \"No module named 'flash_attn'\"\ncategory = \"import\"\nsource = \"t\"\n",
    )
    .unwrap();
    let mut gz = vec![0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3];
    gz.extend([0xff; 32]);
    std::fs::write(dir.path().join("bad.log.gz"), gz).unwrap();
    let c = Corpus::load(dir.path()).unwrap();
    assert_eq!(c.logs.len(), 2);
    let opts = BenchOptions {
        min_time: Duration::ZERO,
        ..BenchOptions::default()
    };
    let b = profile_corpus(Database::embedded(), &c, &opts);
    assert_eq!(b.inputs, 1);
    assert_eq!(b.bytes, log.len() as u64);
    assert_eq!(b.errors.len(), 1);
    assert!(b.errors[0].contains("bad.log.gz"), "{:?}", b.errors);
    assert_eq!((b.accuracy.cases, b.accuracy.passed), (1, 1));
    assert_eq!(b.accuracy.categories[0].category, "import");
}

#[test]
fn bench_over_the_shipped_corpus() {
    let c = corpus();
    let opts = BenchOptions {
        min_time: Duration::ZERO,
        ..BenchOptions::default()
    };
    let b = profile_corpus(Database::embedded(), &c, &opts);
    assert_eq!(b.inputs, c.logs.len());
    assert!(b.errors.is_empty(), "{:?}", b.errors);
    // Failing logs are scored top-1, healthy ones for false alarms: together every case.
    assert_eq!(
        (b.accuracy.cases + b.accuracy.healthy) as usize,
        c.cases.len()
    );
    let per_cat: u64 = b.accuracy.categories.iter().map(|c| c.cases).sum();
    assert_eq!(per_cat, b.accuracy.cases);
    assert_eq!(
        b.accuracy.cases - b.accuracy.passed,
        b.accuracy.misses.len() as u64
    );
    assert_eq!(b.passes, 1);
    assert!(b.bytes > 0 && b.lines > 0);
    let total_bytes: u64 = c
        .logs
        .iter()
        .map(|l| read_decoded(l).unwrap().len() as u64)
        .sum();
    assert_eq!(b.bytes, total_bytes);
}
