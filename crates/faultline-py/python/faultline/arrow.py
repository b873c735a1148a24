"""Findings as Arrow rows: the schema and the scanning step shared by ``faultline.ray`` and
``faultline.spark``.

A dataset of log files becomes a dataset of findings, one row per finding, with the columns

==================  =============  =====================================================
column              type           meaning
==================  =============  =====================================================
input               string         the file (relative to the sweep root in a sweep)
signature           string         signature id; null for an unclassified finding
category            string         the finding's category
title               string         the finding's title
line                int64          first occurrence, 1-based
text                string         the first occurrence's line
processes           list<string>   process tags it came from (the first 64)
count               int64          lines folded into the finding
database_version    string         the signature database's version
error               string         null, or why the input could not be read to its end
rank                int64          1-based rank in its report (1 is the first finding)
role                string         cause, unclassified, symptom or noise
root_cause          bool           whether this finding is the input's root cause
bucket              string         the input's count: diagnosed, clean or errored
==================  =============  =====================================================

The first ten are the issue's row contract; ``rank``, ``role`` and ``root_cause`` say which
row is the diagnosis; ``bucket`` is the input's exit status alone (``Report.bucket``), so
that every row of one input says which of a sweep's three counts it is in. Every input gives at least one row: an input without findings (clean,
empty, or unreadable) gives one row whose finding columns are null (``line`` null tells it
from an unclassified finding) and whose ``error`` says what went wrong, if anything. A
corrupt or unreadable file is such a row, never a failed job.

Files are opened with pyarrow's filesystems (local paths, ``s3://``, ``gs://``,
``hdfs://``, or the ``filesystem`` given) and streamed: a remote file is read in blocks of
at most 4 MiB through ``Database.scan_reader``, a local one is mapped or streamed by the
library as the CLI does; ``.gz`` and ``.zst`` are recognised by their first bytes.
"""

from __future__ import annotations

import json
import os
from typing import Any, Dict, Iterable, Iterator, List, Optional, Tuple

from . import Database, InputError, Report

#: The row columns, in order (names and Arrow types: ``schema()``).
COLUMNS: Tuple[str, ...] = (
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
    "rank",
    "role",
    "root_cause",
    "bucket",
)

#: The same schema as a Spark DDL string, for ``DataFrame.mapInArrow(fn, SPARK_SCHEMA)``.
SPARK_SCHEMA = (
    "input string, signature string, category string, title string, line long, text string, "
    "processes array<string>, count long, database_version string, error string, "
    "rank long, role string, root_cause boolean, bucket string"
)


def schema() -> Any:
    """The findings schema as a ``pyarrow.Schema``."""
    import pyarrow as pa

    return pa.schema(
        [
            ("input", pa.string()),
            ("signature", pa.string()),
            ("category", pa.string()),
            ("title", pa.string()),
            ("line", pa.int64()),
            ("text", pa.string()),
            ("processes", pa.list_(pa.string())),
            ("count", pa.int64()),
            ("database_version", pa.string()),
            ("error", pa.string()),
            ("rank", pa.int64()),
            ("role", pa.string()),
            ("root_cause", pa.bool_()),
            ("bucket", pa.string()),
        ]
    )


def rows(report: Report, input: Optional[str] = None) -> List[Dict[str, Any]]:
    """A report's rows (at least one): ``input`` replaces the report's input name."""
    d = report._data
    name = input if input is not None else d["input"]
    version = d["database"]["version"]
    error = d.get("error")
    root = report.root_cause
    bucket = report.bucket
    out = []
    for f in d.get("findings", []):
        out.append(
            {
                "input": name,
                "signature": f.get("signature"),
                "category": f.get("category"),
                "title": f.get("title"),
                "line": f.get("line"),
                "text": f.get("text"),
                "processes": f.get("processes", []),
                "count": f.get("count"),
                "database_version": version,
                "error": error,
                "rank": f.get("rank"),
                "role": f.get("role"),
                "root_cause": root is not None and f.get("rank") == root.rank,
                "bucket": bucket,
            }
        )
    if not out:
        out.append(
            {
                "input": name,
                "signature": None,
                "category": None,
                "title": None,
                "line": None,
                "text": None,
                "processes": [],
                "count": None,
                "database_version": version,
                "error": error,
                "rank": None,
                "role": None,
                "root_cause": False,
                "bucket": bucket,
            }
        )
    return out


def table(reports: Iterable[Report]) -> Any:
    """The findings of many reports as one ``pyarrow.Table``."""
    import pyarrow as pa

    out: List[Dict[str, Any]] = []
    for r in reports:
        out.extend(rows(r))
    return pa.Table.from_pylist(out, schema=schema())


def slim_json(report: Report, input: str) -> str:
    """The parts of a report a summary needs, as a JSON line named ``input`` (the other
    fields stay on the worker)."""
    d = report._data
    return json.dumps(
        {
            "input": input,
            "database": d["database"],
            "error": d.get("error"),
            "binary": d.get("binary", False),
            "bytes": d.get("bytes", 0),
            "lines": d.get("lines", 0),
            "ended_early": d.get("ended_early", False),
            "failed": d.get("failed"),
            "findings": [
                {
                    "signature": f.get("signature"),
                    "role": f.get("role"),
                    "title": f.get("title", ""),
                    "category": f.get("category", ""),
                    "count": f.get("count", 0),
                    "survivable": f.get("survivable", False),
                }
                for f in d.get("findings", [])
            ],
        }
    )


def _is_local(path: str) -> bool:
    return "://" not in path or path.startswith("file://")


def scan_file(
    db: Database,
    path: str,
    *,
    name: Optional[str] = None,
    filesystem: Any = None,
    max_findings: int = 1000,
    baseline: Any = None,
) -> Report:
    """Scans one file, local or remote, on one thread; never raises for the input itself:
    a file that cannot be opened gives a report with ``error`` set. ``name`` becomes the
    report's ``input`` (default: ``path``); ``baseline``, a loaded ``faultline.Baseline``
    or None."""
    name = name if name is not None else path
    if filesystem is None and _is_local(path):
        local = path[len("file://") :] if path.startswith("file://") else path
        try:
            report = db.scan_path(
                local, threads=1, max_findings=max_findings, baseline=baseline
            )
        except InputError as e:
            return Report(db._db.error_report(name, str(e).replace(local, name, 1)))
        if name != report.input:
            # The report names the input as the sweep does, its error message too.
            d = report.to_dict()
            d["input"] = name
            d.pop("input_raw", None)
            if d.get("error") and d["error"].startswith(local + ": "):
                d["error"] = name + d["error"][len(local) :]
            return Report(json.dumps(d))
        return report
    try:
        fs, inner = _resolve(path, filesystem)
        # compression=None: the bytes reach the scanner as they are, which recognises
        # gzip and zstd by their magic bytes (as the CLI does), not by the file's name.
        stream = fs.open_input_stream(inner, compression=None)
    except Exception as e:  # a missing object, a denied bucket: a row, not a failed job
        return Report(db._db.error_report(name, f"{name}: {e}"))
    with stream:
        try:
            return db.scan_reader(
                stream, name=name, max_findings=max_findings, baseline=baseline
            )
        except InputError as e:
            return Report(db._db.error_report(name, str(e)))


def _resolve(path: str, filesystem: Any) -> Tuple[Any, str]:
    import pyarrow.fs as pafs

    if filesystem is None:
        return pafs.FileSystem.from_uri(path)
    if "://" in path:
        path = path.split("://", 1)[1]
    return filesystem, path


def list_files(root: str, *, filesystem: Any = None, glob: Iterable[str] = ()) -> List[Tuple[str, str, Optional[str]]]:
    """The files under ``root`` (a directory, a prefix, or one file), sorted by path, as
    ``(path, relative, error)``: ``relative`` is the path below ``root``. A local root is
    walked by the library exactly as ``faultline scan ROOT`` walks it; a remote one with
    pyarrow (every object under the prefix, less those ``faultline scan`` skips by name:
    ``.md``, ``.yaml``, ``.toml``, ... when no ``glob`` is given). ``glob`` filters file names
    as ``--glob``.

    A root that does not exist raises ``InputError`` (``ROOT: No such file or directory``, the
    CLI's line for a local root), and so does a root that selects no input (``no input was
    selected from ROOT``, the CLI's text), as ``faultline scan ROOT`` exits 2 for both."""
    return [(p, rel, err) for p, rel, err, _ in list_sized([root], filesystem=filesystem, glob=glob)]


def list_sized(
    roots: Iterable[str], *, filesystem: Any = None, glob: Iterable[str] = ()
) -> List[Tuple[str, str, Optional[str], int]]:
    """``list_files`` of several roots together, each file with its size in bytes (0 for a
    path that could not be examined): ``(path, relative, error, bytes)``. Only all the roots
    together selecting nothing raises, as for the CLI given several paths."""
    from . import _native

    roots = [os.fspath(r) for r in roots]
    glob = list(glob)
    out: List[Tuple[str, str, Optional[str], int]] = []
    for root in roots:
        out.extend(_list_root(root, filesystem, glob))
    if not out:
        e = InputError(_native.nothing_selected(roots, glob, []))
        e.path = roots[0] if roots else None
        raise e
    return out


def _list_root(root: str, filesystem: Any, glob: List[str]) -> List[Tuple[str, str, Optional[str], int]]:
    if filesystem is None and _is_local(root):
        from . import _native

        local = root[len("file://") :] if root.startswith("file://") else root
        out = []
        for path, relative, error, size in _native.walk_inputs([local], glob=glob):
            if error is not None and path.startswith(local.rstrip("/") + "/"):
                relative = path[len(local.rstrip("/")) + 1 :]
            out.append((path, relative, error, size))
        return out
    import fnmatch

    import pyarrow.fs as pafs

    from . import _native

    fs, inner = _resolve(root, filesystem)
    scheme = root.split("://", 1)[0] + "://" if "://" in root else ""
    info = fs.get_file_info(inner)
    if info.type == pafs.FileType.NotFound:
        e = InputError(f"{root}: No such file or directory")
        e.path = root
        raise e
    if info.type == pafs.FileType.File:
        return [(root, inner.rsplit("/", 1)[-1], None, info.size or 0)]
    prefix = inner.rstrip("/")
    found = fs.get_file_info(pafs.FileSelector(prefix, recursive=True))
    out = []
    for f in sorted(found, key=lambda f: f.path):
        if f.type != pafs.FileType.File:
            continue
        relative = f.path[len(prefix) + 1 :] if f.path.startswith(prefix + "/") else f.path
        name = relative.rsplit("/", 1)[-1]
        if glob and not any(fnmatch.fnmatchcase(name, g) for g in glob):
            continue
        if not glob and _native.not_a_log_by_name(name) is not None:
            continue
        out.append((scheme + f.path, relative, None, f.size or 0))
    return out


def scan_batches(
    batches: Iterable[Any],
    *,
    database: Optional[Database] = None,
    path_column: str = "path",
    input_column: Optional[str] = None,
    filesystem: Any = None,
    max_findings: int = 1000,
    baseline: Any = None,
) -> Iterator[Any]:
    """Turns Arrow record batches of file paths (column ``path_column``; the names to
    report in ``input_column`` if given) into record batches of findings (``schema()``).
    This is the ``mapInArrow`` function body; ``database`` defaults to the embedded one,
    loaded once per process; ``baseline``, a loaded ``faultline.Baseline`` (it pickles as its
    paths and is loaded once per process)."""
    import pyarrow as pa

    db = database if database is not None else _embedded()
    sch = schema()
    for batch in batches:
        paths = batch.column(path_column).to_pylist()
        names = batch.column(input_column).to_pylist() if input_column else paths
        out: List[Dict[str, Any]] = []
        for path, name in zip(paths, names):
            if path is None:
                continue
            report = scan_file(
                db,
                path,
                name=name,
                filesystem=filesystem,
                max_findings=max_findings,
                baseline=baseline,
            )
            out.extend(rows(report, name))
        yield pa.RecordBatch.from_pylist(out, schema=sch)


def _embedded() -> Database:
    """The embedded database, loaded once per process."""
    from . import _restore

    return _restore("embedded")


def loads(db: Database) -> int:
    """How many times this process has loaded ``db`` for shipped tasks (1 once it has: a
    database is loaded once per process however many tasks bring it)."""
    from . import _LOADS

    key = tuple(db._source) + (None,) * (2 - len(db._source))
    return _LOADS.get(key, 0)
