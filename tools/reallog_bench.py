#!/usr/bin/env python3
"""Real-log benchmark inputs (issue 31): built from the whole-log corpus, never generated.

    python3 tools/reallog_bench.py halves                      # which repositories are in A and B
    python3 tools/reallog_bench.py half-b --bytes 1G > b.log   # healthy whole logs of half B, repeated
    python3 tools/reallog_bench.py each --bytes 64M --out DIR  # each healthy log of half B alone, repeated
    python3 tools/reallog_bench.py failure-dense --bytes 64M > f.log   # failing fragments concatenated

Halves: a whole log's repository is the `owner/name` of its sidecar's `source` URL (`tools/reallogs`
for logs made on this machine); its half is A when the first byte of the SHA-256 of that name
(lower case) is even, B when odd. Half A is for tuning (an anchor model's real-text sample may use
it); speed figures use half B. One pass holds each healthy log of half B once, decompressed, in
path order, each ending in a newline; passes repeat to the size, cut at a line end. The
failure-dense input is every failing fragment of the corpus (`tests/corpus/*.log` with a
`root_cause`) once per pass, in path order.
"""
import argparse
import hashlib
import pathlib
import subprocess
import sys
import tomllib

from loro import repository
from realcat import size, write_repeated

ROOT = pathlib.Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "corpus"


def half(repo):
    return "A" if hashlib.sha256(repo.encode()).digest()[0] % 2 == 0 else "B"


def read_log(sidecar):
    stem = sidecar.name[: -len(".expect.toml")]
    for suffix in (".log", ".log.zst"):
        p = sidecar.with_name(stem + suffix)
        if p.exists():
            data = p.read_bytes()
            if suffix == ".log.zst":
                data = subprocess.run(["zstd", "-dc", str(p)], check=True, capture_output=True).stdout
            return data if data.endswith(b"\n") else data + b"\n"
    sys.exit(f"reallog_bench: no log beside {sidecar}")


def whole_logs():
    """(name, repository, half, healthy, sidecar) of every whole log, in path order."""
    out = []
    for sidecar in sorted((CORPUS / "whole").glob("*.expect.toml")):
        side = tomllib.loads(sidecar.read_text())
        repo = repository(side.get("source", ""))
        name = sidecar.name[: -len(".expect.toml")]
        out.append((name, repo, half(repo), side.get("expect") == "clean", sidecar))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("what", choices=["halves", "half-b", "each", "failure-dense"])
    ap.add_argument("--bytes", type=size, default=1 << 30)
    ap.add_argument("--out", type=pathlib.Path, help="directory for `each`")
    args = ap.parse_args()
    logs = whole_logs()
    if args.what == "halves":
        for h in "AB":
            repos = sorted({r for _, r, hh, _, _ in logs if hh == h})
            healthy = [n for n, _, hh, ok, _ in logs if hh == h and ok]
            print(f"half {h}: {len(repos)} repositories, {len(healthy)} healthy whole logs")
            for r in repos:
                print(f"  {r}")
        return
    if args.what == "failure-dense":
        parts = []
        for sidecar in sorted(CORPUS.glob("*.expect.toml")):
            if "root_cause" in tomllib.loads(sidecar.read_text()):
                parts.append(read_log(sidecar))
        one = b"".join(parts)
        print(f"reallog_bench: {len(parts)} failing fragments, {len(one)} bytes a pass", file=sys.stderr)
        write_repeated(one, args.bytes, sys.stdout.buffer)
        return
    chosen = [(n, s) for n, _, h, ok, s in logs if h == "B" and ok]
    if args.what == "half-b":
        one = b"".join(read_log(s) for _, s in chosen)
        print(f"reallog_bench: {len(chosen)} healthy whole logs of half B, {len(one)} bytes a pass", file=sys.stderr)
        write_repeated(one, args.bytes, sys.stdout.buffer)
        return
    if args.out is None:
        sys.exit("reallog_bench: `each` needs --out DIR")
    args.out.mkdir(parents=True, exist_ok=True)
    for name, sidecar in chosen:
        with open(args.out / f"{name}.log", "wb") as f:
            write_repeated(read_log(sidecar), args.bytes, f)
        print(f"reallog_bench: {args.out / (name + '.log')}", file=sys.stderr)


if __name__ == "__main__":
    main()
