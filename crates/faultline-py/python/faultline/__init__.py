"""faultline: name the root cause of a failed ML-serving or GPU job from its logs.

A versioned database of failure signatures (vLLM, SGLang, TGI, TensorRT-LLM, PyTorch, NCCL,
CUDA, Ray, Kubernetes, Slurm, the NVIDIA driver...) compiled into a multi-pattern scanner
written in Rust. The scan runs with the GIL released.

    >>> import faultline
    >>> db = faultline.Database.embedded()
    >>> report = db.scan_path("examples/kimi-k2.5-launch.log")
    >>> report.root_cause.signature, report.root_cause.line
    ('vllm.attention.mla-fp8-kv-no-backend', 2909)
    >>> print(faultline.summary(db.scan_paths(["logs/"], threads=2)))   # the CLI's --summary table

Main names:

- ``Database``: ``Database.embedded()``, ``Database.from_dir(path)``, ``Database.load(archive)``;
  ``scan_path``, ``scan_bytes``, ``scan_reader`` (a binary file object, streamed),
  ``scan_paths`` (many inputs, directories walked as the CLI does).
- ``Report`` / ``Finding``: the fields of ``faultline scan --format json``; ``root_cause``,
  ``to_dict()``, ``to_json()``.
- ``summary(reports)``: the per-signature table of ``faultline scan --summary`` (``Summary``).
- Exceptions: ``FaultlineError`` and its subclasses ``SignatureError``, ``InputError``
  (also an ``OSError``), ``ArchiveError``, ``LimitError``, ``ReportError``, ``UsageError``.
- ``faultline.ray``: sweeps on Ray Data (``pip install 'faultline[ray]'``);
  ``faultline.spark``: the ``mapInArrow`` recipe; ``faultline.arrow``: the row schema both use.
- ``__version__`` (the package), ``DATABASE`` (the embedded database's name, version, hash).
"""

from __future__ import annotations

import os
import warnings
from typing import Any, Dict, Iterable, List, Optional, Sequence, Union

from . import _native
from ._errors import (
    ArchiveError,
    FaultlineError,
    FaultlineWarning,
    InputError,
    LimitError,
    ReportError,
    SignatureError,
    UsageError,
)
from ._report import Finding, Report, Summary

__version__: str = _native.__version__

#: The embedded database's ``(name, version, hash)``, known without loading it.
DATABASE = tuple(_native.embedded_identity())

#: Most threads a scan takes (``threads`` runs 1..=MAX_THREADS, as the CLI's ``-j``).
MAX_THREADS: int = _native.MAX_THREADS

#: The JSON contract's ``schema_version`` this package writes.
SCHEMA_VERSION: int = _native.SCHEMA_VERSION

#: The summary's ``schema_version`` (2: counts by exit status).
SUMMARY_SCHEMA_VERSION: int = _native.SUMMARY_SCHEMA_VERSION

PathLike = Union[str, "os.PathLike[str]"]

#: The default of ``baseline_max_templates`` (the CLI's ``--baseline-max-templates``).
BASELINE_MAX_TEMPLATES = 1_000_000


class Baseline:
    """Good runs of the same job, as line templates (the CLI's ``--baseline GOOD``): a finding
    whose first line's template a good run printed too is ``in_baseline`` and ranks after the
    new ones of its kind; the exit status (``report.failed``) never changes.

    Made by ``Database.load_baseline(paths)``, or implicitly by a ``scan_*`` call given
    ``baseline=paths``; a loaded one is reused by every scan it is given to (load it once
    for many scans). It pickles as the paths it was loaded from: a Ray task that brings it
    loads it once per worker process (warnings are shown on the driver only).
    """

    __slots__ = ("_native", "_db", "paths", "max_templates")

    def __init__(self, native: Any, db: "Database", paths: List[str], max_templates: int) -> None:
        self._native = native
        self._db = db
        #: The baselines as given (files or directories).
        self.paths = paths
        #: At most this many templates are kept (the first seen).
        self.max_templates = max_templates

    @property
    def templates(self) -> int:
        """Distinct line templates held."""
        return self._native.templates

    @property
    def info(self) -> Dict[str, Any]:
        """What a report made against it says in ``baseline``: ``inputs`` (the good runs'
        files), ``templates``, ``templates_dropped``."""
        import json

        return json.loads(self._native.info_json())

    def __reduce__(self) -> Any:
        return (_restore_baseline, (self._db, tuple(self.paths), self.max_templates))

    def __repr__(self) -> str:
        return f"<faultline.Baseline {self.paths!r}, {self.templates} templates>"


BaselineArg = Union[None, Baseline, PathLike, Iterable[PathLike]]


class Database:
    """A compiled signature database, ready to scan.

    Get one with ``Database.embedded()`` (the set built into the package, loaded once per
    process), ``Database.from_dir(path)`` (a signature directory with its ``db.toml``) or
    ``Database.load(path)`` (an archive written by ``faultline db compile``). A database is
    immutable and safe to share between threads; it pickles as the way it was made (the
    receiving process loads it again, once: later copies reuse that load).

    Every ``scan_*`` method takes the same options as ``faultline scan``:
    ``threads`` (1..=1024, default every core; the CLI's ``-j``), ``all`` (keep every matched
    line in ``report.matches``: ``--all``), ``max_findings`` (default 1000, 0 no limit) and
    ``max_line_bytes`` (default 64 MiB, at least 4096).
    """

    __slots__ = ("_db", "_source")

    def __init__(self, native: Any, source: tuple) -> None:
        self._db = native
        self._source = source

    @classmethod
    def embedded(cls) -> "Database":
        """The database built into this package (2027.01 and later sets: ``DATABASE``)."""
        return cls(_native.Database.embedded(), ("embedded",))

    @classmethod
    def from_dir(cls, path: PathLike) -> "Database":
        """Compiles a signature directory (``db.toml`` and ``*.toml`` files).

        Raises ``SignatureError`` naming every problem as ``file:line:column: reason``
        (``.problems`` lists them all), ``InputError`` if the directory cannot be read,
        ``LimitError`` if the set is too large to compile.
        """
        path = os.fspath(path)
        return cls(_native.Database.from_dir(path), ("dir", path))

    @classmethod
    def load(cls, path: PathLike) -> "Database":
        """Opens a compiled archive (``faultline db compile DIR -o FILE``); it is validated
        in full. Raises ``ArchiveError`` (corrupt, truncated, another format) or
        ``InputError`` (missing, unreadable)."""
        path = os.fspath(path)
        return cls(_native.Database.load(path), ("archive", path))

    @property
    def name(self) -> str:
        """The database's name (``db.toml``)."""
        return self._db.name

    @property
    def version(self) -> str:
        """The database's version, e.g. ``2027.01.0``."""
        return self._db.version

    @property
    def hash(self) -> str:
        """The content hash of the compiled set (the one reports and ``--version`` show)."""
        return self._db.hash

    @property
    def signature_count(self) -> int:
        """How many signatures the database holds."""
        return self._db.signature_count

    def load_baseline(
        self,
        paths: Union[PathLike, Iterable[PathLike]],
        *,
        max_templates: int = BASELINE_MAX_TEMPLATES,
        stdin: bool = False,
        _inputs: Sequence[str] = (),
    ) -> Baseline:
        """Loads good runs (files, or directories walked as the CLI walks them) as a
        ``Baseline``, once, for any number of scans (``baseline=`` of every ``scan_*``).

        A baseline that cannot be read raises (``InputError``, its path and byte offset), as
        ``--baseline`` exits 2 before any input is scanned. A good run that itself failed, and
        a baseline that holds no template, are used all the same, each with a
        ``FaultlineWarning`` (``warnings.warn``) whose text is the CLI's warning line. A path
        ``-`` is the file ``./-``; only with ``stdin=True`` is it standard input.
        """
        if isinstance(paths, (str, os.PathLike)):
            paths = [paths]
        goods = [os.fspath(p) for p in paths]
        native = self._db.load_baseline(
            goods, list(_inputs), max_templates=max_templates, stdin=stdin
        )
        for line in native.warnings:
            warnings.warn(line, FaultlineWarning, stacklevel=3)
        return Baseline(native, self, goods, max_templates)

    def _baseline(
        self, baseline: BaselineArg, max_templates: int, inputs: Sequence[str], stdin: bool
    ) -> Any:
        """The native baseline a scan is given: None, a loaded ``Baseline``, or paths loaded
        now (the stdin-twice check covers ``inputs``)."""
        if baseline is None:
            return None
        if isinstance(baseline, Baseline):
            return baseline._native
        return self.load_baseline(
            baseline, max_templates=max_templates, stdin=stdin, _inputs=inputs
        )._native

    def scan_path(
        self,
        path: PathLike,
        *,
        threads: Optional[int] = None,
        all: bool = False,
        max_findings: int = 1000,
        max_line_bytes: Optional[int] = None,
        stdin: bool = False,
        baseline: BaselineArg = None,
        baseline_max_templates: int = BASELINE_MAX_TEMPLATES,
    ) -> Report:
        """Scans one file (mapped, or streamed when compressed: ``.gz``/``.zst``/UTF-16
        are recognised by their first bytes) and returns its ``Report``.

        A path that cannot be opened (missing, unreadable, a directory) raises
        ``InputError``; a read error part-way through gives a report with ``error`` set.
        The path ``-`` is the file ``./-``; only with ``stdin=True`` is it standard input.
        ``baseline``: good runs of the same job (paths, or a loaded ``Baseline``), as
        ``--baseline``; see ``load_baseline``.
        """
        path = os.fspath(path)
        native = self._baseline(baseline, baseline_max_templates, [path], stdin)
        return Report(
            self._db.scan_path(
                path,
                threads=threads,
                all=all,
                max_findings=max_findings,
                max_line_bytes=max_line_bytes,
                stdin=stdin,
                baseline=native,
            )
        )

    def scan_bytes(
        self,
        data: Union[bytes, bytearray, memoryview],
        *,
        name: str = "<bytes>",
        threads: Optional[int] = None,
        all: bool = False,
        max_findings: int = 1000,
        max_line_bytes: Optional[int] = None,
        baseline: BaselineArg = None,
        baseline_max_templates: int = BASELINE_MAX_TEMPLATES,
    ) -> Report:
        """Scans bytes in memory; ``name`` becomes the report's ``input``. Compressed
        (gzip, zstd) and UTF-16 bytes are decoded as a file's would be. Anything but
        ``bytes``, ``bytearray`` or ``memoryview`` raises ``TypeError``.

        The data is read in place, never copied (a memoryview of an ``mmap`` included): a
        ``bytearray`` cannot be resized and an ``mmap`` not closed while it is scanned, and
        another thread must not write into it meanwhile. A memoryview that is not
        C-contiguous is copied first. ``baseline``: as for ``scan_path``."""
        native = self._baseline(baseline, baseline_max_templates, [], False)
        return Report(
            self._db.scan_bytes(
                data,
                name,
                threads=threads,
                all=all,
                max_findings=max_findings,
                max_line_bytes=max_line_bytes,
                baseline=native,
            )
        )

    def scan_reader(
        self,
        fileobj: Any,
        *,
        name: Optional[str] = None,
        all: bool = False,
        max_findings: int = 1000,
        max_line_bytes: Optional[int] = None,
        baseline: BaselineArg = None,
        baseline_max_templates: int = BASELINE_MAX_TEMPLATES,
    ) -> Report:
        """Scans a binary file object (anything with ``read(n)`` returning bytes: an open
        file, ``io.BytesIO``, a pyarrow or fsspec stream of a remote file), streamed in
        blocks of at most 4 MiB: memory stays bounded whatever its size. ``.gz``/``.zst``
        streams are decoded. ``name`` defaults to ``fileobj.name`` when it is a string.

        An exception from ``read()`` part-way through gives a report with ``error`` set
        (``name: at byte offset N: ...``), as a read error does in the CLI; one on the very
        first read raises ``InputError``. A text-mode file raises ``TypeError``.
        ``baseline``: as for ``scan_path``.
        """
        if name is None:
            n = getattr(fileobj, "name", None)
            name = n if isinstance(n, str) else "<reader>"
        native = self._baseline(baseline, baseline_max_templates, [], False)
        return Report(
            self._db.scan_reader(
                fileobj,
                name,
                threads=1,
                all=all,
                max_findings=max_findings,
                max_line_bytes=max_line_bytes,
                baseline=native,
            )
        )

    def scan_paths(
        self,
        paths: Union[PathLike, Iterable[PathLike]],
        *,
        threads: Optional[int] = None,
        all: bool = False,
        max_findings: int = 1000,
        max_line_bytes: Optional[int] = None,
        glob: Sequence[str] = (),
        exclude: Sequence[str] = (),
        stdin: bool = False,
        baseline: BaselineArg = None,
        baseline_max_templates: int = BASELINE_MAX_TEMPLATES,
    ) -> List[Report]:
        """Scans files and directories (walked recursively, sorted, each file once) on
        ``threads`` threads, as ``faultline scan -j N PATH...`` does; returns the reports in
        the CLI's order. One bad input never raises: its report carries the error.
        ``glob``/``exclude`` filter a directory walk as ``--glob``/``--exclude`` do (an
        invalid glob raises ``UsageError``). FIFOs, sockets and symlink loops found in a
        walk are skipped, as by the CLI. A path ``-`` is the file ``./-``; only with
        ``stdin=True`` is it standard input. Thread pools are reused across calls, at most
        four (one per ``threads`` value, the least recently used let go). ``baseline``: good
        runs every input is compared with (paths, or a loaded ``Baseline``), loaded once
        before any input is scanned, as ``--baseline``.
        """
        if isinstance(paths, (str, os.PathLike)):
            paths = [paths]
        paths = [os.fspath(p) for p in paths]
        native = self._baseline(baseline, baseline_max_templates, paths, stdin)
        return [
            Report(j)
            for j in self._db.scan_paths(
                paths,
                threads=threads,
                all=all,
                max_findings=max_findings,
                max_line_bytes=max_line_bytes,
                glob=list(glob),
                exclude=list(exclude),
                stdin=stdin,
                baseline=native,
            )
        ]

    def __reduce__(self) -> Any:
        return (_restore, self._source)

    def __repr__(self) -> str:
        return (
            f"<faultline.Database {self.name} {self.version} ({self.hash}), "
            f"{self.signature_count} signatures>"
        )


#: Databases unpickled in this process, by how they were made: a database shipped to a
#: worker (a Ray task, a Spark task) is loaded there once, however many tasks bring it.
_RESTORED: Dict[tuple, Database] = {}
#: How many times this process loaded each of those (1 each: the memo works).
_LOADS: Dict[tuple, int] = {}


def _restore(kind: str, path: Optional[str] = None) -> Database:
    key = (kind, path)
    db = _RESTORED.get(key)
    if db is None:
        if kind == "embedded":
            db = Database.embedded()
        elif kind == "dir":
            db = Database.from_dir(path)  # type: ignore[arg-type]
        else:
            db = Database.load(path)  # type: ignore[arg-type]
        _RESTORED[key] = db
        _LOADS[key] = _LOADS.get(key, 0) + 1
    return db


#: Baselines unpickled in this process, by database, paths and bound: a baseline shipped to
#: a worker is loaded there once, however many tasks bring it.
_BASELINES: Dict[tuple, Baseline] = {}


def _restore_baseline(db: Database, paths: tuple, max_templates: int) -> Baseline:
    key = (db._source, paths, max_templates)
    b = _BASELINES.get(key)
    if b is None:
        # The driver showed the warnings when it loaded the baseline first.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FaultlineWarning)
            b = db.load_baseline(list(paths), max_templates=max_templates)
        _BASELINES[key] = b
    return b


def summary(
    reports: Iterable[Union[Report, dict, str]], *, allow_mixed_databases: bool = False
) -> Summary:
    """The summary of many reports, computed by the same Rust code as ``faultline scan
    --summary`` and ``faultline summary``: ``str(result)`` is the CLI's table.

    ``reports`` may hold ``Report`` objects, their ``to_dict()`` dicts or JSON lines (the
    output of ``faultline scan --format json``). Inputs are sorted by path and a repeated
    input counts once. Reports made with different databases raise ``UsageError`` unless
    ``allow_mixed_databases``; a JSON line that is not a report raises ``ReportError``.
    """
    import json

    lines: List[str] = []
    for r in reports:
        if isinstance(r, Report):
            lines.append(r.to_json())
        elif isinstance(r, dict):
            lines.append(json.dumps(r))
        elif isinstance(r, str):
            lines.append(r.replace("\n", " "))
        else:
            raise TypeError(
                f"summary() takes Reports, dicts or JSON lines, not {type(r).__name__}"
            )
    return Summary(
        _native.summary(lines, "<reports>", allow_mixed_databases=allow_mixed_databases)
    )


__all__ = [
    "Database",
    "Baseline",
    "FaultlineWarning",
    "BASELINE_MAX_TEMPLATES",
    "Report",
    "Finding",
    "Summary",
    "summary",
    "FaultlineError",
    "SignatureError",
    "InputError",
    "ArchiveError",
    "LimitError",
    "ReportError",
    "UsageError",
    "DATABASE",
    "MAX_THREADS",
    "SCHEMA_VERSION",
    "SUMMARY_SCHEMA_VERSION",
    "__version__",
]
