#!/usr/bin/env python3
"""Raise-site coverage: what share of a framework's fatal messages faultline names and diagnoses.

    python3 tools/coverage/measure.py [--faultline BIN] [--cache DIR] [--project NAME ...] [--out DIR]

For each project of pins.toml: download the pinned release from PyPI (`pip download --no-deps`,
into a temporary directory unless --cache names one), read every source file of its areas
straight from the wheel, list its fatal message sites (sites.py), render each as the line a user
sees, and measure with the faultline binary:

- named: a cause or symptom signature matches a line of the rendered message (`scan --all`
  on one file holding every rendered message, blank-line separated);
- diagnosed: in a small synthetic log (a few healthy start-up lines, then the message as the
  end of an uncaught traceback, or as the logged line for a logger site), faultline's first
  finding is the message's line, by signature or by the generic rules.

Writes OUT/sites-PROJECT.tsv (every site, its figures), OUT/uncovered-PROJECT.tsv (sites not
named or not diagnosed) and OUT/summary.md (per project and area). The sources are never written
to OUT.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import tomllib
import zipfile
from collections import Counter, defaultdict
from dataclasses import dataclass

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sites import ClassIndex, Site, cpp_sites, python_sites  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
SITE_PACKAGES = "/usr/local/lib/python3.12/dist-packages/"
NAMING_ROLES = {"cause", "symptom"}

PREAMBLE = {
    "vllm": [
        "INFO 12-08 00:13:00 [__init__.py:216] Automatically detected platform cuda.",
        "(APIServer pid=4242) INFO 12-08 00:13:04 [api_server.py:1896] vLLM API server version 0.34.0",
        "(APIServer pid=4242) INFO 12-08 00:13:04 [utils.py:328] non-default args: {'model': 'meta-llama/Llama-3.1-8B-Instruct', 'tensor_parallel_size': 8}",
        "(APIServer pid=4242) INFO 12-08 00:13:12 [model.py:547] Resolved architecture: LlamaForCausalLM",
        "(EngineCore_DP0 pid=4300) INFO 12-08 00:13:20 [core.py:93] Initializing a V1 LLM engine (v0.34.0) with config: model='meta-llama/Llama-3.1-8B-Instruct'",
    ],
    "sglang": [
        "[2026-12-08 00:13:00] server_args=ServerArgs(model_path='meta-llama/Llama-3.1-8B-Instruct', tp_size=8, port=30000)",
        "[2026-12-08 00:13:05 TP0] Init torch distributed begin.",
        "[2026-12-08 00:13:08 TP0] Init torch distributed ends. mem usage=0.85 GB",
        "[2026-12-08 00:13:09 TP0] Load weight begin. avail mem=78.50 GB",
    ],
    "torch": [
        "W1208 00:13:00.123000 4242 torch/distributed/run.py:803] ",
        "W1208 00:13:00.123000 4242 torch/distributed/run.py:803] *****************************************",
        "W1208 00:13:00.123000 4242 torch/distributed/run.py:803] Setting OMP_NUM_THREADS environment variable for each process to be 1 in default, to avoid your system being overloaded, please further tune the variable for optimal performance in your application as needed.",
        "W1208 00:13:00.123000 4242 torch/distributed/run.py:803] *****************************************",
        "step 0 loss 2.3113",
    ],
}
# The outermost frame of a synthetic traceback: the program the user started.
ENTRY_FRAME = {
    "vllm": [f'  File "{SITE_PACKAGES}vllm/entrypoints/cli/main.py", line 73, in main', "    args.dispatch_function(args)"],
    "sglang": [f'  File "{SITE_PACKAGES}sglang/launch_server.py", line 32, in <module>', "    run_server(server_args)"],
    "torch": ['  File "/workspace/train.py", line 42, in main', '    dist.init_process_group(backend="nccl")'],
}
# The Python frame that calls into C++ for a c10d site.
CPP_CALLER = ("torch/distributed/distributed_c10d.py", 2956, "all_reduce", "work = group.allreduce([tensor], opts)")
WORKER_AREAS = {"worker", "model-loading", "attention-backend", "distributed", "platform"}


@dataclass
class Case:
    """One site with its rendered block and figures."""

    site: Site
    area: str
    block: list[str]  # the lines the user sees for this site
    named_by: str = ""
    first: str = ""
    diagnosed: bool = False


def log_line(style: str, area: str, site: Site) -> list[str]:
    """The logged message as the project's default formatter prints it."""
    msg_lines = site.message.split("\n")
    base = os.path.basename(site.path)
    if style == "vllm":
        proc = "(Worker_TP0 pid=4310)" if area in WORKER_AREAS else "(EngineCore_DP0 pid=4300)"
        first = f"{proc} {site.exc} 12-08 00:13:30 [{base}:{site.line}] {msg_lines[0]}"
    elif style == "sglang":
        first = f"[2026-12-08 00:13:30{' TP0' if area in WORKER_AREAS else ''}] {msg_lines[0]}"
    else:
        first = f"{site.exc[0]}1208 00:13:30.123000 4242 {site.path}:{site.line}] {msg_lines[0]}"
    return [first] + msg_lines[1:]


def render_block(style: str, area: str, site: Site) -> list[str]:
    if site.kind.startswith("log."):
        return log_line(style, area, site)
    return site.rendered.split("\n")


def traceback_frame(site: Site) -> list[str]:
    if site.func == "<c++>":
        path, line, func, src = CPP_CALLER
    else:
        path, line, func, src = site.path, site.line, site.func, site.source
    return [f'  File "{SITE_PACKAGES}{path}", line {line}, in {func}', f"    {src}"]


def synthetic_log(style: str, case: Case) -> tuple[list[str], int, int]:
    """(lines, first and last 1-based line of the site's block)."""
    lines = list(PREAMBLE[style])
    if not case.site.kind.startswith("log."):
        lines.append("Traceback (most recent call last):")
        lines.extend(ENTRY_FRAME[style])
        lines.extend(traceback_frame(case.site))
    start = len(lines) + 1
    lines.extend(case.block)
    return lines, start, len(lines)


def area_of(path: str, areas: dict[str, list[str]]) -> str | None:
    best, best_len = None, -1
    for area, prefixes in areas.items():
        for p in prefixes:
            if (path == p or (p.endswith("/") and path.startswith(p))) and len(p) > best_len:
                best, best_len = area, len(p)
    return best


def download(pkg: str, version: str, dest: str) -> str:
    """The wheel of pkg==version in dest, downloaded with pip if not there yet."""
    os.makedirs(dest, exist_ok=True)
    prefix = f"{pkg.replace('-', '_')}-{version}-"
    have = [f for f in os.listdir(dest) if f.startswith(prefix) and f.endswith(".whl")]
    if not have:
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary", ":all:",
                        "--quiet", "-d", dest, f"{pkg}=={version}"], check=True)
        have = [f for f in os.listdir(dest) if f.startswith(prefix) and f.endswith(".whl")]
    if not have:
        raise SystemExit(f"pip left no wheel of {pkg}=={version} in {dest}")
    return os.path.join(dest, sorted(have)[0])


def collect_sites(wheel: str, areas: dict[str, list[str]]) -> list[tuple[str, Site]]:
    """Every site of the wheel's files that belong to an area, as (area, site)."""
    out: list[tuple[str, Site]] = []
    with zipfile.ZipFile(wheel) as z:
        members = [n for n in z.namelist() if area_of(n, areas)]
        index = ClassIndex()
        sources: dict[str, str] = {}
        pkg_top = {p.split("/")[0] for ps in areas.values() for p in ps}
        # The class index covers the whole package, so an exception defined outside the areas
        # still gets the module name Python prints.
        import ast
        for n in z.namelist():
            if n.endswith(".py") and n.split("/")[0] in pkg_top:
                try:
                    text = z.read(n).decode("utf-8", "replace")
                    if n in members:
                        sources[n] = text
                    index.add(n, ast.parse(text))
                except (SyntaxError, ValueError):
                    continue
        for n in sorted(members):
            area = area_of(n, areas)
            assert area is not None
            if n.endswith(".py"):
                found = python_sites(n, sources.get(n) or z.read(n).decode("utf-8", "replace"), index)
            elif n.endswith((".h", ".hpp", ".cpp", ".cc", ".cu")):
                found = cpp_sites(n, z.read(n).decode("utf-8", "replace"))
            else:
                continue
            out.extend((area, s) for s in found)
    return out


def scan_json(binary: str, args: list[str]) -> list[dict]:
    p = subprocess.run([binary, "scan", "--format", "json", "--max-findings", "0", *args], capture_output=True)
    if p.returncode not in (0, 1):
        raise SystemExit(f"faultline failed ({p.returncode}): {p.stderr.decode(errors='replace')[:500]}")
    return [json.loads(line) for line in p.stdout.decode("utf-8", "replace").splitlines() if line.strip()]


def measure(binary: str, style: str, cases: list[Case], work: str, threads: int) -> None:
    """Fill named_by, first and diagnosed of every case."""
    # named: one file, every block separated by a blank line.
    named_file = os.path.join(work, "named.txt")
    owner: dict[int, int] = {}
    with open(named_file, "w") as f:
        ln = 0
        for i, c in enumerate(cases):
            for line in c.block:
                ln += 1
                owner[ln] = i
                f.write(line.replace("\r", " ") + "\n")
            ln += 1
            f.write("\n")
    rep = scan_json(binary, ["--all", "-j", str(threads), named_file])[0]
    for m in rep.get("matches") or []:
        i = owner.get(m["line"])
        if i is not None and m.get("signature") and m.get("role") in NAMING_ROLES and not cases[i].named_by:
            cases[i].named_by = m["signature"]
    # diagnosed: one synthetic log per case.
    logs = os.path.join(work, "logs")
    os.makedirs(logs, exist_ok=True)
    for stale in os.listdir(logs):
        if stale.endswith(".log"):
            os.remove(os.path.join(logs, stale))
    spans: dict[str, tuple[int, int, int]] = {}
    for i, c in enumerate(cases):
        lines, start, end = synthetic_log(style, c)
        name = f"{i:05d}.log"
        with open(os.path.join(logs, name), "w") as f:
            f.write("\n".join(x.replace("\r", " ") for x in lines) + "\n")
        spans[name] = (i, start, end)
    for rep in scan_json(binary, ["-j", str(threads), logs]):
        i, start, end = spans[os.path.basename(rep["input"])]
        fs = rep.get("findings") or []
        if not fs:
            cases[i].first = "none"
            continue
        f0 = fs[0]
        cases[i].first = f0.get("signature") or f0.get("role") or "?"
        cases[i].diagnosed = f0["line"] <= end and f0.get("last_line", f0["line"]) >= start


def esc(s: str, limit: int = 400) -> str:
    s = s.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n").replace("\r", "\\r")
    return s if len(s) <= limit else s[: limit - 1] + "…"


def write_tsv(path: str, cases: list[Case]) -> None:
    with open(path, "w") as f:
        f.write("area\tkind\tsite\tnamed_by\tdiagnosed\tfirst_finding\trendered\n")
        for c in cases:
            f.write(f"{c.area}\t{c.site.kind}\t{c.site.path}:{c.site.line}\t{c.named_by or '-'}\t"
                    f"{'yes' if c.diagnosed else 'no'}\t{c.first}\t{esc(c.block[0] if c.site.kind.startswith('log.') else c.site.rendered)}\n")


def pct(n: int, d: int) -> str:
    return f"{100.0 * n / d:.1f}%" if d else "-"


def summary_rows(cases: list[Case]) -> list[tuple[str, int, int, int, int]]:
    by_area: dict[str, list[Case]] = defaultdict(list)
    for c in cases:
        by_area[c.area].append(c)
    rows = []
    for area, cs in list(by_area.items()) + [("all", cases)]:
        named = sum(1 for c in cs if c.named_by)
        diag = sum(1 for c in cs if c.diagnosed)
        diag_sig = sum(1 for c in cs if c.diagnosed and c.first not in ("unclassified", "none", "?"))
        rows.append((area, len(cs), named, diag, diag_sig))
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--faultline", default=os.environ.get("FAULTLINE", "target/release/faultline"))
    ap.add_argument("--cache", help="keep downloaded wheels here (default: a temporary directory)")
    ap.add_argument("--project", action="append", help="only these projects of pins.toml")
    ap.add_argument("--out", default=os.path.join(HERE, "results"))
    ap.add_argument("--keep", help="write the synthetic logs and the named-check file under this directory and keep them")
    ap.add_argument("-j", "--threads", type=int, default=2)
    a = ap.parse_args()
    pins = tomllib.load(open(os.path.join(HERE, "pins.toml"), "rb"))
    version = subprocess.run([a.faultline, "--version"], capture_output=True, text=True, check=True).stdout.strip()
    os.makedirs(a.out, exist_ok=True)
    report: list[str] = []
    with tempfile.TemporaryDirectory(prefix="coverage-") as tmp:
        cache = a.cache or os.path.join(tmp, "wheels")
        for name, pin in pins.items():
            if a.project and name not in a.project:
                continue
            wheel = download(pin["package"], pin["version"], cache)
            sha = hashlib.sha256(open(wheel, "rb").read()).hexdigest()
            cases = []
            for area, site in collect_sites(wheel, pin["areas"]):
                cases.append(Case(site, area, render_block(pin["log_style"], area, site)))
            work = os.path.join(a.keep or tmp, name)
            os.makedirs(work, exist_ok=bool(a.keep))
            measure(a.faultline, pin["log_style"], cases, work, a.threads)
            area_order = list(pin["areas"])
            cases.sort(key=lambda c: (area_order.index(c.area), c.site.path, c.site.line))
            write_tsv(os.path.join(a.out, f"sites-{name}.tsv"), cases)
            write_tsv(os.path.join(a.out, f"uncovered-{name}.tsv"), [c for c in cases if not (c.named_by and c.diagnosed)])
            report.append(f"## {name} {pin['version']}\n")
            report.append(f"Wheel `{os.path.basename(wheel)}`, sha256 `{sha}`.\n")
            kinds = Counter(c.site.kind for c in cases)
            report.append("Sites by kind: " + ", ".join(f"{k} {v}" for k, v in sorted(kinds.items())) + ".\n")
            report.append("| area | sites | named | diagnosed | of which by signature |")
            report.append("| --- | ---: | ---: | ---: | ---: |")
            for area, n, named, diag, diag_sig in summary_rows(cases):
                label = f"**{area}**" if area == "all" else area
                report.append(f"| {label} | {n} | {named} ({pct(named, n)}) | {diag} ({pct(diag, n)}) | {diag_sig} |")
            split = []
            for label, pick in (("raise and C++ check sites", lambda c: not c.site.kind.startswith("log.")),
                                ("logger sites", lambda c: c.site.kind.startswith("log."))):
                cs = [c for c in cases if pick(c)]
                split.append(f"{label} {len(cs)}: named {sum(1 for c in cs if c.named_by)}, "
                             f"diagnosed {sum(1 for c in cs if c.diagnosed)}")
            report.append("\nBy kind: " + "; ".join(split) + ".")
            firsts = Counter(c.first for c in cases if not c.diagnosed)
            if firsts:
                report.append("\nWhat came out first where the site's line did not: "
                              + ", ".join(f"`{k}` {v}" for k, v in firsts.most_common(8)) + ".")
            undiagnosed = [c for c in cases if not c.diagnosed]
            if undiagnosed:
                report.append(f"\nNot diagnosed ({len(undiagnosed)}):\n")
                for c in undiagnosed:
                    shown = c.block[0] if c.site.kind.startswith("log.") else c.site.rendered
                    report.append(f"- {c.area} `{c.site.path}:{c.site.line}` ({c.site.kind}; first: `{c.first}`): "
                                  f"{esc(shown, 160).replace('|', '/').replace('`', '')}")
            report.append(f"\nEvery site: `sites-{name}.tsv`; the sites not both named and diagnosed: `uncovered-{name}.tsv`.\n")
            print(f"{name}: {len(cases)} sites", file=sys.stderr)
    with open(os.path.join(a.out, "summary.md"), "w") as f:
        f.write(f"# Raise-site coverage\n\nMeasured with `{version}` by `tools/coverage/measure.py` "
                "(README.md there says how). named: a cause or symptom signature matches the rendered message; "
                "diagnosed: the message, at the end of a small synthetic log, is faultline's first finding "
                "(by signature, or by the generic rules as an unclassified exception or error line).\n\n")
        f.write("\n".join(report) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
