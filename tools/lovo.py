#!/usr/bin/env python3
"""Leave-one-vendor-out: how faultline does on a failure whose program it has no signatures for.

For each vendor prefix V (the part of a signature id before its first '.'), V's signatures are
switched off (`faultline bench --disable ID`, repeated) and the failing corpus logs whose first
finding under the full set is a V signature are scored again: right (the first finding's line is
still the sidecar's root cause, and the finding passes every other check of the sidecar but the
signature id, which cannot be named with its vendor off), silent ("No failure found") or wrong
(another line, or the right line with the wrong fate or run). Logs whose first finding is
unclassified under the full set are scored once, as vendor `none`. Every healthy log is scored
under every such set, and any false alarm is listed with the vendor that was off.

It measures the analysis's generic rules (traceback ends, error-level stand-ins, terminal
markers) on logs of a stack the database does not know, the situation of a user's first log of a
new stack. It is not a held-out score: the logs were seen when the rules were written.

    python3 tools/lovo.py [--faultline target/release/faultline] [--corpus tests/corpus]
                          [--signatures signatures] > lovo.txt
"""
import argparse
import collections
import json
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent


def sidecar(log):
    return log.with_name(log.name[: -len(".log")] + ".expect.toml")


def first_signatures(fl, logs):
    """Per log, the signature of its first finding under the full set (None: unclassified or
    none), from one `faultline scan` of them all (a JSON line per input)."""
    run = subprocess.run([fl, "scan", "--format", "json", *map(str, logs)], capture_output=True, text=True)
    found = {}
    for line in run.stdout.splitlines():
        report = json.loads(line)
        findings = report.get("findings") or []
        found[report["input"]] = findings[0].get("signature") if findings else None
    return [found.get(str(log)) for log in logs]


def copy_set(logs, into):
    """`logs` and their sidecars copied into the directory `into` (bench reads no symlinks)."""
    for log in logs:
        shutil.copy(log, into)
        shutil.copy(sidecar(log), into)
    return into


def bench(fl, corpus, disable):
    """`faultline bench` over the corpus directory `corpus` with `disable` switched off."""
    args = [fl, "bench", "--corpus", corpus, "--format", "json"]
    for sig in disable:
        args += ["--disable", sig]
    run = subprocess.run(args, capture_output=True, text=True)
    if not run.stdout.strip():
        sys.exit(f"lovo: faultline bench failed: {run.stderr.strip()}")
    return json.loads(run.stdout)["sets"][0]["accuracy"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--faultline", default=str(ROOT / "target" / "release" / "faultline"))
    ap.add_argument("--corpus", default=str(ROOT / "tests" / "corpus"))
    ap.add_argument("--signatures", default=str(ROOT / "signatures"))
    args = ap.parse_args()
    fl = args.faultline
    ids = []
    for toml in sorted(pathlib.Path(args.signatures).glob("*.toml")):
        ids += re.findall(r'^id\s*=\s*"([^"]+)"', toml.read_text(), re.M)
    by_vendor = collections.defaultdict(list)
    for sig in ids:
        by_vendor[sig.split(".")[0]].append(sig)
    healthy, failed = [], []
    for log in sorted(pathlib.Path(args.corpus).glob("*.log")):
        clean = re.search(r'^expect\s*=\s*"clean"', sidecar(log).read_text(), re.M)
        (healthy if clean else failed).append(log)
    failing = collections.defaultdict(list)
    for log, sig in zip(failed, first_signatures(fl, failed)):
        failing[sig.split(".")[0] if sig else "none"].append(log)
    totals = collections.Counter()
    print("vendor off        logs  right silent wrong  missed")
    for vendor, logs in sorted(failing.items()):
        with tempfile.TemporaryDirectory() as tmp:
            acc = bench(fl, copy_set(logs, tmp), by_vendor.get(vendor, []))
        # A miss only for the signature id: every other check passed (the line, not a decoy, the
        # fate, the run), and the id expected is one of those switched off.
        named = [m["case"] for m in acc["misses"] if m["reason"].startswith("expected signature")]
        silent = [m["case"] for m in acc["misses"] if m["reason"].startswith("no finding")]
        wrong = [
            m["case"]
            for m in acc["misses"]
            if not m["reason"].startswith(("no finding", "expected signature"))
        ]
        totals.update(
            logs=acc["cases"],
            right=acc["passed"] + len(named),
            silent=len(silent),
            wrong=len(wrong),
            named=len(named),
        )
        missed = " ".join([f"{c} (silent)" for c in silent] + [f"{c} (wrong)" for c in wrong])
        print(
            f"{vendor:<16} {acc['cases']:>5} {acc['passed'] + len(named):>6} {len(silent):>6} "
            f"{len(wrong):>5}  {missed}"
        )
    alarms = []
    with tempfile.TemporaryDirectory() as tmp:
        copy_set(healthy, tmp)
        for vendor, sigs in sorted(by_vendor.items()):
            acc = bench(fl, tmp, sigs)
            alarms += [(vendor, m["case"]) for m in acc["misses"]]
    print()
    print(
        f"failing logs {totals['logs']}: right {totals['right']} (of them {totals['named']} on the "
        f"right line without the switched-off signature id the sidecar names), silent "
        f"{totals['silent']}, wrong {totals['wrong']}"
    )
    print(
        f"healthy logs {len(healthy)} under {len(by_vendor)} sets (one vendor off each): "
        f"{len(alarms)} false alarms"
        + "".join(f"\n  {case} (with {vendor} off)" for vendor, case in alarms)
    )


if __name__ == "__main__":
    main()
