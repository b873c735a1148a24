//! Throughput benches of the matching engine over a generated vLLM serving log.
//!
//! `cargo bench --bench scan` (set `FAULTLINE_BENCH_MIB` to change the 64 MiB input).

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use faultline::Database;
use faultline::EmbeddedDatabase;
use faultline::{scan_slice, ScanOptions};
use faultline::{LogGen, SynthOptions};

/// The bench input: a deterministic serving log with the signatures' examples as rare
/// failures; `non_ascii` is the share of lines with progress bars or multilingual prompts.
fn log(non_ascii: f64) -> Vec<u8> {
    let mib: usize = std::env::var("FAULTLINE_BENCH_MIB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(64);
    let failures = faultline::embedded_signature_set()
        .map(|s| {
            s.signatures
                .iter()
                .flat_map(|s| s.examples.iter().map(|e| e.value.trim_end().to_string()))
                .collect()
        })
        .unwrap_or_default();
    let mut buf = Vec::with_capacity((mib << 20) + (64 << 10));
    LogGen::new(SynthOptions {
        seed: 1,
        non_ascii,
        failures,
        ..SynthOptions::default()
    })
    .fill(&mut buf, mib << 20);
    buf
}

fn scan(c: &mut Criterion) {
    let db = Database::embedded();
    let mut g = c.benchmark_group("scan");
    g.sample_size(10);
    for (name, non_ascii) in [("ascii", 0.0), ("non-ascii", 0.05)] {
        let buf = log(non_ascii);
        g.throughput(Throughput::Bytes(buf.len() as u64));
        let all = rayon::current_num_threads();
        for threads in [1, all] {
            let opts = ScanOptions {
                threads,
                ..ScanOptions::default()
            };
            g.bench_with_input(
                BenchmarkId::new(format!("{name}/threads"), threads),
                &buf,
                |b, buf| {
                    b.iter(|| {
                        let mut hits = 0u64;
                        scan_slice(db, buf, &opts, &mut |_| hits += 1);
                        hits
                    })
                },
            );
        }
        g.bench_with_input(BenchmarkId::new(name, "prefilter"), &buf, |b, buf| {
            b.iter(|| db.candidate_profile(buf).candidate_lines)
        });
    }
    g.finish();
}

fn confirm(c: &mut Criterion) {
    let db = Database::embedded();
    let buf = log(0.05);
    // The lines the prefilter hands on, as the scan would see them.
    let lines: Vec<&[u8]> = buf
        .split(|&b| b == b'\n')
        .filter(|l| db.candidate_profile(l).candidate_lines > 0)
        .take(20_000)
        .collect();
    let mut g = c.benchmark_group("confirm");
    g.throughput(Throughput::Elements(lines.len() as u64));
    g.bench_function("per-candidate-line", |b| {
        b.iter(|| {
            lines
                .iter()
                .map(|l| db.match_line(l).signatures.len())
                .sum::<usize>()
        })
    });
    g.finish();
}

fn compile(c: &mut Criterion) {
    let set = match faultline::embedded_signature_set() {
        Ok(s) => s,
        Err(e) => panic!("embedded signatures: {e}"),
    };
    let mut g = c.benchmark_group("database");
    g.sample_size(10);
    g.bench_function("compile", |b| {
        b.iter(|| Database::compile(&set).map(|db| db.anchors().0.len()))
    });
    g.finish();
}

criterion_group!(benches, scan, confirm, compile);
criterion_main!(benches);
