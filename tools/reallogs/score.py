#!/usr/bin/env python3
"""Scores a faultline binary on the output of tools/reallogs/run.py, in the format of
tests/corpus/first-scores/round4.txt.

    python3 tools/reallogs/score.py OUTDIR BINARY > score.txt

Healthy runs: runs/NAME/output.log and every text file under runs/NAME/ray-logs/ must be clean
(`scan` exit status 1: no fatal cause, no unclassified finding). Failing runs:
runs/NAME/output.log's first finding must be a cause (or unclassified) finding, fatal, whose
line holds the label below. The labels say what the workload did (run.py) in the words the
software printed for it; they were written from the logs, before the binary was run on them.
"""

import json
import subprocess
import sys
from pathlib import Path

# name -> (substring of the root-cause line, why that line)
LABELS = {
    "ray-actor-died-os-exit": (
        "The actor died unexpectedly before finishing this task",
        "the actor's process exited (os._exit(1)); Ray's RayActorError/ActorDiedError in the driver is the first "
        "report of it (the worker's exit code is in the error's text)"),
    "ray-task-worker-sigkill": (
        "The worker died unexpectedly while executing this task",
        "the task's worker was SIGKILLed; the driver's WorkerCrashedError says so"),
    "ray-task-oom-memory-monitor": (
        "were killed due to the node running low on memory",
        "Ray's memory monitor killed the task's worker; the driver's OutOfMemoryError says so"),
    "torchrun-worker-raises-childfailederror": (
        "RuntimeError: bad batch at step 50",
        "rank 1 raised; torchrun's ChildFailedError summary and the agent's 'failed (exitcode: 1)' are wrappers"),
    "torchrun-ddp-debug-detail-sigsegv": (
        "exitcode: -11",
        "both ranks died of SIGSEGV in DistributedDataParallel.__init__ (TORCH_DISTRIBUTED_DEBUG=DETAIL; no Python "
        "traceback); the agent's failed (exitcode: -11) line is the first line that says so"),
    "ray-status-invalid-auth-token": (
        "InvalidAuthToken",
        "`ray status` could not authenticate to the GCS of a cluster started with token authentication; the "
        "gcs_client warning is the first report, the AuthenticationError follows"),
    "torchrun-worker-sigsegv": (
        "exitcode: -11",
        "rank 1 died of SIGSEGV (no Python traceback: a native crash); the agent's failed (exitcode: -11) line "
        "is the first line that says so"),
    "torchrun-worker-exits-peer-gloo-error": (
        "failed (exitcode: 3)",
        "rank 1 exited with status 3 without a traceback; rank 0's gloo connection error is a consequence"),
    "torchrun-c10d-store-port-in-use": (
        "EADDRINUSE",
        "the TCPStore server could not listen on the master port: another process held it"),
    "torchrun-c10d-rendezvous-join-timeout": (
        "RendezvousTimeoutError",
        "the second node never joined; the c10d rendezvous timed out"),
    "python-sigsegv-faulthandler": (
        "Fatal Python error: Segmentation fault",
        "the process read address 0; faulthandler's line is the first report (bash's 'Segmentation fault' "
        "line follows)"),
    "python-sigkill-bash-killed": (
        "Killed",
        "the process was SIGKILLed; bash's job line is the only report"),
    "spark-task-exception-stage-failure": (
        "ValueError: could not parse price 'n/a'",
        "the Python UDF raised on one record; the Spark task/stage failure and Py4JJavaError wrap it"),
}


def scan(binary, path):
    r = subprocess.run([binary, "scan", "--format", "json", str(path)], capture_output=True, text=True)
    rep = json.loads(r.stdout.splitlines()[0]) if r.stdout.strip() else {}
    return r.returncode, rep


def first_str(f):
    if not f:
        return "None"
    return repr((f["role"], f["text"]))


def main():
    out, binary = Path(sys.argv[1]), sys.argv[2]
    version = subprocess.run([binary, "--version"], capture_output=True, text=True).stdout.strip()
    rows = []
    for rj in sorted((out / "runs").glob("*/run.json")):
        m = json.loads(rj.read_text())
        rows.append(m)
    lines, npass, nfail_logs, silent, nhealthy, alarms = [], 0, 0, 0, 0, 0
    for m in rows:
        d = out / "runs" / m["name"]
        if m["expect"] == "healthy":
            files = [d / "output.log"] + sorted(
                p for p in (d / "ray-logs").rglob("*") if p.is_file() and p.stat().st_size > 0
                and b"\0" not in p.read_bytes()[:4096]) if (d / "ray-logs").is_dir() else [d / "output.log"]
            for p in files:
                rel = p.relative_to(out / "runs")
                nhealthy += 1
                rc, rep = scan(binary, p)
                bad = [f for f in rep.get("findings", [])
                       if f["role"] in ("cause", "unclassified") and not f["survivable"]]
                if rc == 1 and not bad:
                    npass += 1
                    lines.append(f"PASS  {rel} (clean)")
                else:
                    alarms += 1
                    f = bad[0] if bad else None
                    desc = (f"line {f['line']} ({f['role']}, {f.get('signature')}): {f['text'][:200]!r}" if f
                            else f"exit {rc}")
                    lines.append(f"FAIL  {rel}: FALSE ALARM {desc}")
            continue
        label = LABELS.get(m["name"])
        if label is None:
            lines.append(f"SKIP  {m['name']}: no label")
            continue
        nfail_logs += 1
        p = d / "output.log"
        rel = p.relative_to(out / "runs")
        rc, rep = scan(binary, p)
        fs = rep.get("findings", [])
        first = fs[0] if fs else None
        ok = (rc == 0 and first is not None and first["role"] in ("cause", "unclassified")
              and not first["survivable"] and label[0] in first["text"])
        if ok:
            npass += 1
            lines.append(f"PASS  {rel} ({first.get('signature') or first['role']})")
        elif rc == 1 and not any(f["role"] in ("cause", "unclassified") and not f["survivable"] for f in fs):
            silent += 1
            lines.append(f"FAIL  {rel}: SILENT (exit 1); first={first_str(first)}")
        else:
            lines.append(f"FAIL  {rel}: first finding line {first['line']} ({first['role']}, "
                         f"{first.get('signature')}): {first['text'][:200]!r}; expected a line containing {label[0]!r}")
    total = nfail_logs + nhealthy
    print(f"# First scores of real logs made on this machine by tools/reallogs (branch 'reallogs'): "
          f"{nfail_logs} failing runs, {len([m for m in rows if m['expect'] == 'healthy'])} healthy runs "
          f"({nhealthy} healthy log files: each run's output.log and every Ray log file).")
    print(f"# Scored with the UNCHANGED main binary {binary} ({version}) before any rule for them was written.")
    print(f"# Failing logs: runs/NAME/output.log (the terminal output); expected first finding: a fatal cause or")
    print(f"# unclassified finding whose line holds the label in tools/reallogs/score.py (no signature id required).")
    print()
    for line in lines:
        print(line)
    print()
    print(f"score: {npass}/{total} pass; failing logs: {nfail_logs}, silent among them: {silent}; "
          f"healthy logs: {nhealthy}, false alarms: {alarms}")


if __name__ == "__main__":
    main()
