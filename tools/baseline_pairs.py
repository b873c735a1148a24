#!/usr/bin/env python3
"""What `--baseline` removes from view over the corpus's pairs (issue 33, item 3).

    python3 tools/baseline_pairs.py [CORPUS_DIR] > table.md

For each failing whole log whose sidecar names a healthy partner (`baseline = "NAME"`): the
findings plus unmatched error lines without a baseline, the new findings plus new unmatched
error lines with `--baseline PARTNER`, and whether the first finding changed.
"""
import json, os, subprocess, sys, tomllib

BIN = os.environ.get("FAULTLINE", "target/release/faultline")
d = sys.argv[1] if len(sys.argv) > 1 else "tests/corpus/whole"


def log_of(stem):
    for s in (".log", ".log.zst", ".log.gz"):
        p = os.path.join(d, stem + s)
        if os.path.exists(p):
            return p
    return None


def scan(*args):
    p = subprocess.run([BIN, "scan", "--format", "json", *args], capture_output=True)
    return json.loads(p.stdout.decode("utf-8", "replace").splitlines()[0])


print("| failing log | partner | without: findings + error lines | with: new findings + new error lines | share | first finding |")
print("| --- | --- | ---: | ---: | ---: | --- |")
tot_a = tot_b = 0
worse = 0
for name in sorted(os.listdir(d)):
    if not name.endswith(".expect.toml"):
        continue
    stem = name[: -len(".expect.toml")]
    side = tomllib.load(open(os.path.join(d, name), "rb"))
    partner = side.get("baseline")
    if not partner or side.get("expect") == "clean":
        continue
    bad, good = log_of(stem), log_of(partner)
    if not bad or not good:
        print(f"| {stem} | {partner} | missing log | | | |")
        continue
    a = scan(bad)
    b = scan("--baseline", good, bad)
    na = len(a["findings"]) + a["counts"]["unmatched_error_lines"]
    nb = sum(1 for f in b["findings"] if not f.get("in_baseline")) + b["counts"]["unmatched_error_lines"]
    fa = a["findings"][0]["text"] if a["findings"] else None
    fb = b["findings"][0]["text"] if b["findings"] else None
    rc = side.get("root_cause", "")
    right_a = fa is not None and rc in fa
    right_b = fb is not None and rc in fb
    if right_a and not right_b:
        worse += 1
    same = "same" if fa == fb else ("changed, still right" if right_b else "changed")
    tot_a += na
    tot_b += nb
    share = f"{100 * nb / na:.0f}%" if na else "-"
    print(f"| {stem} | {partner} | {na} | {nb} | {share} | {same} |")
share = f"{100 * tot_b / tot_a:.0f}%" if tot_a else "-"
print(f"| **all pairs** | | **{tot_a}** | **{tot_b}** | **{share}** | top-1 worse on {worse} |")
