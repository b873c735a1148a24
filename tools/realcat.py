#!/usr/bin/env python3
"""Concatenated real healthy logs, repeated to a size: the corpus's healthy logs
(tests/corpus/*.expect.toml with expect = "clean"), in name order, each ending in a newline,
written again and again until --bytes, cut at a line end. Real text of many projects that no
generator wrote, for the speed figures (benches/compare.sh). Its content moves with the corpus:
the first line of stderr says how many logs and bytes one pass holds.

    python3 tools/realcat.py --bytes 1G [--corpus tests/corpus] > /tmp/real.log
"""
import argparse
import pathlib
import re
import sys


def size(text):
    m = re.fullmatch(r"(\d+)([KMG]?)", text)
    if not m:
        raise argparse.ArgumentTypeError(f"not a size: {text!r} (e.g. 64M, 1G)")
    return int(m.group(1)) << {"": 0, "K": 10, "M": 20, "G": 30}[m.group(2)]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bytes", type=size, required=True)
    ap.add_argument("--corpus", default=str(pathlib.Path(__file__).resolve().parent.parent / "tests" / "corpus"))
    args = ap.parse_args()
    corpus = pathlib.Path(args.corpus)
    logs = []
    for sidecar in sorted(corpus.glob("*.expect.toml")):
        if re.search(r'^expect\s*=\s*"clean"', sidecar.read_text(), re.M):
            log = sidecar.with_name(sidecar.name[: -len(".expect.toml")] + ".log")
            data = log.read_bytes()
            logs.append(data if data.endswith(b"\n") else data + b"\n")
    one = b"".join(logs)
    if not one:
        sys.exit(f"realcat: no healthy logs (expect = \"clean\") in {corpus}")
    print(f"realcat: {len(logs)} healthy logs, {len(one)} bytes a pass", file=sys.stderr)
    write_repeated(one, args.bytes, sys.stdout.buffer)


def write_repeated(one, total, out):
    """Writes `one` (lines, each ending in a newline) again and again to `total` bytes, the last
    pass cut at a line end."""
    if not one:
        sys.exit("nothing to repeat: the pass is empty")
    left = total
    while left >= len(one):
        out.write(one)
        left -= len(one)
    if left:
        out.write(one[: one.rfind(b"\n", 0, left) + 1])


if __name__ == "__main__":
    main()
