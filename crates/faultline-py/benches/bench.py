"""Speed of the Python package against the CLI, and of Ray sweeps (BENCHMARKS.md, "Python").

scan: `faultline scan -jN LOG` (a process: start, embedded database load, scan, report)
      against `Database.embedded()` + `scan_path(LOG, threads=N)` in a fresh Python process
      (timed from before the database load to after the report; the interpreter's start and
      `import faultline` are left out, as a warm service or notebook has them). Runs
      alternate, same file, page cache warm; medians.

    python bench.py scan --cli target/release/faultline --log /tmp/x.log --threads 2 --rounds 5

ray:  faultline.ray.sweep(DIR) on a local single-node cluster (ray.init(num_cpus=2)) with 1
      and with 2 workers, alternating; the wall time of sweep() (actor start-up included).

    python bench.py ray --dir /tmp/ray400 --rounds 3
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

PY_SCAN = """
import sys, time
import faultline
t = time.perf_counter()
db = faultline.Database.embedded()
r = db.scan_path(sys.argv[1], threads=int(sys.argv[2]))
print(time.perf_counter() - t, r.lines, len(r.findings))
"""


def bench_scan(args: argparse.Namespace) -> None:
    cli, py, py_whole = [], [], []
    for i in range(args.rounds + 1):
        t = time.perf_counter()
        subprocess.run(
            [args.cli, "scan", "-j", str(args.threads), "--format", "json", args.log],
            stdout=subprocess.DEVNULL,
            check=False,
        )
        c = time.perf_counter() - t
        t = time.perf_counter()
        out = subprocess.run(
            [sys.executable, "-c", PY_SCAN, args.log, str(args.threads)],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split()
        whole = time.perf_counter() - t
        p = float(out[0])
        if i == 0:
            continue  # warm-up: page cache, first faults
        cli.append(c)
        py.append(p)
        py_whole.append(whole)
        print(
            f"round {i}: cli {c:.3f} s  python load+scan {p:.3f} s  python process {whole:.3f} s"
            f"  ({out[1]} lines, {out[2]} findings)"
        )
    mc, mp, mw = statistics.median(cli), statistics.median(py), statistics.median(py_whole)
    print(
        f"median (threads {args.threads}): cli {mc:.3f} s; python load+scan {mp:.3f} s "
        f"(ratio {mp / mc:.3f}); whole python process {mw:.3f} s (ratio {mw / mc:.3f})"
    )


def bench_ray(args: argparse.Namespace) -> None:
    import ray
    import ray.data

    import faultline.ray

    ray.data.DataContext.get_current().enable_progress_bars = False
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    times = {1: [], 2: []}
    for i in range(args.rounds + 1):
        for workers in (1, 2):
            t = time.perf_counter()
            result = faultline.ray.sweep(args.dir, workers=workers, files_per_batch=args.files_per_batch)
            el = time.perf_counter() - t
            if i == 0:
                print(f"warm-up {workers} worker(s): {el:.2f} s, {result.summary.inputs} inputs, {result.summary.bytes} bytes")
                continue
            times[workers].append(el)
            print(f"round {i}: {workers} worker(s) {el:.2f} s")
    m1, m2 = statistics.median(times[1]), statistics.median(times[2])
    print(f"median: 1 worker {m1:.2f} s, 2 workers {m2:.2f} s, speed-up {m1 / m2:.2f}x")
    ray.shutdown()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="what", required=True)
    s = sub.add_parser("scan")
    s.add_argument("--cli", required=True)
    s.add_argument("--log", required=True)
    s.add_argument("--threads", type=int, default=2)
    s.add_argument("--rounds", type=int, default=5)
    r = sub.add_parser("ray")
    r.add_argument("--dir", required=True)
    r.add_argument("--rounds", type=int, default=3)
    r.add_argument("--files-per-batch", type=int, default=4)
    args = ap.parse_args()
    bench_scan(args) if args.what == "scan" else bench_ray(args)


if __name__ == "__main__":
    main()
