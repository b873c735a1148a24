"""One count, by exit status (issue 32): every input is exactly one of diagnosed (its exit
status alone would be 0), clean (1) or errored (2), counted by one rule of the Rust library,
and the same through every path: the CLI (`scan --summary`, `faultline summary` of its JSON
lines, each input's own exit status), Python (`faultline.summary`, `Report.bucket`),
`faultline.ray` and the Spark recipe (`faultline.spark.counts`)."""

from __future__ import annotations

import collections
import gzip
import json
import random
import shutil

import pytest

import faultline
from conftest import corpus_logs

DB = faultline.Database.embedded()

OOM = (
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a "
    "total capacity of 79.19 GiB of which 1.01 GiB is free.\n"
)
BUCKETS = ("diagnosed", "clean", "errored")


@pytest.fixture(scope="module")
def corpus_root(tmp_path_factory):
    """The corpus's logs, plus an input that errors after its root cause (a gzip stream
    corrupted part-way) and one that ends inside a traceback (ended early, no error)."""
    root = tmp_path_factory.mktemp("counts")
    for log in corpus_logs():
        shutil.copy(log, root / log.name)
    rng = random.Random(32)
    text = OOM + "".join(f"INFO step {i} loss {rng.random():.6f}\n" for i in range(20000))
    data = bytearray(gzip.compress(text.encode()))
    at = len(data) * 3 // 4
    data[at : at + 256] = b"\xff" * 256
    (root / "zz-corrupt-after-oom.log.gz").write_bytes(bytes(data))
    (root / "zz-cut-traceback.log").write_text(
        "INFO 10-10 10:00:00 t.py:1] step 1\n"
        "Traceback (most recent call last):\n"
        '  File "train.py", line 12, in <module>\n'
    )
    return root


def _counts(summary: dict) -> dict:
    return {
        "diagnosed": summary["diagnosed"],
        "clean": summary["clean"],
        "errored": summary["errored"],
        "errored_diagnosed": summary["errored_diagnosed"],
    }


def _roots(summary: dict) -> dict:
    return {s["signature"]: s["first_findings"] for s in summary["signatures"] if s["first_findings"]}


@pytest.fixture(scope="module")
def cli_counts(cli, corpus_root):
    status, out, err = cli("scan", "--summary", "--format", "json", corpus_root)
    assert status == 2, err  # the corrupt input
    summary = json.loads(out)
    assert summary["schema_version"] == faultline.SUMMARY_SCHEMA_VERSION
    # Every input in exactly one bucket; the root causes of every bucket in the table.
    assert summary["diagnosed"] + summary["clean"] + summary["errored"] == summary["inputs"]
    assert summary["failed"] == summary["errored"] == len(summary["errors"])
    assert summary["clean"] == len(summary["undiagnosed"])
    assert sum(_roots(summary).values()) == summary["diagnosed"] + summary["errored_diagnosed"]
    assert summary["errored"] == 1 and summary["errored_diagnosed"] == 1, summary["errors"]
    return summary


def test_the_cli_counts_each_input_by_its_own_exit_status(cli, corpus_root, cli_counts):
    by_status = collections.defaultdict(set)
    for path in sorted(corpus_root.iterdir()):
        status, _, _ = cli("scan", path)
        by_status[BUCKETS[status]].add(str(path))
    assert {b: len(by_status[b]) for b in BUCKETS} == {b: cli_counts[b] for b in BUCKETS}
    assert by_status["clean"] == set(cli_counts["undiagnosed"])
    assert by_status["errored"] == {e["input"] for e in cli_counts["errors"]}
    # The same summary from the JSON lines (`faultline summary`).
    status, out, _ = cli("scan", "--format", "json", corpus_root)
    lines = corpus_root.parent / "counts.jsonl"
    lines.write_text(out)
    status, merged, _ = cli("summary", "--format", "json", lines)
    assert status == 2
    assert json.loads(merged) == cli_counts


def test_python_ray_and_spark_count_as_the_cli(ray_cluster, spark, corpus_root, cli_counts):
    import faultline.ray
    import faultline.spark

    want = _counts(cli_counts)
    roots = _roots(cli_counts)
    # Python: the summary of the reports, and each report's bucket.
    reports = DB.scan_paths([corpus_root], threads=2)
    py = faultline.summary(reports).to_dict()
    assert py == cli_counts
    buckets = collections.Counter(r.bucket for r in reports)
    assert {b: buckets[b] for b in BUCKETS} == {b: want[b] for b in BUCKETS}
    # Ray: the sweep's summary.
    ray_summary = faultline.ray.sweep(str(corpus_root), workers=2).summary.to_dict()
    assert _counts(ray_summary) == want and _roots(ray_summary) == roots
    # Spark: the recipe's rows, counted by their bucket column.
    files = faultline.spark.list_files(str(corpus_root))
    paths = spark.createDataFrame([(p,) for p in files], "path string").repartition(2)
    findings = paths.mapInArrow(faultline.spark.scan_partition, faultline.spark.SCHEMA)
    got = faultline.spark.counts(findings)
    assert got == want
    spark_roots = {
        r["signature"] or "(unclassified)": r["count"]
        for r in findings.where("root_cause").groupBy("signature").count().collect()
    }
    assert spark_roots == roots


def test_an_old_json_line_without_failed_falls_back_to_the_first_finding():
    report = DB.scan_bytes(OOM.encode(), name="old.log").to_dict()
    del report["failed"]
    old = faultline.summary([json.dumps(report)]).to_dict()
    assert (old["diagnosed"], old["clean"], old["errored"]) == (1, 0, 0)
    report["findings"] = [dict(f, role="symptom") for f in report["findings"]]
    old = faultline.summary([json.dumps(report)]).to_dict()
    assert (old["diagnosed"], old["clean"], old["errored"]) == (0, 1, 0)
