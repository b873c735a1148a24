#!/usr/bin/env python3
"""Produce REAL log text from real software on this machine (CPU only), healthy and failing.

    python3 tools/reallogs/run.py OUTDIR [--only NAME[,NAME...]] [--no-install] [--no-spark]

1. Installs what it needs into a venv OUTDIR/venv (ray[default], torch, pyspark). torch is
   tried first from the CPU index (download.pytorch.org/whl/cpu); if that host is unreachable
   the plain PyPI wheel is installed (it pulls the CUDA libraries, ~3 GB, but runs on CPU).
   Anything that cannot be installed is skipped with a message, and so are its workloads.
2. Runs each workload below once, bounded by a timeout, and keeps its full output:
   OUTDIR/runs/NAME/output.log  (stdout and stderr merged, as a terminal shows them)
   OUTDIR/runs/NAME/ray-logs/   (Ray runs: the session's log directory: raylet.out,
                                 gcs_server.out, python-core-*-*.log, dashboard*.log, ...)
   OUTDIR/runs/NAME/run.json    (command, exit status, seconds, expected outcome)
   OUTDIR/versions.txt, OUTDIR/summary.tsv
3. Concatenates every healthy text (output.log and Ray's log files) into OUTDIR/healthy-all.log.

Workloads (`--list`): healthy - a local Ray head node with `ray job submit` of a job with tasks,
actors, ray.wait and ray.put (twice: once with RAY_BACKEND_LOG_LEVEL=debug, which makes MBs of
raylet/gcs text); torchrun DDP (gloo, CPU, 2 processes, 300 steps, TORCH_DISTRIBUTED_DEBUG=INFO,
TORCH_CPP_LOG_LEVEL=INFO); a pyspark local[2] job. Failing - a Ray actor that os._exit()s, a Ray
task whose worker is SIGKILLed, a Ray task killed by Ray's memory monitor, `ray status` against a
token-auth cluster (InvalidAuthToken), torchrun with a rank that raises / segfaults / exits 3,
torchrun on a port another process holds (EADDRINUSE), a c10d rendezvous join timeout, the
healthy DDP job with TORCH_DISTRIBUTED_DEBUG=DETAIL (torch 2.15.0 segfaults in DDP's constructor
then: a real crash, found by accident), python SIGSEGV / SIGKILL under bash, a pyspark UDF error.

Long runs for baselines and job sets (a healthy run and failing runs of the same job, each
terminal log >= 500 lines): the DDP job with one line per step per rank (loss, step time) and
torchrun --log-dir per-rank files (OUTDIR/runs/NAME/rank-logs/<run_id>/attempt_0/<rank>/), healthy
and with rank 1 raising / segfaulting / exiting / hanging at step 280 of 300 (the other rank then
fails in, or times out of, a gloo collective: the process-group timeout is 30 s); the same job on
two torchrun agents standing in for two nodes (rank 3 raises; OUTDIR/runs/NAME/node-{a,b}/); a Ray
job of 520 task batches with one progress line per batch, healthy and with a task raising, a task
segfaulting or its aggregator actor exiting at batch 490 (the session's logs kept as ray-logs/).

Workloads are deterministic where the software allows (fixed seeds, fixed step counts); times,
pids, ports and ids differ per run. Runs get HOME=OUTDIR/home (Ray writes ~/.ray/auth_token).
The whole run takes about 4 minutes on 2 cores (plus about 2 minutes of pip the first time;
the venv is about 6 GB because PyPI's torch wheel pulls the CUDA libraries).
Nothing here writes to the repository. Score a binary on the result with score.py.
"""

import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
WL = HERE / "workloads"

# Versions the corpus logs were produced with (2026-12-04); override with REALLOGS_UNPINNED=1.
PINS = {"ray": "ray[default]==2.60.0", "torch": "torch==2.15.0", "pyspark": "pyspark==4.3.0", "numpy": "numpy==2.4.6"}


def say(msg):
    print(f"[reallogs] {msg}", flush=True)


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


# ---------------------------------------------------------------- install


def pip(venv, args, timeout):
    cmd = [str(venv / "bin" / "pip"), "install", "--disable-pip-version-check", *args]
    say("$ " + " ".join(cmd))
    t0 = time.time()
    try:
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        say(f"  timed out after {timeout}s")
        return False
    tail = r.stdout.strip().splitlines()[-1:] or [""]
    say(f"  exit {r.returncode} in {time.time() - t0:.0f}s: {tail[0][:200]}")
    return r.returncode == 0


def spec(name):
    if os.environ.get("REALLOGS_UNPINNED"):
        return PINS[name].split("==")[0]
    return PINS[name]


def install(out, want_spark):
    venv = out / "venv"
    if not (venv / "bin" / "python").exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    have = {}
    py = str(venv / "bin" / "python")

    def importable(mod):
        return subprocess.run([py, "-c", f"import {mod}"], capture_output=True).returncode == 0

    if importable("ray") or pip(venv, [spec("ray")], 900):
        have["ray"] = True
    else:
        say("SKIP: ray could not be installed; Ray workloads are skipped")
    if importable("torch"):
        have["torch"] = True
    else:
        # CPU wheels first (small); the host may be unreachable from here.
        ok = pip(venv, ["--timeout", "20", "--retries", "0", spec("torch"),
                        "--index-url", "https://download.pytorch.org/whl/cpu"], 600)
        if not ok:
            say("download.pytorch.org not usable; installing torch from PyPI (CUDA build, runs on CPU)")
            ok = pip(venv, [spec("torch")], 1500)
        if ok:
            have["torch"] = True
            # without numpy torch warns 'Failed to initialize NumPy' at every import
            if not importable("numpy"):
                pip(venv, [spec("numpy")], 600)
        else:
            say("SKIP: torch could not be installed; torchrun workloads are skipped")
    if want_spark:
        if shutil.which("java") is None:
            say("SKIP: no java on PATH; pyspark workloads are skipped")
        elif importable("pyspark") or pip(venv, [spec("pyspark")], 900):
            have["pyspark"] = True
        else:
            say("SKIP: pyspark could not be installed; Spark workloads are skipped")
    vers = subprocess.run(
        [py, "-c", "import importlib.metadata as m, platform, sys\n"
         "print('python', platform.python_version(), platform.platform())\n"
         "for d in ('ray','torch','pyspark','grpcio','protobuf'):\n"
         "  try: print(d, m.version(d))\n"
         "  except Exception: print(d, 'not installed')"],
        capture_output=True, text=True).stdout
    java = subprocess.run(["java", "-version"], capture_output=True, text=True) if shutil.which("java") else None
    if java is not None:
        vers += "java " + (java.stderr.splitlines() or ["?"])[0] + "\n"
    (out / "versions.txt").write_text(vers)
    say("versions:\n" + vers)
    return venv, have


# ---------------------------------------------------------------- running


class Runner:
    def __init__(self, out, venv):
        self.out = out
        self.venv = venv
        self.bin = venv / "bin"
        self.summary = []
        self.raytmp = out / "t"  # short: Ray's unix socket paths must stay < 108 bytes
        (out / "home").mkdir(exist_ok=True)

    def env(self, **extra):
        e = dict(os.environ)
        e["PATH"] = f"{self.bin}:{e.get('PATH', '')}"
        e["PYTHONUNBUFFERED"] = "1"
        e["RAY_TMPDIR"] = str(self.raytmp)
        e["RAY_USAGE_STATS_ENABLED"] = "0"
        # Ray keeps state in ~/.ray (a local ray.init() writes ~/.ray/auth_token, which later
        # `ray start` runs pick up): a HOME of our own keeps runs independent of this user's.
        e["HOME"] = str(self.out / "home")
        e.pop("VIRTUAL_ENV", None)
        e.update({k: str(v) for k, v in extra.items()})
        return e

    def rundir(self, name):
        d = self.out / "runs" / name
        if d.exists():
            shutil.rmtree(d)
        d.mkdir(parents=True)
        return d

    def sh(self, d, cmd, env, timeout, logname="output.log", append=False, cwd=None):
        """Runs cmd (list, or str for bash -c), output merged into d/logname. Returns exit status."""
        mode = "a" if append else "w"
        with open(d / logname, mode) as f:
            argv = ["bash", "-c", cmd] if isinstance(cmd, str) else cmd
            p = subprocess.Popen(argv, stdout=f, stderr=subprocess.STDOUT, env=env, cwd=cwd or d,
                                 start_new_session=True)
            try:
                return p.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()
                f.write(f"\n")
                say(f"  timed out after {timeout}s (killed its process group)")
                return "timeout"

    def record(self, name, d, cmd, rc, secs, expect, what):
        meta = {"name": name, "command": cmd if isinstance(cmd, str) else " ".join(map(str, cmd)),
                "exit": rc, "seconds": round(secs, 1), "expect": expect, "what": what}
        (d / "run.json").write_text(json.dumps(meta, indent=1) + "\n")
        size = sum(p.stat().st_size for p in d.rglob("*") if p.is_file())
        self.summary.append((name, expect, str(rc), f"{secs:.0f}", str(size), what))
        say(f"  {name}: exit {rc}, {secs:.0f}s, {size} bytes")

    def keep_ray_logs(self, d):
        logs = self.raytmp / "ray" / "session_latest" / "logs"
        if logs.is_dir():
            shutil.copytree(logs, d / "ray-logs", symlinks=False, ignore_dangling_symlinks=True)
        else:
            say(f"  no Ray session logs under {logs}")

    def fresh_ray(self):
        subprocess.run([str(self.bin / "ray"), "stop", "--force"], env=self.env(), capture_output=True, timeout=120)
        if self.raytmp.exists():
            shutil.rmtree(self.raytmp, ignore_errors=True)
        # a token left by an earlier run's ray.init() would switch the next cluster to token auth
        shutil.rmtree(self.out / "home" / ".ray", ignore_errors=True)
        self.raytmp.mkdir(parents=True)

    # -------------------------------------------------------------- workloads

    def ray_healthy(self, name, entrypoint="python ray_job_healthy.py", expect="healthy", what=None, **extra):
        d = self.rundir(name)
        self.fresh_ray()
        env = self.env(**extra)
        t0 = time.time()
        port = free_port()
        cmd = (f"ray start --head --num-cpus=2 --include-dashboard=true --dashboard-host=127.0.0.1 "
               f"--dashboard-port={port} --temp-dir={self.raytmp / 'ray'} --disable-usage-stats && "
               f"ray status && "
               f"ray job submit --address http://127.0.0.1:{port} --working-dir {WL} "
               f"-- {entrypoint}; rc=$?; "
               f"ray list actors --address 127.0.0.1:6379 2>&1 | head -20; "
               f"ray stop; exit $rc")
        rc = self.sh(d, cmd, env, 420)
        self.keep_ray_logs(d)
        what = what or "ray start --head, ray job submit of a job with 1000 tasks, 3 actors, ray.wait, ray.put; ray stop"
        if extra:
            what += " (" + " ".join(f"{k}={v}" for k, v in extra.items()) + ")"
        self.record(name, d, cmd, rc, time.time() - t0, expect, what)

    def ray_token_mismatch(self, name):
        """Seen first by accident: a local ray.init() writes ~/.ray/auth_token; a later `ray start
        --head` then starts a cluster with token authentication, and `ray status` run right after
        it fails with AuthenticationError (InvalidAuthToken). Reproduced here on purpose."""
        d = self.rundir(name)
        self.fresh_ray()
        home = self.out / "home-token"
        shutil.rmtree(home, ignore_errors=True)
        home.mkdir()
        env = self.env(HOME=home)
        t0 = time.time()
        cmd = ("python -c 'import ray; ray.init(num_cpus=1, include_dashboard=False); print(ray.cluster_resources()); "
               f"ray.shutdown()' && ray start --head --num-cpus=2 --temp-dir={self.raytmp / 'ray'} "
               "--disable-usage-stats && ray status; rc=$?; ray stop; exit $rc")
        rc = self.sh(d, cmd, env, 300)
        self.keep_ray_logs(d)
        self.record(name, d, cmd, rc, time.time() - t0, "failing",
                    "a local ray.init() (writes ~/.ray/auth_token), then ray start --head and ray status: "
                    "AuthenticationError InvalidAuthToken")

    def ray_driver(self, name, script, expect, what, **extra):
        d = self.rundir(name)
        self.fresh_ray()
        t0 = time.time()
        cmd = ["python", str(WL / script)]
        rc = self.sh(d, cmd, self.env(**extra), 300)
        time.sleep(2)  # let the raylet flush
        subprocess.run([str(self.bin / "ray"), "stop", "--force"], env=self.env(), capture_output=True, timeout=120)
        self.keep_ray_logs(d)
        self.record(name, d, cmd, rc, time.time() - t0, expect, what)

    def ray_oom(self, name):
        # Ray's memory monitor kills the most recent task's worker when node memory use
        # crosses RAY_memory_usage_threshold (a fraction). Put it ~1.5 GB above current use.
        mem = {}
        for line in open("/proc/meminfo"):
            k, v = line.split(":")
            mem[k] = int(v.split()[0]) * 1024
        total, avail = mem["MemTotal"], mem["MemAvailable"]
        used = total - avail
        thr = min(0.95, (used + 1.5 * 2**30) / total)
        say(f"  memory: total {total >> 20} MiB, used {used >> 20} MiB -> RAY_memory_usage_threshold={thr:.3f}")
        self.ray_driver(name, "ray_task_oom.py", "failing",
                        "task allocating 100 MB steps, killed by Ray's memory monitor (threshold set ~1.5 GB above use)",
                        RAY_memory_usage_threshold=f"{thr:.3f}", RAY_memory_monitor_refresh_ms="250")

    def torchrun(self, name, expect, what, extra_args=(), timeout=300, pre=None, debug="INFO", log_dir=False,
                 **extra):
        """log_dir: torchrun also writes each rank's stdout/stderr to
        d/rank-logs/<run_id>/attempt_0/<rank>/{stdout,stderr}.log (--redirects 3 --tee 3: the
        console keeps every line, prefixed [default<rank>]:)."""
        d = self.rundir(name)
        t0 = time.time()
        port = free_port()
        if log_dir:
            extra_args = (f"--log-dir={d / 'rank-logs'}", "--redirects=3", "--tee=3", *extra_args)
        args = ["torchrun", "--nnodes=1", "--nproc_per_node=2", "--master_addr=127.0.0.1",
                f"--master_port={port}", *extra_args, str(WL / "ddp_train.py")]
        if pre is not None:
            args, holder = pre(args, port)
        else:
            holder = None
        env = self.env(TORCH_DISTRIBUTED_DEBUG=debug, TORCH_CPP_LOG_LEVEL="INFO", LOGLEVEL="INFO",
                       OMP_NUM_THREADS="1", **extra)
        try:
            rc = self.sh(d, args, env, timeout)
        finally:
            if holder is not None:
                holder.close()
        self.record(name, d, args, rc, time.time() - t0, expect, what)

    def torchrun_two_nodes(self, name, expect, what, timeout=300, **extra):
        """Two torchrun agents (node-a: node_rank 0, node-b: node_rank 1; 2 processes each, 4
        ranks) with a static rendezvous on 127.0.0.1, as two nodes of one job would run. Each
        node's console goes to d/node-X/console.log, its ranks' files to d/node-X/rank-logs/."""
        d = self.rundir(name)
        t0 = time.time()
        port = free_port()
        env = self.env(TORCH_DISTRIBUTED_DEBUG="INFO", TORCH_CPP_LOG_LEVEL="INFO", LOGLEVEL="INFO",
                       OMP_NUM_THREADS="1", **extra)
        procs, cmds = [], []
        for node_rank, node in enumerate(("node-a", "node-b")):
            nd = d / node
            nd.mkdir()
            args = ["torchrun", "--nnodes=2", f"--node_rank={node_rank}", "--nproc_per_node=2",
                    "--master_addr=127.0.0.1", f"--master_port={port}", f"--log-dir={nd / 'rank-logs'}",
                    "--redirects=3", "--tee=3", str(WL / "ddp_train.py")]
            cmds.append(" ".join(args))
            f = open(nd / "console.log", "w")
            procs.append((subprocess.Popen(args, stdout=f, stderr=subprocess.STDOUT, env=env, cwd=nd,
                                           start_new_session=True), f))
        rcs = []
        deadline = time.time() + timeout
        for p, f in procs:
            try:
                rcs.append(p.wait(timeout=max(1, deadline - time.time())))
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()
                rcs.append("timeout")
                say(f"  timed out after {timeout}s (killed its process group)")
            f.close()
        rc = next((r for r in rcs if r != 0), 0)
        self.record(name, d, " & ".join(cmds), rc, time.time() - t0, expect, what + f" (exits {rcs})")

    def torchrun_port_in_use(self, name):
        def hold(args, port):
            s = socket.socket()
            s.bind(("127.0.0.1", port))
            s.listen(1)
            say(f"  holding 127.0.0.1:{port} so that torchrun's TCPStore cannot listen on it")
            return args, s

        self.torchrun(name, "failing",
                      "torchrun --master_port=P while another process listens on 127.0.0.1:P (EADDRINUSE)",
                      pre=hold, timeout=240, STEPS=20)

    def torchrun_rdzv_timeout(self, name):
        d = self.rundir(name)
        t0 = time.time()
        port = free_port()
        args = ["torchrun", "--nnodes=2", "--nproc_per_node=1", "--rdzv_backend=c10d",
                f"--rdzv_endpoint=127.0.0.1:{port}", "--rdzv_id=reallogs", "--rdzv_conf=join_timeout=20",
                "--max_restarts=0", str(WL / "ddp_train.py")]
        env = self.env(TORCH_DISTRIBUTED_DEBUG="INFO", TORCH_CPP_LOG_LEVEL="INFO", LOGLEVEL="INFO",
                       OMP_NUM_THREADS="1", STEPS=20)
        rc = self.sh(d, args, env, 240)
        self.record(name, d, args, rc, time.time() - t0, "failing",
                    "torchrun --nnodes=2 with only one node started: c10d rendezvous join timeout (20 s)")

    def python_signal(self, name, code, what):
        d = self.rundir(name)
        t0 = time.time()
        cmd = f"ulimit -c 0; python -X faulthandler -c '{code}'; echo \"exit status $?\""
        rc = self.sh(d, cmd, self.env(), 120)
        self.record(name, d, cmd, rc, time.time() - t0, "failing", what)

    def spark(self, name, script, expect, what):
        d = self.rundir(name)
        t0 = time.time()
        cmd = ["python", str(WL / script)]
        rc = self.sh(d, cmd, self.env(SPARK_LOCAL_IP="127.0.0.1", PYSPARK_PYTHON=str(self.bin / "python")), 420)
        self.record(name, d, cmd, rc, time.time() - t0, expect, what)


def healthy_all(out, runs):
    """Concatenates every healthy run's text (output.log, then Ray's log files) raw."""
    dst = out / "healthy-all.log"
    n = 0
    with open(dst, "wb") as f:
        for name, expect, *_ in runs:
            if expect != "healthy":
                continue
            d = out / "runs" / name
            for p in sorted(d.rglob("*")):
                if not p.is_file() or p.name == "run.json" or p.suffix in (".err",) and p.stat().st_size == 0:
                    continue
                if p.suffix not in (".log", ".out", ".err", ".txt") and "log" not in p.name:
                    continue
                data = p.read_bytes()
                if b"\0" in data[:4096]:
                    continue
                if data and not data.endswith(b"\n"):
                    data += b"\n"
                f.write(data)
                n += 1
    say(f"healthy-all.log: {n} files, {dst.stat().st_size} bytes")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("outdir")
    ap.add_argument("--only", help="comma-separated workload names (see --list)")
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--no-install", action="store_true", help="use OUTDIR/venv as it is")
    ap.add_argument("--no-spark", action="store_true")
    a = ap.parse_args()
    out = Path(a.outdir).resolve()
    out.mkdir(parents=True, exist_ok=True)
    if a.no_install:
        venv, have = out / "venv", {}
        py = str(venv / "bin" / "python")
        for mod in ("ray", "torch", "pyspark"):
            # No venv yet (e.g. `--list --no-install` on a fresh OUTDIR): nothing is importable.
            have[mod] = Path(py).exists() and subprocess.run([py, "-c", f"import {mod}"], capture_output=True).returncode == 0
    else:
        venv, have = install(out, not a.no_spark)
    if a.no_spark:
        have["pyspark"] = False
    r = Runner(out, venv)
    segv = "import ctypes; print(\"reading address 0\", flush=True); ctypes.string_at(0)"
    kill = ("import os, signal; b = bytearray(512 << 20); print(\"allocated 512 MiB, pid\", os.getpid(), flush=True); "
            "os.kill(os.getpid(), signal.SIGKILL)")
    LONG_DDP = dict(STEPS=300, LOG_EVERY=1, STEP_SLEEP=0.02, PG_TIMEOUT=30)
    # (name, needs, what runs it): each workload method takes the run's name first.
    def job(name, need, method, *args, **kw):
        return name, need, lambda: method(name, *args, **kw)

    work = [
        job("ray-healthy-job-submit", "ray", r.ray_healthy),
        job("ray-healthy-job-submit-debug-backend-log", "ray", r.ray_healthy, RAY_BACKEND_LOG_LEVEL="debug"),
        job("ray-status-invalid-auth-token", "ray", r.ray_token_mismatch),
        job("ray-actor-died-os-exit", "ray", r.ray_driver, "ray_actor_dies.py", "failing",
            "actor method calls os._exit(1) at its 5th call; the driver's ray.get raises RayActorError"),
        job("ray-task-worker-sigkill", "ray", r.ray_driver, "ray_task_sigkill.py", "failing",
            "a task SIGKILLs its own worker (max_retries=0); ray.get raises WorkerCrashedError"),
        job("ray-task-oom-memory-monitor", "ray", r.ray_oom),
        job("torchrun-healthy-ddp-gloo", "torch", r.torchrun, "healthy",
            "torchrun 2 procs, DDP gloo on CPU, 300 steps, TORCH_DISTRIBUTED_DEBUG=INFO, TORCH_CPP_LOG_LEVEL=INFO",
            STEPS=300),
        job("torchrun-ddp-debug-detail-sigsegv", "torch", r.torchrun, "failing",
            "the healthy DDP job with TORCH_DISTRIBUTED_DEBUG=DETAIL: with torch 2.15.0 (PyPI CUDA build, no GPU) both "
            "ranks die of SIGSEGV inside DistributedDataParallel.__init__ (_ddp_init_helper, logger."
            "set_construction_data_and_log) - a real crash of the software, not injected", debug="DETAIL", STEPS=300),
        job("torchrun-worker-raises-childfailederror", "torch", r.torchrun, "failing",
            "rank 1 raises RuntimeError at step 50; torchrun's ChildFailedError summary", FAIL_MODE="raise"),
        job("torchrun-worker-sigsegv", "torch", r.torchrun, "failing",
            "rank 1 reads address 0 (ctypes) at step 50: SIGSEGV; torchrun reports exitcode -11", FAIL_MODE="segv"),
        job("torchrun-worker-exits-peer-gloo-error", "torch", r.torchrun, "failing",
            "rank 1 calls os._exit(3) at step 50; rank 0's next gloo allreduce fails", FAIL_MODE="exit"),
        job("torchrun-c10d-store-port-in-use", "torch", r.torchrun_port_in_use),
        # Long runs (one line per step per rank, >= 500 lines) with per-rank files (--log-dir):
        # a healthy run and failing runs of the same job, for baselines and job sets.
        job("torchrun-healthy-ddp-per-step-logdir", "torch", r.torchrun, "healthy",
            "torchrun 2 procs, DDP gloo on CPU, 300 steps, every rank logs every step (loss, step time), "
            "--log-dir per-rank files, PG timeout 30 s", log_dir=True, **LONG_DDP),
        job("torchrun-rank1-raises-late-logdir", "torch", r.torchrun, "failing",
            "the per-step DDP job; rank 1 raises RuntimeError at step 280; rank 0's gloo allreduce fails "
            "(Connection closed by peer)", log_dir=True, FAIL_MODE="raise", FAIL_STEP=280, **LONG_DDP),
        job("torchrun-rank1-sigsegv-late-logdir", "torch", r.torchrun, "failing",
            "the per-step DDP job; rank 1 reads address 0 at step 280 (SIGSEGV, PYTHONFAULTHANDLER=1 prints "
            "its stack); rank 0's gloo allreduce fails", log_dir=True, FAIL_MODE="segv", FAIL_STEP=280,
            PYTHONFAULTHANDLER=1, **LONG_DDP),
        job("torchrun-rank1-exits-late-logdir", "torch", r.torchrun, "failing",
            "the per-step DDP job; rank 1 logs an error and calls os._exit(3) at step 280; rank 0's gloo "
            "allreduce fails", log_dir=True, FAIL_MODE="exit", FAIL_STEP=280, **LONG_DDP),
        job("torchrun-rank1-hangs-gloo-timeout-logdir", "torch", r.torchrun, "failing",
            "the per-step DDP job; rank 1 stops silently before step 280's forward (sleeps); rank 0 times out "
            "in the gloo allreduce after the 30 s PG timeout; torchrun then stops rank 1",
            log_dir=True, FAIL_MODE="hang", FAIL_STEP=280, **LONG_DDP),
        job("torchrun-2nodes-rank3-raises-logdir", "torch", r.torchrun_two_nodes, "failing",
            "two torchrun agents (node-a, node-b) x 2 procs, the per-step DDP job; rank 3 (node-b, local 1) "
            "raises RuntimeError at step 280; the other ranks' gloo allreduce fails",
            FAIL_MODE="raise", FAIL_STEP=280, FAIL_RANK=3, **LONG_DDP),
        job("ray-healthy-job-submit-batches", "ray", r.ray_healthy, "python ray_job_batches.py", "healthy",
            "ray start --head, ray job submit of a job of 520 batches x 16 tasks and an aggregator actor, "
            "one progress line per batch; ray stop"),
        job("ray-job-submit-batches-task-raises", "ray", r.ray_healthy,
            "python ray_job_batches.py --fail raise --fail-batch 490", "failing",
            "the batch job; one task of batch 490 raises ValueError; the driver's ray.get raises RayTaskError"),
        job("ray-job-submit-batches-task-sigsegv", "ray", r.ray_healthy,
            "python ray_job_batches.py --fail segv --fail-batch 490", "failing",
            "the batch job; one task of batch 490 reads address 0: its worker dies of SIGSEGV (retried 3 times); "
            "WorkerCrashedError"),
        job("ray-job-submit-batches-actor-exits", "ray", r.ray_healthy,
            "python ray_job_batches.py --fail actor-exit --fail-batch 490", "failing",
            "the batch job; the aggregator actor calls os._exit(1) at batch 490; RayActorError"),
        job("torchrun-c10d-rendezvous-join-timeout", "torch", r.torchrun_rdzv_timeout),
        job("python-sigsegv-faulthandler", None, r.python_signal, segv,
            "python -X faulthandler reading address 0 under bash: SIGSEGV"),
        job("python-sigkill-bash-killed", None, r.python_signal, kill,
            "python allocates 512 MiB then SIGKILLs itself under bash"),
        job("spark-healthy-local-job", "pyspark", r.spark, "spark_job.py", "healthy",
            "pyspark local[2] job at Spark's default log level (WARN; INFO could not be switched on for pyspark 4.3's driver): RDD and DataFrame stages, a shuffle, a join"),
        job("spark-task-exception-stage-failure", "pyspark", r.spark, "spark_fail.py", "failing",
            "pyspark local[2]: a Python UDF raises ValueError in one partition; job aborted, Py4JJavaError"),
    ]
    if a.list:
        for n, need, _ in work:
            print(n, f"(needs {need})" if need else "")
        return
    only = set(a.only.split(",")) if a.only else None
    t0 = time.time()
    for n, need, fn in work:
        if only and n not in only:
            continue
        if need and not have.get(need):
            say(f"SKIP {n}: {need} is not installed")
            continue
        say(f"run {n}")
        fn()
    # summary over all runs present (a partial --only run keeps the earlier ones)
    rows = []
    for rj in sorted((out / "runs").glob("*/run.json")):
        m = json.loads(rj.read_text())
        size = sum(p.stat().st_size for p in rj.parent.rglob("*") if p.is_file())
        rows.append((m["name"], m["expect"], str(m["exit"]), f"{m['seconds']:.0f}", str(size), m["what"]))
    with open(out / "summary.tsv", "w") as f:
        f.write("name\texpect\texit\tseconds\tbytes\twhat\n")
        for row in rows:
            f.write("\t".join(row) + "\n")
    healthy_all(out, rows)
    say(f"done in {time.time() - t0:.0f}s; see {out / 'summary.tsv'}")


if __name__ == "__main__":
    main()
