#!/usr/bin/env python3
"""Score a directory of logs with sidecars with an unchanged faultline binary: a batch's first score.

    FAULTLINE=path/to/faultline python3 tools/firstscore.py DIR > first-score.txt

Outcomes (OUTCOMES-OK / OUTCOMES-DIFFER) are compared when the binary reports run_outcomes.

PASS: failing log -> exit 0 and the first finding's text holds root_cause; healthy -> exit 1.
"""
import json, os, subprocess, sys, tomllib, datetime

BIN = os.environ.get("FAULTLINE", "target/release/faultline")
d = sys.argv[1]
ver = subprocess.run([BIN, "--version"], capture_output=True, text=True).stdout.strip()
rows = []
for name in sorted(os.listdir(d)):
    if not name.endswith(".expect.toml"):
        continue
    stem = name[: -len(".expect.toml")]
    log = next((os.path.join(d, stem + s) for s in (".log", ".log.zst", ".log.gz") if os.path.exists(os.path.join(d, stem + s))), None)
    side = tomllib.load(open(os.path.join(d, name), "rb"))
    if log is None:
        rows.append(("MISSING", stem, "no log file"))
        continue
    p = subprocess.run([BIN, "scan", "--format", "json", log], capture_output=True)
    try:
        rep = json.loads(p.stdout.decode("utf-8", "replace").splitlines()[0])
    except Exception:
        rows.append(("ERROR", stem, f"exit {p.returncode}: {p.stderr.decode(errors='replace')[:200]}"))
        continue
    fs = rep.get("findings") or []
    first = fs[0] if fs else None
    desc = f"first=({first['signature']}, line {first['line']}, {first['text'][:160]!r})" if first else "first=None"
    runs = rep.get("runs")
    if side.get("expect") == "clean":
        verdict = "PASS" if p.returncode == 1 else ("FALSE-ALARM" if p.returncode == 0 else "ERROR")
    else:
        rc = side["root_cause"]
        if p.returncode == 1:
            verdict = "SILENT"
        elif p.returncode == 0 and first and rc in first["text"]:
            verdict = "PASS"
        elif p.returncode == 0:
            verdict = "WRONG"
        else:
            verdict = "ERROR"
    got = [o["outcome"] for o in rep.get("run_outcomes") or []] if "run_outcomes" in rep else None
    om = "" if got is None else (" OUTCOMES-OK" if got == side.get("outcomes") else f" OUTCOMES-DIFFER got {got}")
    rows.append((verdict, stem, f"exit {p.returncode}; runs {runs}; expected outcomes {side.get('outcomes')};{om} {desc}"))

print(f"# first score of {d} with {BIN} ({ver}), {datetime.datetime.utcnow():%Y-%m-%dT%H:%MZ}")
n_fail = n_ok = n_sil = n_wrong = n_h = n_fa = 0
for verdict, stem, desc in rows:
    print(f"{verdict:12} {stem}: {desc}")
for verdict, stem, _ in rows:
    side = tomllib.load(open(os.path.join(d, stem + ".expect.toml"), "rb"))
    if side.get("expect") == "clean":
        n_h += 1; n_fa += verdict == "FALSE-ALARM"
    else:
        n_fail += 1; n_ok += verdict == "PASS"; n_sil += verdict == "SILENT"; n_wrong += verdict == "WRONG"
print(f"# failing right at top-1: {n_ok}/{n_fail}; silent {n_sil}; wrong {n_wrong}; healthy with a false alarm: {n_fa}/{n_h}")
