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
import resource
import statistics
import subprocess
import sys
import time

PY_SCAN = """
import sys, time
import faultline
t, c = time.perf_counter(), time.process_time()
db = faultline.Database.embedded()
r = db.scan_path(sys.argv[1], threads=int(sys.argv[2]))
print(time.perf_counter() - t, r.lines, len(r.findings), time.process_time() - c)
"""


def bench_scan(args: argparse.Namespace) -> None:
    cli, py, py_whole, cli_cpu, py_cpu = [], [], [], [], []
    for i in range(args.rounds + 1):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t = time.perf_counter()
        subprocess.run(
            [args.cli, "scan", "-j", str(args.threads), "--format", "json", args.log],
            stdout=subprocess.DEVNULL,
            check=False,
        )
        c = time.perf_counter() - t
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        ccpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
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
        cli_cpu.append(ccpu)
        py_cpu.append(float(out[3]))
        print(
            f"round {i}: cli {c:.3f} s ({ccpu:.3f} s CPU)  python load+scan {p:.3f} s"
            f" ({float(out[3]):.3f} s CPU)  python process {whole:.3f} s"
            f"  ({out[1]} lines, {out[2]} findings)"
        )
    med = statistics.median
    mc, mp, mw = med(cli), med(py), med(py_whole)
    print(
        f"median (threads {args.threads}): cli {mc:.3f} s; python load+scan {mp:.3f} s "
        f"(ratio {mp / mc:.3f}); whole python process {mw:.3f} s (ratio {mw / mc:.3f}); "
        f"CPU: cli {med(cli_cpu):.3f} s, python load+scan {med(py_cpu):.3f} s "
        f"(ratio {med(py_cpu) / med(cli_cpu):.3f})"
    )


def bench_ray(args: argparse.Namespace) -> None:
    import os
    import tempfile

    import ray
    import ray.data

    import faultline.ray as fr

    ray.data.DataContext.get_current().enable_progress_bars = False
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    log = tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False).name
    base = fr._scan_batch

    def timed(batch, **kwargs):
        """Records when each batch starts and ends and its CPU time."""
        t, c = time.time(), time.process_time()
        out = base(batch, **kwargs)
        with open(log, "a") as f:
            f.write(f"call {t:.3f} {time.time():.3f} {time.process_time() - c:.3f}\n")
        return out

    fr._scan_batch = timed
    times = {1: [], 2: []}
    for i in range(args.rounds + 1):
        for workers in (1, 2):
            open(log, "w").close()
            start = time.time()
            result = fr.sweep(args.dir, workers=workers, files_per_batch=args.files_per_batch)
            el = time.time() - start
            rows = [line.split() for line in open(log)]
            calls = [r for r in rows if r[0] == "call"]
            first = min(float(r[1]) for r in calls)
            ready = first - start
            last = max(float(r[2]) for r in calls)
            cpu = sum(float(r[3]) for r in calls)
            what = "warm-up" if i == 0 else f"round {i}"
            print(
                f"{what}: {workers} worker(s) {el:.2f} s (first batch after {ready:.2f} s, "
                f"scan phase {last - first:.2f} s, scan CPU {cpu:.2f} s; "
                f"{result.summary.inputs} inputs, {result.summary.bytes} bytes)"
            )
            if i > 0:
                times[workers].append((el, last - first))
    os.unlink(log)
    med = statistics.median
    m1, m2 = med(t for t, _ in times[1]), med(t for t, _ in times[2])
    s1, s2 = med(s for _, s in times[1]), med(s for _, s in times[2])
    print(
        f"median: 1 worker {m1:.2f} s, 2 workers {m2:.2f} s, speed-up {m1 / m2:.2f}x; "
        f"scan phase {s1:.2f} s vs {s2:.2f} s, speed-up {s1 / s2:.2f}x"
    )
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
    r.add_argument("--files-per-batch", type=int, default=16)
    args = ap.parse_args()
    bench_scan(args) if args.what == "scan" else bench_ray(args)


if __name__ == "__main__":
    main()
