"""Archive sweeps on Ray Data: a dataset of log files becomes a dataset of findings.

Needs Ray Data and pyarrow: ``pip install 'faultline[ray]'``. This module imports without
them and says what to install when one of its functions is called.

    import ray, faultline.ray
    ray.init()                                            # or ray.init(address="auto")
    result = faultline.ray.sweep("s3://bucket/logs/2026-11/")
    print(result.summary)                                 # the table of `faultline scan --summary`
    result.findings.filter(lambda r: r["root_cause"]).write_parquet("s3://bucket/triage/")

Rows have the columns of ``faultline.arrow`` (``input, signature, category, title, line,
text, processes, count, database_version, error`` plus ``rank, role, root_cause``); in a
sweep ``input`` is the path relative to the sweep root, as the CLI's summary names it when
run inside that root.

How it runs: the file list is made on the driver (a local root is walked exactly as
``faultline scan ROOT`` walks it; a remote prefix is listed with pyarrow); the files are
scanned by Ray tasks (at most ``workers`` at once, one CPU each) on Ray's reused worker
processes, each of which loads the database once (the first time a task brings it) and
streams its files (never read whole into memory; ``.gz``
and ``.zst`` decoded as they are read). A file that cannot be read is a row carrying its
error, not a failed task.

Filesystems: paths are opened with ``pyarrow.fs.FileSystem.from_uri`` (local paths,
``s3://``, ``gs://``, ``hdfs://``; credentials from the usual environment: AWS_* variables or
instance roles for S3, GOOGLE_APPLICATION_CREDENTIALS for GCS, a Hadoop client with
``CLASSPATH`` and ``ARROW_LIBHDFS_DIR`` for HDFS), or with the ``filesystem`` you pass
(``pyarrow.fs.S3FileSystem(endpoint_override=...)`` for MinIO or another S3 stand-in).
"""

from __future__ import annotations

from typing import Any, List, Optional, Sequence, Tuple, Union

from . import Baseline, Database, Summary, summary as _summary
from . import arrow as _arrow

_INSTALL = (
    "faultline.ray needs Ray Data and pyarrow: pip install 'faultline[ray]' "
    "(or pip install 'ray[data]' pyarrow)"
)


def _ray() -> Any:
    try:
        import pyarrow  # noqa: F401
        import ray
        import ray.data  # noqa: F401
    except ImportError as e:
        raise ImportError(_INSTALL) from e
    return ray


def _scan_batch(
    batch: Any,
    *,
    database: Optional[Database],
    filesystem: Any,
    max_findings: int,
    slim: bool,
    baseline: Optional[Baseline] = None,
) -> Any:
    """A Ray task: scans a batch of files. Ray reuses its worker processes for tasks, and a
    database is loaded once per process (the embedded one, or the one passed, unpickled
    once: ``faultline._restore``), so a worker loads it once, not once per file or batch."""
    import os

    import pyarrow as pa

    db = database if database is not None else _arrow._embedded()
    out = []
    for path, name, walk_error in zip(
        batch.column("path").to_pylist(),
        batch.column("input").to_pylist(),
        batch.column("walk_error").to_pylist(),
    ):
        if walk_error is not None:
            report = _error_report(db, name, walk_error)
        else:
            report = _arrow.scan_file(
                db,
                path,
                name=name,
                filesystem=filesystem,
                max_findings=max_findings,
                baseline=baseline,
            )
        rows = _arrow.rows(report, name)
        if slim:
            worker = f"{os.getpid()} {_arrow.loads(db)}"
            for i, r in enumerate(rows):
                r["_report"] = _arrow.slim_json(report, name) if i == 0 else None
                r["_worker"] = worker if i == 0 else None
        out.extend(rows)
    sch = _arrow.schema()
    if slim:
        sch = sch.append(pa.field("_report", pa.string())).append(pa.field("_worker", pa.string()))
    return pa.Table.from_pylist(out, schema=sch)


def _error_report(db: Database, name: str, message: str) -> Any:
    from ._report import Report

    return Report(db._db.error_report(name, message))


def _inputs(
    paths: Union[str, Sequence[str]], filesystem: Any, glob: Sequence[str], relative: bool
) -> List[Tuple[str, str, Optional[str]]]:
    roots = [paths] if isinstance(paths, str) else list(paths)
    out = []
    for root in roots:
        for path, rel, error in _arrow.list_files(root, filesystem=filesystem, glob=glob):
            out.append((path, rel if relative else path, error))
    return out


def _dataset(
    paths: Any,
    *,
    database: Optional[Database],
    filesystem: Any,
    workers: Optional[int],
    files_per_batch: int,
    glob: Sequence[str],
    relative: bool,
    max_findings: int,
    slim: bool,
    baseline: Any = None,
    baseline_max_templates: int = 1_000_000,
) -> Any:
    ray = _ray()
    if baseline is not None and not isinstance(baseline, Baseline):
        # Loaded once on the driver: a bad baseline raises before any task starts, and its
        # warnings show here; tasks load it again once per worker process.
        db = database if database is not None else _arrow._embedded()
        baseline = db.load_baseline(baseline, max_templates=baseline_max_templates)
    if isinstance(paths, ray.data.Dataset):
        files = paths.map_batches(_with_names, batch_format="pyarrow")
    else:
        items = [
            {"path": p, "input": name, "walk_error": err}
            for p, name, err in _inputs(paths, filesystem, glob, relative)
        ]
        if not items:
            raise FileNotFoundError(f"no input was selected from {paths!r}")
        blocks = max(1, min(len(items), (len(items) + files_per_batch - 1) // files_per_batch))
        files = ray.data.from_items(items, override_num_blocks=blocks)
    if workers is None:
        workers = max(1, int(ray.cluster_resources().get("CPU", 1)))
    return files.map_batches(
        _scan_batch,
        fn_kwargs={
            "database": database,
            "filesystem": filesystem,
            "max_findings": max_findings,
            "slim": slim,
            "baseline": baseline,
        },
        batch_size=files_per_batch,
        batch_format="pyarrow",
        compute=ray.data.TaskPoolStrategy(size=workers),
        num_cpus=1,
    )


def _with_names(batch: Any) -> Any:
    import pyarrow as pa

    paths = batch.column("path")
    names = batch.column("input") if "input" in batch.column_names else paths
    return pa.table(
        {"path": paths, "input": names, "walk_error": pa.nulls(len(paths), pa.string())}
    )


def read_findings(
    paths: Any,
    *,
    database: Optional[Database] = None,
    filesystem: Any = None,
    workers: Optional[int] = None,
    files_per_batch: int = 16,
    glob: Sequence[str] = (),
    max_findings: int = 1000,
    baseline: Any = None,
    baseline_max_templates: int = 1_000_000,
) -> Any:
    """A Ray ``Dataset`` of findings (``faultline.arrow`` columns) for ``paths``: a file, a
    directory or prefix (walked), a list of them, or a Ray ``Dataset`` with a ``path``
    column (and optionally ``input``, the names to report). ``input`` is the path as listed.

    ``database``: a ``faultline.Database`` (default: the embedded one), loaded once per
    worker process. ``workers``: tasks run at once (default: the cluster's CPUs). ``glob``:
    file-name globs a walk keeps (``--glob``). ``baseline``: good runs of the same job (local
    paths, or a loaded ``faultline.Baseline``), as ``--baseline``: loaded on the driver first
    (a bad one raises, its warnings show there), then once per worker process. Lazy, as Ray
    datasets are.
    """
    return _dataset(
        paths,
        database=database,
        filesystem=filesystem,
        workers=workers,
        files_per_batch=files_per_batch,
        glob=glob,
        relative=False,
        max_findings=max_findings,
        slim=False,
        baseline=baseline,
        baseline_max_templates=baseline_max_templates,
    )


class Sweep:
    """The result of ``sweep``: ``findings`` (a materialized Ray ``Dataset``, one row per
    finding, ``input`` relative to the root), ``summary`` (a ``faultline.Summary``: its
    ``signatures`` are the per-signature table, ``str(summary)`` the CLI's text) and
    ``table`` (the per-signature table as a ``pyarrow.Table``); ``database_loads``, worker
    process id -> times it loaded the database."""

    def __init__(self, findings: Any, summary: Summary, database_loads: dict) -> None:
        self.findings = findings
        self.summary = summary
        #: Worker process id -> times it loaded the sweep's database (1: once per worker).
        self.database_loads = database_loads

    @property
    def table(self) -> Any:
        """The per-signature table (``signature, category, title, first_findings, inputs,
        hits, first_input, last_input``) as a ``pyarrow.Table``."""
        return self.summary.to_arrow()

    def __repr__(self) -> str:
        return f"<faultline.ray.Sweep {self.summary!r}>"


def sweep(
    root: Union[str, Sequence[str]],
    *,
    database: Optional[Database] = None,
    filesystem: Any = None,
    workers: Optional[int] = None,
    files_per_batch: int = 16,
    glob: Sequence[str] = (),
    max_findings: int = 1000,
    baseline: Any = None,
    baseline_max_templates: int = 1_000_000,
) -> Sweep:
    """Sweeps every file under ``root`` (local directory, ``s3://bucket/prefix``, ...) in
    one pass on Ray Data and returns a ``Sweep``: the findings dataset, and the summary that
    ``faultline scan --summary`` prints for the same files (the same Rust code builds it,
    from the workers' reports). Paths are relative to ``root``. ``baseline``: as for
    ``read_findings``."""
    ds = _dataset(
        root,
        database=database,
        filesystem=filesystem,
        workers=workers,
        files_per_batch=files_per_batch,
        glob=glob,
        relative=True,
        max_findings=max_findings,
        slim=True,
        baseline=baseline,
        baseline_max_templates=baseline_max_templates,
    ).materialize()
    lines: List[str] = []
    loads: dict = {}
    # Read from the materialized blocks on the driver (no second pass of tasks).
    for batch in ds.iter_batches(batch_format="pyarrow", batch_size=None):
        lines.extend(x for x in batch.column("_report").to_pylist() if x is not None)
        for w in batch.column("_worker").to_pylist():
            if w is not None:
                pid, n = w.split()
                loads[int(pid)] = max(loads.get(int(pid), 0), int(n))
    return Sweep(ds.drop_columns(["_report", "_worker"]), _summary(lines), loads)


__all__ = ["read_findings", "sweep", "Sweep"]
