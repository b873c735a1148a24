"""`baseline=` (the CLI's `--baseline GOOD`) in the Python package and `faultline.ray`: the
same reports as the CLI, the same warnings (as `warnings.warn`), the same errors."""

from __future__ import annotations

import json
import pickle

import pytest

import faultline

DB = faultline.Database.embedded()

KNOWN_FATAL = "RuntimeError: CUDA error: an illegal memory access was encountered\n"
NEW_FATAL = (
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a "
    "total capacity of 79.19 GiB of which 1.01 GiB is free.\n"
)
# The good run printed the illegal-access line and went on (it still counts as failed: a
# warning the tests below check, and ignore here).
GOOD = (
    "INFO 10-10 10:00:00 train.py:1] step 1\n" + KNOWN_FATAL + "INFO 10-10 10:00:09 train.py:1] step 2\n"
)


@pytest.fixture
def runs(tmp_path):
    good = tmp_path / "good.log"
    good.write_text(GOOD)
    bad_dir = tmp_path / "bad"
    bad_dir.mkdir()
    (bad_dir / "a.log").write_text(KNOWN_FATAL + NEW_FATAL)
    (bad_dir / "b.log").write_text(NEW_FATAL)
    (bad_dir / "c.log").write_text(KNOWN_FATAL)
    return good, bad_dir


def _cli_lines(out):
    return [json.loads(line) for line in out.splitlines()]


@pytest.mark.filterwarnings("ignore::faultline.FaultlineWarning")
def test_scans_with_a_baseline_equal_the_cli(cli, runs):
    good, bad_dir = runs
    bad = bad_dir / "a.log"
    status, out, err = cli("scan", "--format", "json", "--baseline", good, bad)
    assert status == 0, err
    expected = json.loads(out)
    report = DB.scan_path(bad, baseline=[good])
    assert report.to_dict() == expected
    assert report.baseline == {"inputs": [str(good)], "templates": report.baseline["templates"], "templates_dropped": 0}
    first = report.findings[0]
    assert first.in_baseline is False and first.category == "cuda-oom"
    assert report.findings[1].in_baseline is True
    # A loaded baseline, reused; bytes and a reader; one path given as a string.
    b = DB.load_baseline(str(good))
    assert b.templates == report.baseline["templates"] and b.info == report.baseline
    data = bad.read_bytes()
    named = DB.scan_bytes(data, name=str(bad), baseline=b)
    assert named.to_dict() == expected
    with open(bad, "rb") as f:
        assert DB.scan_reader(f, baseline=b).to_dict() == expected
    # Without a baseline: null, and no in_baseline.
    assert DB.scan_path(bad).baseline is None
    # A sweep.
    status, out, _ = cli("scan", "--format", "json", "--baseline", good, bad_dir)
    reports = DB.scan_paths([bad_dir], baseline=[good], threads=2)
    assert [r.to_dict() for r in reports] == _cli_lines(out)
    # A Baseline pickles as its paths and loads again.
    again = pickle.loads(pickle.dumps(b))
    assert again.templates == b.templates and again.paths == [str(good)]


def test_odd_baselines_warn_with_the_cli_text(cli, runs, tmp_path):
    good, bad_dir = runs
    bad = bad_dir / "b.log"
    failed_good = bad_dir / "c.log"
    status, _, err = cli("scan", "--baseline", failed_good, bad)
    assert status == 0
    with pytest.warns(faultline.FaultlineWarning) as caught:
        DB.scan_path(bad, baseline=[failed_good])
    assert [str(w.message) for w in caught] == err.strip().splitlines()
    assert "the good run failed (" in str(caught[0].message)
    empty = tmp_path / "empty.log"
    empty.write_text("")
    status, _, err = cli("scan", "--baseline", empty, bad)
    assert status == 0
    with pytest.warns(faultline.FaultlineWarning) as caught:
        report = DB.scan_paths([bad], baseline=empty)
    assert [str(w.message) for w in caught] == err.strip().splitlines()
    assert err.strip().endswith("the baseline holds 0 templates")
    assert report[0].baseline["templates"] == 0


def test_bad_baselines_raise_the_cli_error(cli, runs, tmp_path):
    good, bad_dir = runs
    bad = bad_dir / "b.log"
    missing = tmp_path / "missing.log"
    status, out, err = cli("scan", "--baseline", missing, bad)
    assert status == 2 and out == ""
    with pytest.raises(faultline.InputError) as e:
        DB.scan_path(bad, baseline=[missing])
    assert f"faultline: {e.value}" == err.strip()
    assert e.value.path == str(missing)
    corrupt = tmp_path / "good.log.gz"
    corrupt.write_bytes(b"\x1f\x8b\x08\x00garbage that is no deflate stream")
    status, _, err = cli("scan", "--baseline", corrupt, bad)
    assert status == 2
    with pytest.raises(faultline.InputError) as e:
        DB.scan_paths([bad], baseline=[corrupt])
    assert f"faultline: {e.value}" == err.strip()
    assert e.value.offset is not None and "byte offset" in str(e.value)
    # Standard input as a baseline and as an input: the stdin-twice error.
    with pytest.raises(faultline.UsageError, match="standard input is named more than once"):
        DB.scan_path("-", stdin=True, baseline=["-"])


@pytest.mark.filterwarnings("ignore::faultline.FaultlineWarning")
def test_ray_sweep_with_a_baseline_equals_the_cli(ray_cluster, cli, runs):
    import faultline.ray

    good, bad_dir = runs
    status, out, _ = cli("scan", "--summary", "--format", "json", "--baseline", good, bad_dir)
    expected = json.loads(out.replace(str(bad_dir) + "/", ""))
    result = faultline.ray.sweep(str(bad_dir), baseline=[good], workers=2)
    assert result.summary.to_dict() == expected
    oom = [s for s in expected["signatures"] if s["category"] == "cuda-oom"]
    assert oom and oom[0]["first_findings"] == 2
    with pytest.raises(faultline.InputError):
        faultline.ray.sweep(str(bad_dir), baseline=[str(bad_dir / "missing.log")], workers=2)
