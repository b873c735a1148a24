"""The Python API against the CLI built from the same source: same reports, same summary,
same error text; the GIL released; exceptions instead of crashes."""

from __future__ import annotations

import gzip
import io
import json
import pickle
import pydoc
import re
import subprocess
import sys
import threading
import time

import pytest

import faultline
from conftest import CORPUS, KIMI, REPO, corpus_logs

DB = faultline.Database.embedded()


def test_must_show_one_liner():
    code = (
        "import faultline; print(faultline.Database.embedded()"
        ".scan_path('examples/kimi-k2.5-launch.log').root_cause.signature)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "vllm.attention.mla-fp8-kv-no-backend"


def test_report_equals_cli_json(cli):
    status, out, _ = cli("scan", "--format", "json", KIMI)
    assert status == 0
    expected = json.loads(out)
    report = DB.scan_path(KIMI)
    assert report.to_dict() == expected
    # Every field of the contract is an attribute, with the JSON's value.
    for key, value in expected.items():
        if key == "findings":
            continue
        assert getattr(report, key) == value, key
    for finding, f in zip(report.findings, expected["findings"]):
        for key, value in f.items():
            assert getattr(finding, key) == value, key
        assert finding.to_dict() == f
    cause = report.root_cause
    assert cause.signature == "vllm.attention.mla-fp8-kv-no-backend"
    assert (cause.line, cause.rank, cause.processes[0]) == (2909, 1, "Worker_TP2 pid=207081")
    assert report.failed and report.diagnosed
    assert report.to_json() == out.strip()


def test_all_and_max_findings_match_cli(cli):
    _, out, _ = cli("scan", "--format", "json", "--all", "--max-findings", "3", KIMI)
    report = DB.scan_path(KIMI, all=True, max_findings=3)
    assert report.to_dict() == json.loads(out)
    assert len(report.findings) == 3 and report.findings_omitted > 0
    assert report.matches and report.matches[0]["line"] >= 1


def test_clean_log_has_no_root_cause():
    healthy = next(p for p in corpus_logs() if "healthy" in p.name)
    report = DB.scan_path(healthy)
    assert report.root_cause is None and not report.failed
    assert report.error is None


def test_scan_bytes_equals_scan_path():
    data = KIMI.read_bytes()
    a = DB.scan_path(KIMI).to_dict()
    for blob in (data, bytearray(data), memoryview(data), gzip.compress(data)):
        b = DB.scan_bytes(blob, name=str(KIMI)).to_dict()
        assert b == a
    assert DB.scan_bytes(b"").findings == []
    assert DB.scan_bytes(b"x").input == "<bytes>"


@pytest.mark.parametrize("bad", ["text", 12, None, ["a"], 1.5])
def test_scan_bytes_rejects_non_bytes(bad):
    with pytest.raises(TypeError, match="bytes, bytearray or memoryview"):
        DB.scan_bytes(bad)


def test_binary_bytes_give_binary_report():
    report = DB.scan_bytes(b"\x00\x01\x02" * 1000 + b"\ntorch.OutOfMemoryError: CUDA out of memory.\n")
    assert report.binary is True
    assert report.error is None


def test_scan_reader_streams_like_a_file():
    expected = DB.scan_path(KIMI).to_dict()
    with open(KIMI, "rb") as f:
        assert DB.scan_reader(f).to_dict() == expected
    assert DB.scan_reader(io.BytesIO(KIMI.read_bytes()), name=str(KIMI)).to_dict() == expected
    gz = io.BytesIO(gzip.compress(KIMI.read_bytes()))
    assert DB.scan_reader(gz, name=str(KIMI)).to_dict() == expected


class Failing(io.RawIOBase):
    """Gives `good` bytes, then raises on read."""

    def __init__(self, data: bytes, good: int):
        self.data, self.good, self.pos = data, good, 0

    def readable(self):
        return True

    def read(self, n=-1):
        if self.pos >= self.good:
            raise ConnectionResetError("connection reset by peer")
        chunk = self.data[self.pos : min(self.pos + n, self.good)]
        self.pos += len(chunk)
        return chunk


def test_read_error_part_way_gives_report_with_error():
    data = KIMI.read_bytes()
    good = 3 * len(data) // 4  # past the root cause's line
    report = DB.scan_reader(Failing(data, good), name="remote/kimi.log")
    assert report.error.startswith(f"remote/kimi.log: at byte offset {good}: ")
    assert "ConnectionResetError: connection reset by peer" in report.error
    assert report.ended_early
    assert report.bytes == good
    assert report.findings  # what was found before the error is kept


def test_read_error_at_once_raises_input_error():
    with pytest.raises(faultline.InputError, match="connection reset"):
        DB.scan_reader(Failing(b"abc", 0), name="x")


def test_scan_reader_type_errors(tmp_path):
    p = tmp_path / "t.log"
    p.write_text("hello\n")
    with open(p) as text:
        with pytest.raises(TypeError, match="binary mode"):
            DB.scan_reader(text)
    with pytest.raises(TypeError, match="binary file object"):
        DB.scan_reader(b"bytes are not a file")

    class Strings:
        def read(self, n):
            return "str"

    with pytest.raises(TypeError, match="not bytes"):
        DB.scan_reader(Strings(), name="s")

    class TooMuch:
        def read(self, n):
            return b"x" * (n + 1)

    with pytest.raises(faultline.InputError, match="returned 5 bytes"):
        DB.scan_reader(TooMuch(), name="t")  # a misbehaving reader: an error, no crash

    class LaterTooMuch:
        left = b"ok\n" * 1000

        def read(self, n):
            if not self.left:
                return b"x" * (n + 1)
            chunk, self.left = self.left[:n], self.left[n:]
            return chunk

    report = DB.scan_reader(LaterTooMuch(), name="t")
    assert report.bytes == 3000
    assert re.fullmatch(r"t: at byte offset 3000: read\((\d+)\) returned \d+ bytes", report.error)


def test_missing_and_unreadable_paths_raise(cli, tmp_path):
    missing = tmp_path / "missing.log"
    status, _, err = cli("scan", missing)
    assert status == 2
    with pytest.raises(faultline.InputError) as e:
        DB.scan_path(missing)
    assert f"faultline: {e.value}" == err.strip()
    assert e.value.path == str(missing) and isinstance(e.value, OSError)
    with pytest.raises(faultline.InputError, match="is a directory"):
        DB.scan_path(tmp_path)


def test_corrupt_input_is_a_report_with_error(cli, tmp_path):
    data = bytearray(gzip.compress(KIMI.read_bytes()))
    data[len(data) // 2 : len(data) // 2 + 256] = b"\xff" * 256
    p = tmp_path / "bad.log.gz"
    p.write_bytes(bytes(data))
    _, out, _ = cli("scan", "--format", "json", p)
    report = DB.scan_path(p)
    assert report.to_dict() == json.loads(out)
    assert "at byte offset" in report.error and "gzip stream" in report.error


def test_scan_paths_equals_cli(cli, mixed_dir):
    missing = mixed_dir / "missing.log"
    status, out, err = cli("scan", "--format", "json", "-j", "2", mixed_dir, missing)
    assert status == 2
    expected = [json.loads(line) for line in out.splitlines()]
    assert expected[-1]["error"].endswith("No such file or directory (os error 2)")
    # A root that does not exist: the CLI names it and exits 2, the library raises its line.
    with pytest.raises(faultline.InputError) as e:
        DB.scan_paths([mixed_dir, missing], threads=2)
    assert f"faultline: {e.value}" in err.splitlines() and e.value.path == str(missing)
    reports = DB.scan_paths([mixed_dir], threads=2)
    assert [r.to_dict() for r in reports] == expected[:-1]
    one = DB.scan_paths(mixed_dir, threads=1)
    assert [r.to_dict() for r in one] == expected[:-1]


def test_scan_paths_glob_and_bad_glob(mixed_dir):
    zst = DB.scan_paths([mixed_dir], glob=["*.zst"])
    assert zst and all(r.input.endswith(".zst") for r in zst)
    with pytest.raises(faultline.UsageError, match=r"glob a\[b: "):
        DB.scan_paths([mixed_dir], glob=["a[b"])


@pytest.mark.parametrize("threads", [0, -1, 1025])
def test_threads_follow_the_cli_rule(threads):
    with pytest.raises(ValueError, match=r"1\.\.=1024"):
        DB.scan_path(KIMI, threads=threads)
    with pytest.raises(ValueError, match=r"1\.\.=1024"):
        DB.scan_paths([KIMI], threads=threads)


def test_option_errors():
    with pytest.raises(ValueError, match="max_line_bytes"):
        DB.scan_path(KIMI, max_line_bytes=100)
    with pytest.raises(ValueError, match="max_findings"):
        DB.scan_path(KIMI, max_findings=-1)


def test_summary_equals_cli(cli, mixed_dir):
    _, human, _ = cli("scan", "--summary", "-j", "2", mixed_dir)
    _, js, _ = cli("scan", "--summary", "--format", "json", mixed_dir)
    _, csv, _ = cli("scan", "--summary", "--format", "csv", mixed_dir)
    reports = DB.scan_paths([mixed_dir], threads=2)
    s = faultline.summary(reports)
    assert str(s) == human
    assert s.to_dict() == json.loads(js)
    assert s.to_csv() == csv
    # dicts and JSON lines give the same summary
    assert faultline.summary([r.to_dict() for r in reports]) == s
    assert faultline.summary([r.to_json() for r in reports]) == s
    assert s.inputs == len(reports) and s.errors[0]["input"].endswith("corrupt.log.gz")
    assert s.to_arrow().num_rows == len(s.signatures)


def test_summary_errors(tmp_path):
    with pytest.raises(faultline.ReportError, match=r"<reports>:1:\d+: not a faultline JSON report"):
        faultline.summary(["{not json"])
    with pytest.raises(TypeError):
        faultline.summary([42])
    other = faultline.Database.from_dir(REPO / "signatures")
    a = DB.scan_bytes(b"x\n", name="a").to_dict()
    b = a | {"input": "b", "database": {"name": "other", "version": "1", "hash": "h"}}
    with pytest.raises(faultline.UsageError, match="2 different databases"):
        faultline.summary([a, b])
    assert faultline.summary([a, b], allow_mixed_databases=True).inputs == 2
    assert other.hash == DB.hash


def test_bad_signature_directory(cli, tmp_path):
    d = tmp_path / "sigs"
    d.mkdir()
    (d / "db.toml").write_text('name = "t"\nversion = "1.0.0"\nformat = 2\n')
    (d / "x.toml").write_text('[[signature]]\nid = "t.a.b"\nrevision = "one"\n')
    _, out, err = cli("db", "check", d)
    with pytest.raises(faultline.SignatureError) as e:
        faultline.Database.from_dir(d)
    lines = [l.removeprefix("faultline: ") for l in err.strip().splitlines()]
    # The CLI prints the first problem with "(and N more problems)", then the others.
    assert str(e.value) == lines[0]
    assert lines[0].startswith(e.value.problems[0] + " (and ")
    assert e.value.problems[1:] == lines[1:]
    assert e.value.problems[0].startswith(f"{d / 'x.toml'}:")
    with pytest.raises(faultline.InputError):
        faultline.Database.from_dir(tmp_path / "nope")
    with pytest.raises(faultline.SignatureError, match="db.toml"):
        faultline.Database.from_dir(tmp_path)


def test_archive_load_and_corrupt_archive(cli, tmp_path):
    archive = tmp_path / "db.fldb"
    status, _, err = cli("db", "compile", REPO / "signatures", "-o", archive)
    assert status == 0, err
    loaded = faultline.Database.load(archive)
    assert (loaded.name, loaded.version, loaded.hash) == (DB.name, DB.version, DB.hash)
    assert loaded.scan_path(KIMI).to_dict() == DB.scan_path(KIMI).to_dict()
    data = bytearray(archive.read_bytes())
    data[len(data) // 2] ^= 0xFF
    bad = tmp_path / "bad.fldb"
    bad.write_bytes(bytes(data))
    _, _, err = cli("scan", "--db", bad, KIMI)
    with pytest.raises(faultline.ArchiveError) as e:
        faultline.Database.load(bad)
    assert f"faultline: {e.value}" == err.strip()
    truncated = tmp_path / "short.fldb"
    truncated.write_bytes(bytes(data[:100]))
    with pytest.raises(faultline.ArchiveError):
        faultline.Database.load(truncated)
    with pytest.raises(faultline.InputError):
        faultline.Database.load(tmp_path / "missing.fldb")


def test_versions(cli):
    _, out, _ = cli("--version")
    name, version, hash_ = faultline.DATABASE
    assert f"(database {name} {version}, hash {hash_})" in out
    assert out.split()[1] == faultline.__version__
    assert (DB.name, DB.version, DB.hash) == faultline.DATABASE
    assert DB.signature_count > 400


def test_gil_is_released_while_scanning():
    # vLLM's vit-attention INFO line: a noise signature matches it, so every line is confirmed
    # and folded, work per line that keeps the scan long (~0.2 s here) however fast the
    # prefilter gets (a line no anchor holds scanned 190 MiB in 0.03 s once the prefilter
    # stopped firing on it, too short to tell a released GIL from a held one).
    block = (
        b"(Worker_TP0 pid=1) INFO 02-20 21:35:48 [cuda.py:456] Using backend "
        b"AttentionBackendEnum.FLASH_ATTN for vit attention\n"
    ) * 4096
    data = block * 200  # ~96 MiB, 819,200 lines
    done = threading.Event()
    result = []

    def scan():
        result.append(DB.scan_bytes(data, threads=1))
        done.set()

    t = threading.Thread(target=scan)
    ticks = 0
    t.start()
    start = time.perf_counter()
    while not done.is_set():
        ticks += 1
    elapsed = time.perf_counter() - start
    t.join()
    assert result[0].lines == 4096 * 200
    # With the GIL held through the scan the loop could not run until it ended.
    assert elapsed > 0.05 and ticks > 10_000, (ticks, elapsed)


def test_pickle_round_trips():
    report = DB.scan_path(KIMI)
    assert pickle.loads(pickle.dumps(report)) == report
    db = pickle.loads(pickle.dumps(DB))
    assert db.hash == DB.hash
    s = faultline.summary([report])
    assert pickle.loads(pickle.dumps(s)) == s


def test_help_is_useful():
    text = pydoc.render_doc(faultline)
    for name in ("Database", "scan_path", "scan_reader", "summary", "InputError", "faultline.ray"):
        assert name in text
    assert "root_cause" in pydoc.render_doc(faultline.Report)
    assert "threads" in (faultline.Database.scan_paths.__doc__ or "")


def test_garbage_never_crashes():
    import random

    rng = random.Random(7)
    for n in (1, 3, 4, 100, 5000):
        for prefix in (b"", b"\x1f\x8b", b"\x28\xb5\x2f\xfd", b"\xff\xfe"):
            blob = prefix + bytes(rng.randrange(256) for _ in range(n))
            r = DB.scan_bytes(blob)
            assert r.bytes >= 0
    assert len(list(CORPUS.glob("*.log"))) > 100
