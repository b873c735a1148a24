"""Ray Data sweeps on a local single-node cluster (ray.init(num_cpus=2)): the CLI's summary
as data, errors as rows, one database load per worker, s3:// against moto's server."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time

import pytest

import faultline
import faultline.arrow
from conftest import KIMI, REPO, need

COLUMNS = [
    "input",
    "signature",
    "category",
    "title",
    "line",
    "text",
    "processes",
    "count",
    "database_version",
    "error",
]


def test_module_imports_without_ray_and_says_what_to_install():
    code = (
        "import sys; sys.modules['ray'] = None\n"
        "import faultline.ray as fr\n"
        "try:\n    fr.sweep('.')\nexcept ImportError as e:\n    print(e)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "pip install 'faultline[ray]'" in out.stdout


def _rows(ds):
    return sorted(
        ds.take_all(), key=lambda r: (r["input"], r["rank"] if r["rank"] is not None else 0)
    )


def test_sweep_gives_the_cli_summary_as_data(ray_cluster, mixed_dir, cli_summary):
    import faultline.ray

    result = faultline.ray.sweep(str(mixed_dir), workers=2)
    assert result.summary.to_dict() == cli_summary
    table = result.table
    assert table.column_names[:3] == ["signature", "category", "title"]
    assert table.to_pylist() == cli_summary["signatures"]

    rows = _rows(result.findings)
    assert list(rows[0])[: len(COLUMNS)] == COLUMNS
    # The corrupt input is a row with its error, not a failed job.
    corrupt = [r for r in rows if r["input"] == "nested/corrupt.log.gz"]
    assert corrupt and all("at byte offset" in r["error"] for r in corrupt)
    assert corrupt[0]["error"].startswith("nested/corrupt.log.gz: at byte offset ")
    # Rows equal the library's reports of the same files, names relative to the root.
    db = faultline.Database.embedded()
    expected = []
    for r in db.scan_paths([mixed_dir]):
        expected.extend(faultline.arrow.rows(r, os.path.relpath(r.input, mixed_dir)))
    for e in expected:
        if e["error"]:
            e["error"] = e["error"].replace(str(mixed_dir) + "/", "")
    expected.sort(key=lambda r: (r["input"], r["rank"] if r["rank"] is not None else 0))
    assert rows == expected
    kimi = [r for r in rows if r["input"] == "kimi-k2.5-launch.log" and r["root_cause"]]
    assert kimi[0]["signature"] == "vllm.attention.mla-fp8-kv-no-backend"
    assert kimi[0]["database_version"] == faultline.DATABASE[1]
    empty = [r for r in rows if r["input"] == "empty.log"]
    assert len(empty) == 1 and empty[0]["line"] is None and empty[0]["error"] is None


def test_read_findings_of_paths_and_of_a_dataset(ray_cluster, mixed_dir):
    import faultline.ray

    ds = faultline.ray.read_findings([str(KIMI), str(mixed_dir / "kimi-k2.5-launch.log")], workers=1)
    rows = ds.take_all()
    assert {r["input"] for r in rows} == {str(KIMI), str(mixed_dir / "kimi-k2.5-launch.log")}
    # A path that does not exist is the CLI's error, raised before any task runs.
    with pytest.raises(faultline.InputError, match="missing.log: No such file or directory"):
        faultline.ray.read_findings([str(KIMI), str(mixed_dir / "missing.log")], workers=1)
    # A dataset of paths is scanned as given: a missing file there is a row with its error.
    paths = ray_cluster.data.from_items([{"path": str(KIMI)}, {"path": str(mixed_dir / "missing.log")}])
    missing = [r for r in faultline.ray.read_findings(paths, workers=1).take_all() if r["line"] is None]
    assert missing[0]["error"].endswith("No such file or directory (os error 2)")
    paths = ray_cluster.data.from_items([{"path": str(KIMI)}])
    again = faultline.ray.read_findings(paths, workers=1).take_all()
    assert sorted(r["line"] for r in again) == sorted(
        r["line"] for r in rows if r["input"] == str(KIMI)
    )


def test_database_is_loaded_once_per_worker(ray_cluster, mixed_dir, tmp_path):
    import shutil

    import faultline.ray

    sigs = tmp_path / "sigs"
    shutil.copytree(REPO / "signatures", sigs)
    db = faultline.Database.from_dir(sigs)
    # One file per task: 40-odd tasks, each bringing the pickled database.
    result = faultline.ray.sweep(str(mixed_dir), database=db, workers=2, files_per_batch=1)
    assert result.summary.inputs > 30
    loads = result.database_loads
    assert 1 <= len(loads) <= 4, loads  # worker processes (Ray reuses them)
    assert set(loads.values()) == {1}, loads  # each loaded the database once, not per file
    assert result.summary.databases == [{"name": db.name, "version": db.version, "hash": db.hash}]


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def moto_s3():
    need("moto")
    boto3 = need("boto3")
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    endpoint = f"http://127.0.0.1:{port}"
    deadline = time.time() + 60
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            if time.time() > deadline or proc.poll() is not None:
                proc.kill()
                pytest.fail("moto's S3 server did not start")
            time.sleep(0.2)
    creds = dict(aws_access_key_id="testing", aws_secret_access_key="testing", region_name="us-east-1")
    client = boto3.client("s3", endpoint_url=endpoint, **creds)
    yield client, port
    proc.terminate()
    proc.wait(timeout=30)


def test_s3_sweep_against_moto(ray_cluster, mixed_dir, cli_summary, moto_s3):
    import pyarrow.fs as pafs

    import faultline.ray

    client, port = moto_s3
    client.create_bucket(Bucket="logs")
    for path in sorted(mixed_dir.rglob("*")):
        if path.is_file():
            key = "2026-11/" + path.relative_to(mixed_dir).as_posix()
            client.upload_file(str(path), "logs", key)
    fs = pafs.S3FileSystem(
        access_key="testing",
        secret_key="testing",
        region="us-east-1",
        endpoint_override=f"127.0.0.1:{port}",
        scheme="http",
    )
    result = faultline.ray.sweep("s3://logs/2026-11", filesystem=fs, workers=2)
    assert result.summary.to_dict() == cli_summary
    # An object that does not exist, named as a root: InputError before any task runs.
    with pytest.raises(faultline.InputError, match="^s3://logs/nope.log: No such file or directory$"):
        faultline.ray.read_findings(
            ["s3://logs/2026-11/kimi-k2.5-launch.log", "s3://logs/nope.log"], filesystem=fs, workers=1
        )
    with pytest.raises(faultline.InputError) as e:
        faultline.ray.sweep("s3://logs/2026-11", filesystem=fs, glob=["*.nope"], workers=2)
    assert str(e.value) == "no input was selected from s3://logs/2026-11 (--glob *.nope)"
    found = faultline.ray.read_findings(
        ["s3://logs/2026-11/kimi-k2.5-launch.log"], filesystem=fs, workers=1
    ).take_all()
    kimi = [r for r in found if r["root_cause"]]
    assert kimi[0]["signature"] == "vllm.attention.mla-fp8-kv-no-backend"


def test_summary_json_survives_a_round_trip(mixed_dir):
    db = faultline.Database.embedded()
    reports = db.scan_paths([mixed_dir])
    slim = [faultline.arrow.slim_json(r, r.input) for r in reports]
    assert faultline.summary(slim) == faultline.summary(reports)
    assert json.loads(slim[0])["input"] == reports[0].input
