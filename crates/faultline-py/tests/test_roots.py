"""Sweep roots (issue 32): a root that does not exist and one that selects no input are the
CLI's errors (exit status 2) and `faultline.InputError` with the same text in Python, Ray and
Spark; a Ray sweep spreads its inputs over the cluster's CPUs in blocks sized by bytes."""

from __future__ import annotations

import pytest

import faultline

DB = faultline.Database.embedded()


@pytest.fixture
def roots(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.txt").write_text("RuntimeError: CUDA error: out of memory\n")
    return tmp_path / "missing", empty, docs


def _cli_error(cli, *args):
    status, out, err = cli("scan", *args)
    assert status == 2, (out, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    return lines[0]


def test_missing_and_empty_roots_are_the_cli_errors_everywhere(cli, roots, ray_cluster):
    import faultline.ray
    import faultline.spark

    missing, empty, docs = roots
    assert _cli_error(cli, missing) == f"faultline: {missing}: No such file or directory (os error 2)"
    assert _cli_error(cli, empty) == f"faultline: no input was selected from {empty}"
    filtered = _cli_error(cli, "--glob", "*.log", docs)
    assert filtered == f"faultline: no input was selected from {docs} (--glob *.log)"
    calls = {
        "scan_paths": lambda root, glob: DB.scan_paths([root], glob=glob),
        "ray.sweep": lambda root, glob: faultline.ray.sweep(str(root), glob=glob),
        "ray.read_findings": lambda root, glob: faultline.ray.read_findings(str(root), glob=glob),
        "spark.list_files": lambda root, glob: faultline.spark.list_files(str(root), glob=glob),
    }
    for name, call in calls.items():
        for root, glob, line in (
            (missing, (), _cli_error(cli, missing)),
            (empty, (), _cli_error(cli, empty)),
            (docs, ["*.log"], filtered),
        ):
            with pytest.raises(faultline.InputError) as e:
                call(root, glob)
            assert f"faultline: {e.value}" == line, name
            assert isinstance(e.value, OSError)
        # The same root with a glob that matches is swept.
        assert call(docs, ["*.txt"]) is not None


def test_a_ray_sweep_runs_more_than_one_task(ray_cluster, mixed_dir):
    import faultline.ray

    # ray.init(num_cpus=2): the sweep's blocks keep both CPUs busy.
    result = faultline.ray.sweep(str(mixed_dir))
    assert result.tasks > 1, result.tasks
    assert result.summary.inputs > 30


def test_blocks_are_sized_by_bytes():
    from faultline.ray import _blocks

    sizes = [100] * 40 + [10_000] + [100] * 40
    items = [(f"f{i}", f"f{i}", None, s) for i, s in enumerate(sizes)]
    blocks = _blocks(items, workers=2, files_per_batch=16)
    assert [it for b in blocks for it in b] == items  # every input once, in order
    total = sum(sizes)
    target = total // 8
    for b in blocks:
        assert len(b) <= 16
        assert len(b) == 1 or sum(it[3] for it in b) <= target
    big = [b for b in blocks if any(it[3] == 10_000 for it in b)]
    assert len(big[0]) == 1  # the big file is a block of its own
    # Files of one size: four blocks per worker, of equal bytes.
    even = _blocks(items[:40] + items[41:], workers=2, files_per_batch=16)
    assert [len(b) for b in even] == [10] * 8
    # A handful of files: still one block per file or so, never one block for all.
    few = _blocks(items[:3], workers=2, files_per_batch=16)
    assert len(few) == 3
