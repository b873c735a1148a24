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
``faultline scan ROOT`` walks it; a remote prefix is listed with pyarrow; a root that does not
exist, or that selects no input, raises ``faultline.InputError`` with the CLI's text); the
files are cut into blocks of about equal bytes, each scanned by one Ray task (at most
``workers`` at once, one CPU each) on Ray's reused worker
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
    import ray

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
            task = ray.get_runtime_context().get_task_id()
            worker = f"{os.getpid()} {_arrow.loads(db)} {task}"
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
) -> List[Tuple[str, str, Optional[str], int]]:
    """``(path, name, walk_error, bytes)`` of every input under ``paths``; a root that does
    not exist, or roots that select no input, raise ``InputError`` with the CLI's text."""
    roots = [paths] if isinstance(paths, str) else list(paths)
    out = []
    for path, rel, error, size in _arrow.list_sized(roots, filesystem=filesystem, glob=glob):
        out.append((path, rel if relative else path, error, size))
    return out


def _blocks(items: List[Tuple[Any, ...]], workers: int, files_per_batch: int) -> List[List[Any]]:
    """The inputs cut, in path order, into blocks of about ``total bytes / (4 * workers)``
    each (a larger file is a block of its own) and at most ``files_per_batch`` files: each
    block is one Ray task, so every CPU gets work whatever the sizes (one block of all the
    files left one CPU of two idle). The last field of each item is its size in bytes."""
    total = sum(it[-1] for it in items)
    target = max(1, total // (4 * max(1, workers)))
    blocks: List[List[Any]] = []
    block: List[Any] = []
    size = 0
    for it in items:
        if block and (size + it[-1] > target or len(block) >= files_per_batch):
            blocks.append(block)
            block, size = [], 0
        block.append(it)
        size += it[-1]
    if block:
        blocks.append(block)
    return blocks


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
    import pyarrow as pa

    if workers is None:
        workers = max(1, int(ray.cluster_resources().get("CPU", 1)))
    batch_size: Optional[int] = files_per_batch
    if isinstance(paths, ray.data.Dataset):
        files = paths.map_batches(_with_names, batch_format="pyarrow")
    else:
        # One Arrow table per block, one task per block (batch_size None: a block is a batch).
        tables = [
            pa.table(
                {
                    "path": [it[0] for it in block],
                    "input": [it[1] for it in block],
                    "walk_error": pa.array([it[2] for it in block], pa.string()),
                }
            )
            for block in _blocks(_inputs(paths, filesystem, glob, relative), workers, files_per_batch)
        ]
        files = ray.data.from_arrow(tables)
        batch_size = None
    return files.map_batches(
        _scan_batch,
        fn_kwargs={
            "database": database,
            "filesystem": filesystem,
            "max_findings": max_findings,
            "slim": slim,
            "baseline": baseline,
        },
        batch_size=batch_size,
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
    process id -> times it loaded the database; ``tasks``, how many Ray tasks scanned."""

    def __init__(
        self, findings: Any, summary: Summary, database_loads: dict, tasks: int = 0
    ) -> None:
        self.findings = findings
        self.summary = summary
        #: Worker process id -> times it loaded the sweep's database (1: once per worker).
        self.database_loads = database_loads
        #: How many Ray tasks scanned the inputs (one per block of about equal bytes).
        self.tasks = tasks

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
    tasks = set()
    # Read from the materialized blocks on the driver (no second pass of tasks).
    for batch in ds.iter_batches(batch_format="pyarrow", batch_size=None):
        lines.extend(x for x in batch.column("_report").to_pylist() if x is not None)
        for w in batch.column("_worker").to_pylist():
            if w is not None:
                pid, n, task = w.split()
                loads[int(pid)] = max(loads.get(int(pid), 0), int(n))
                tasks.add(task)
    return Sweep(ds.drop_columns(["_report", "_worker"]), _summary(lines), loads, len(tasks))


__all__ = ["read_findings", "sweep", "Sweep"]
