#!/usr/bin/env python3
"""Leave-one-repository-out on the whole logs: each repository's logs scored with the signatures
its logs caused to be added or changed (their sidecars' `signatures_added`) switched off, the
situation of the next user whose log the database has not learnt from. Beside it, the fragment
figure of tools/lovo.py (leave-one-vendor-out) measures the generic rules on unknown stacks.

    python3 tools/loro.py [--faultline target/release/faultline] [--corpus tests/corpus/whole]

Scoring is tools/firstscore.py's: a failing log is right when the scan exits 0 and its first
finding holds the sidecar's root_cause; a healthy log when the scan exits 1.
"""
import argparse
import collections
import json
import pathlib
import re
import subprocess
import tomllib

ROOT = pathlib.Path(__file__).resolve().parent.parent


def repository(source):
    if "tools/reallogs" in source:
        return "tools/reallogs"
    m = re.search(r"github\.com/([^/#?\s]+)/([^/#?\s]+)", source)
    return f"{m.group(1)}/{m.group(2)}".lower() if m else source


def score(fl, log, side, disabled):
    args = [fl, "scan", "--format", "json"]
    for sid in disabled:
        args += ["--disable", sid]
    p = subprocess.run(args + [str(log)], capture_output=True)
    rep = json.loads(p.stdout.decode("utf-8", "replace").splitlines()[0])
    first = (rep.get("findings") or [None])[0]
    if side.get("expect") == "clean":
        return "right" if p.returncode == 1 else "false alarm"
    if p.returncode == 1:
        return "silent"
    return "right" if p.returncode == 0 and first and side["root_cause"] in first["text"] else "wrong"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--faultline", default=str(ROOT / "target/release/faultline"))
    ap.add_argument("--corpus", default=str(ROOT / "tests/corpus/whole"))
    a = ap.parse_args()
    by_repo = collections.defaultdict(list)
    for side_path in sorted(pathlib.Path(a.corpus).glob("*.expect.toml")):
        side = tomllib.load(open(side_path, "rb"))
        stem = side_path.name[: -len(".expect.toml")]
        log = next(p for p in (side_path.with_name(stem + s) for s in (".log", ".log.zst")) if p.exists())
        by_repo[repository(side["source"])].append((stem, log, side))
    totals = collections.Counter()
    for repo, logs in sorted(by_repo.items()):
        off = sorted({sid for _, _, side in logs for sid in side.get("signatures_added", [])})
        for stem, log, side in logs:
            full = score(a.faultline, log, side, [])
            held = score(a.faultline, log, side, off) if off else full
            kind = "healthy" if side.get("expect") == "clean" else "failing"
            totals[(kind, held)] += 1
            print(f"{repo:45} {stem:70} {kind:8} full={full:12} held-out={held:12} off={off}")
    failing = sum(v for (k, _), v in totals.items() if k == "failing")
    healthy = sum(v for (k, _), v in totals.items() if k == "healthy")
    print(
        f"# leave-one-repository-out: {totals[('failing', 'right')]}/{failing} failing right, "
        f"{totals[('failing', 'silent')]} silent, {totals[('failing', 'wrong')]} wrong; "
        f"{totals[('healthy', 'false alarm')]}/{healthy} healthy with a false alarm"
    )


if __name__ == "__main__":
    main()
