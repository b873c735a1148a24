"""The Spark recipe: ``DataFrame.mapInArrow`` turns a DataFrame of log paths into findings,
with the same row schema as ``faultline.ray`` (``faultline.arrow.SPARK_SCHEMA``).

    from pyspark.sql import SparkSession
    import faultline.spark

    spark = SparkSession.builder.getOrCreate()
    paths = spark.createDataFrame([(p,) for p in faultline.spark.list_files("s3://bucket/logs/")], "path string")
    findings = paths.repartition(64).mapInArrow(faultline.spark.scan_partition, faultline.spark.SCHEMA)
    findings.where("root_cause").groupBy("signature").count().show()
    faultline.spark.counts(findings)      # {'diagnosed': ..., 'clean': ..., 'errored': ..., ...}

Each Python worker loads the embedded database once (Spark reuses its Python workers), and
files are streamed from any filesystem pyarrow opens (``s3://``, ``gs://``, ``hdfs://``,
local paths that every executor sees). Needs ``pyspark`` (3.4 or later: ``mapInArrow``) and
``pyarrow`` on the executors: ``pip install 'faultline[spark]'``.

For another database or filesystem, wrap ``scan_partition``:

    db = faultline.Database.load("/shared/faultline.fldb")          # pickled to each task
    fn = lambda batches: faultline.spark.scan_partition(batches, database=db)
"""

from __future__ import annotations

from typing import Any, Dict, Iterable, Iterator, List, Optional

from . import Database
from . import arrow as _arrow

#: The Spark DDL schema of the rows ``scan_partition`` yields.
SCHEMA: str = _arrow.SPARK_SCHEMA


def scan_partition(
    batches: Iterable[Any],
    *,
    database: Optional[Database] = None,
    path_column: str = "path",
    filesystem: Any = None,
) -> Iterator[Any]:
    """The ``mapInArrow`` function: Arrow batches with a ``path`` column in, Arrow batches
    of findings out (one row per finding; one row with null finding columns for an input
    without findings or that could not be read, its ``error`` set)."""
    return _arrow.scan_batches(
        batches, database=database, path_column=path_column, filesystem=filesystem
    )


def list_files(root: str, *, filesystem: Any = None, glob: Iterable[str] = ()) -> List[str]:
    """The files under ``root`` (sorted; ``glob`` filters names as ``--glob``), to build the
    DataFrame of paths on the driver. A root that does not exist, or that selects no input,
    raises ``faultline.InputError`` with the CLI's text (``faultline scan ROOT`` exits 2)."""
    return [p for p, _, _ in _arrow.list_files(root, filesystem=filesystem, glob=glob)]


def counts(findings: Any) -> Dict[str, int]:
    """The sweep's counts from the recipe's rows (a Spark DataFrame of ``SCHEMA``), as
    ``faultline scan --summary`` counts the same files: every input in one bucket by its exit
    status alone (the rows' ``bucket`` column, ``faultline::Bucket``'s rule), as
    ``{"diagnosed", "clean", "errored", "errored_diagnosed"}``."""
    got = {
        r["bucket"]: r["count"]
        for r in findings.select("input", "bucket").distinct().groupBy("bucket").count().collect()
    }
    out = {b: int(got.get(b, 0)) for b in ("diagnosed", "clean", "errored")}
    errored_roots = findings.where("bucket = 'errored' AND root_cause")
    out["errored_diagnosed"] = errored_roots.select("input").distinct().count()
    return out


__all__ = ["SCHEMA", "scan_partition", "list_files", "counts"]
