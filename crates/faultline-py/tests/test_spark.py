"""The mapInArrow recipe on PySpark in local mode: the same rows as the library's reports."""

from __future__ import annotations

import faultline
import faultline.arrow


def test_map_in_arrow_recipe(spark, mixed_dir):
    import faultline.spark

    files = faultline.spark.list_files(str(mixed_dir))
    paths = spark.createDataFrame([(p,) for p in files + [str(mixed_dir / "missing.log")]], "path string")
    findings = paths.repartition(2).mapInArrow(faultline.spark.scan_partition, faultline.spark.SCHEMA)
    assert findings.columns == list(faultline.arrow.COLUMNS)
    got = sorted(
        (r.asDict() for r in findings.collect()),
        key=lambda r: (r["input"], r["rank"] if r["rank"] is not None else 0),
    )
    db = faultline.Database.embedded()
    expected = []
    for r in db.scan_paths(files):
        expected.extend(faultline.arrow.rows(r))
    expected.sort(key=lambda r: (r["input"], r["rank"] if r["rank"] is not None else 0))
    # A path of the DataFrame that does not exist is a row with its error (checked below).
    assert [r for r in got if not r["input"].endswith("missing.log")] == expected
    roots = findings.where("root_cause").groupBy("signature").count().collect()
    assert sum(r["count"] for r in roots) == sum(
        r.root_cause is not None for r in db.scan_paths(files)
    )
    missing = [r for r in got if r["input"].endswith("missing.log")]
    assert missing[0]["error"].endswith("No such file or directory (os error 2)")
