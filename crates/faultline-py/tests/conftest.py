"""Shared fixtures: the repository's logs, the CLI built from the same source (the reference
every result is compared with), a mixed directory of plain / .gz / .zst logs, Ray."""

from __future__ import annotations

import gzip
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
KIMI = REPO / "examples" / "kimi-k2.5-launch.log"
CORPUS = REPO / "tests" / "corpus"


def _cli_path() -> Path | None:
    env = os.environ.get("FAULTLINE_BIN")
    if env:
        return Path(env)
    for p in (REPO / "target" / "release" / "faultline", REPO / "target" / "debug" / "faultline"):
        if p.exists():
            return p
    found = shutil.which("faultline")
    return Path(found) if found else None


@pytest.fixture(scope="session")
def cli():
    """Runs the faultline CLI; returns (status, stdout, stderr). Skips when no binary is
    found, unless FAULTLINE_PY_CI=1 (ci.sh), where a missing binary fails."""
    path = _cli_path()
    if path is None or not path.exists():
        if os.environ.get("FAULTLINE_PY_CI") == "1":
            pytest.fail(f"the faultline CLI is required (FAULTLINE_BIN={path})")
        pytest.skip("no faultline CLI binary (set FAULTLINE_BIN)")

    def run(*args, cwd=None):
        p = subprocess.run(
            [str(path), *map(str, args)], capture_output=True, text=True, cwd=cwd, timeout=600
        )
        return p.returncode, p.stdout, p.stderr

    return run


def need(module: str):
    """Imports an optional test dependency: skipped when missing, a failure under ci.sh."""
    if os.environ.get("FAULTLINE_PY_CI") == "1":
        import importlib

        return importlib.import_module(module)
    return pytest.importorskip(module)


def corpus_logs():
    return sorted(CORPUS.glob("*.log"))


@pytest.fixture(scope="session")
def mixed_dir(tmp_path_factory):
    """A sweep root: real corpus logs, plain, .gz and .zst, in two directories, an empty
    file, a binary file, and one corrupt .gz (garbage over the middle of its deflate data)."""
    import zstandard

    root = tmp_path_factory.mktemp("sweep")
    (root / "nested" / "deeper").mkdir(parents=True)
    logs = corpus_logs()[::4]
    assert len(logs) >= 30
    for i, log in enumerate(logs):
        data = log.read_bytes()
        where = root if i % 2 == 0 else root / "nested" if i % 3 else root / "nested" / "deeper"
        if i % 3 == 0:
            (where / log.name).write_bytes(data)
        elif i % 3 == 1:
            (where / (log.name + ".gz")).write_bytes(gzip.compress(data))
        else:
            (where / (log.name + ".zst")).write_bytes(zstandard.ZstdCompressor().compress(data))
    shutil.copy(KIMI, root / "kimi-k2.5-launch.log")
    (root / "empty.log").write_bytes(b"")
    (root / "binary.bin").write_bytes(bytes(range(256)) * 64 + b"\nRuntimeError: CUDA error: out of memory\n")
    data = bytearray(gzip.compress(KIMI.read_bytes()))
    mid = len(data) // 2
    data[mid : mid + 512] = b"\xff" * 512
    (root / "nested" / "corrupt.log.gz").write_bytes(bytes(data))
    return root


@pytest.fixture(scope="session")
def cli_summary(cli, mixed_dir):
    """`faultline scan --summary --format json ROOT`, paths made relative to ROOT."""
    status, out, err = cli("scan", "--summary", "--format", "json", mixed_dir)
    assert status == 2, err  # the corrupt input is an error
    return json.loads(out.replace(str(mixed_dir) + "/", ""))


@pytest.fixture(scope="session")
def ray_cluster():
    """A local single-node Ray cluster with 2 CPUs (not the deprecated local_mode)."""
    ray = need("ray")
    import ray.data

    ctx = ray.data.DataContext.get_current()
    ctx.enable_progress_bars = False
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, ignore_reinit_error=True)
    yield ray
    ray.shutdown()


@pytest.fixture(scope="session")
def spark():
    """PySpark in local mode with 2 cores."""
    need("pyspark")
    from pyspark.sql import SparkSession

    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    session = (
        SparkSession.builder.master("local[2]")
        .appName("faultline-test")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.driver.host", "127.0.0.1")
        .getOrCreate()
    )
    yield session
    session.stop()
