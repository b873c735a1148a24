"""Hostile input, round 3 (issue 30), the Python side: bounded thread pools, `-` is a file
unless `stdin=True`, KeyboardInterrupt/SystemExit from a file-like `read()` propagate, and
`scan_bytes` scans bytes and buffers in place. Generated inputs only."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time

import pytest

import faultline

OOM = (
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 3 has a total "
    "capacity of 79.19 GiB of which 1.01 GiB is free."
)


def _tasks() -> int:
    return len(os.listdir("/proc/self/task"))


@pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="Linux /proc")
def test_thread_pools_are_bounded(tmp_path):
    # Issue 30 item 6: one pool per distinct `threads` value was kept forever (j = 1..150
    # left 11,328 OS threads).
    for i in range(2):
        (tmp_path / f"{i}.log").write_text(f"INFO start\n{OOM}\n")
    db = faultline.Database.embedded()
    before = _tasks()
    for j in range(1, 41):
        reports = db.scan_paths([str(tmp_path)], threads=j)
        assert [r.root_cause.signature for r in reports] == ["pytorch.cuda.oom"] * 2
    # Pools let go end their threads soon after; one per value would be 820 threads.
    deadline = time.monotonic() + 30
    while _tasks() - before > 200 and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _tasks() - before <= 200, f"{_tasks() - before} threads left after 40 thread counts"


def _run(script: str, cwd, stdin: bytes) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(script)],
        cwd=cwd,
        input=stdin,
        capture_output=True,
        timeout=120,
    )


def test_dash_is_a_file_unless_stdin_is_true(tmp_path):
    # Issue 30 gap: `-` meant standard input in every Python entry point, so a service
    # passing a user's path `-` read its own stdin. Now `-` is the file `./-` unless
    # `stdin=True`.
    (tmp_path / "-").write_text(f"INFO start\n{OOM}\n")
    script = """
        import json, faultline
        from faultline import _native
        db = faultline.Database.embedded()
        out = {
            "scan_path": db.scan_path("-").root_cause is not None,
            "scan_paths": [r.root_cause is not None for r in db.scan_paths(["-"])],
            "walk_inputs": [p for p, *_ in _native.walk_inputs(["-"])],
        }
        print(json.dumps(out))
    """
    p = _run(script, tmp_path, b"INFO the service's own standard input\n")
    assert p.returncode == 0, p.stderr.decode()
    out = __import__("json").loads(p.stdout)
    assert out["scan_path"] is True, out
    assert out["scan_paths"] == [True], out
    assert out["walk_inputs"] == ["./-"], out
    # With stdin=True, `-` is standard input.
    script = """
        import json, faultline
        db = faultline.Database.embedded()
        a = db.scan_path("-", stdin=True)
        b = db.scan_paths(["-"], stdin=True)
        print(json.dumps([a.input, a.root_cause is not None, [r.root_cause is not None for r in b]]))
    """
    p = _run(script, tmp_path, f"INFO start\n{OOM}\n".encode())
    assert p.returncode == 0, p.stderr.decode()
    name, found, many = __import__("json").loads(p.stdout)
    assert (name, found) == ("-", True)
    # stdin is read once: by the first call.
    assert many == [False]


class _Raising:
    """A binary file object that gives `before` bytes, then raises `exc` from read()."""

    def __init__(self, exc: BaseException, before: bytes) -> None:
        self.exc = exc
        self.data = before

    def read(self, n: int = -1) -> bytes:
        if self.data:
            chunk, self.data = self.data[:n], self.data[n:]
            return chunk
        raise self.exc


@pytest.mark.parametrize("exc", [KeyboardInterrupt, SystemExit])
@pytest.mark.parametrize("before", [b"", f"INFO start\n{OOM}\n".encode() * 100])
def test_keyboard_interrupt_and_system_exit_in_read_propagate(exc, before):
    # Issue 30 gap: they were turned into an InputError, or a report with `error` set.
    db = faultline.Database.embedded()
    with pytest.raises(exc):
        db.scan_reader(_Raising(exc(), before))
    # An ordinary exception still gives a report with `error` set part-way.
    if before:
        r = db.scan_reader(_Raising(OSError("gone"), before))
        assert r.error and "gone" in r.error


def _peak_growth(kind: str) -> int:
    """Peak RSS growth (bytes) of scanning 192 MiB given as `kind`, in a fresh process."""
    script = f"""
        import mmap, resource, tempfile, faultline
        db = faultline.Database.embedded()
        db.scan_bytes(b"warm up\\n")
        line = b"INFO filler line of a generated log for the zero-copy test\\n"
        if "{kind}" == "bytearray":
            # Grown in place: no bytes object of the whole size is ever made.
            data = bytearray()
            chunk = line * (1024 * 1024 // len(line))
            while len(data) < 192 * 1024 * 1024:
                data += chunk
        else:
            data = line * (192 * 1024 * 1024 // len(line))
        if "{kind}" == "bytearray":
            pass
        elif "{kind}" == "mmap":
            f = tempfile.TemporaryFile()
            f.write(data)
            f.flush()
            del data
            data = memoryview(mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ))
            # Touch every page, so that the mapping's pages count before the scan.
            sum(data[i] for i in range(0, len(data), 4096))
        elif "{kind}" == "memoryview":
            data = memoryview(data)
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        r = db.scan_bytes(data, threads=1)
        assert r.lines > 3_000_000, r.lines
        after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        print((after - before) * 1024)
    """
    p = _run(script, None, b"")
    assert p.returncode == 0, p.stderr.decode()
    return int(p.stdout)


@pytest.mark.parametrize("kind", ["bytes", "bytearray", "memoryview", "mmap"])
def test_scan_bytes_does_not_copy_its_input(kind):
    # Issue 30 gap: scan_bytes copied its input (a memoryview of a 2 GiB mmap peaked at
    # 6.17 GB). 192 MiB in; a copy would add 192 MiB to the peak.
    growth = _peak_growth(kind)
    assert growth < 48 * 1024 * 1024, f"{kind}: peak grew by {growth >> 20} MiB"
