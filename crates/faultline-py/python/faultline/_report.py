"""Report, Finding and Summary: thin views over the JSON contract (README, "JSON output").

Each object keeps the JSON text the Rust library wrote and parses it on first use, so its
fields are exactly the contract's: every documented field is an attribute, ``to_dict()``
gives the whole object as plain Python data, and a field added to the contract later shows
up as an attribute without a change here.
"""

from __future__ import annotations

import json
from typing import Any, Dict, List, Optional

from . import _native

_FINDING_FIELDS = {
    "rank": "1-based position; the first is the root cause.",
    "signature": "Signature id, or None for an unclassified finding.",
    "role": "'cause', 'unclassified', 'symptom' or 'noise'.",
    "severity": "From the signature ('error' for unclassified findings).",
    "category": "From the signature ('unclassified' for unclassified findings).",
    "title": "From the signature.",
    "line": "First occurrence, 1-based, as grep -n counts.",
    "last_line": "Last occurrence, 1-based.",
    "offset": "Byte offset of `line`.",
    "text": "The first occurrence's whole line (lossy UTF-8).",
    "text_truncated": "Whether `text` was cut (a line over max_line_bytes).",
    "count": "Lines folded into this finding (same message, numbers and ranks masked).",
    "processes": "Process tags it came from, e.g. ['Worker_TP7 pid=207086'] (the first 64).",
    "process_count": "Distinct processes it came from.",
    "survivable": "Whether the finding did not fail its run.",
    "ended_process": "Whether it ended its process.",
    "run": "The 1-based run it belongs to.",
    "timestamp": "The first occurrence's timestamp as the line prints it, or None.",
    "tentative": "An unclassified guess in an input that ended early.",
    "captures": "Named captures of the first occurrence (dict).",
    "remediation": "What to do, captures filled in (None for unclassified).",
    "traceback": "The trimmed Python traceback ending in this line (list of lines), or None.",
    "why": "Why the finding ranks where it does.",
}

_REPORT_FIELDS = {
    "schema_version": "Integer, bumped when a field changes meaning or disappears.",
    "input": "The path, or '-' for stdin (a byte that is not UTF-8 shows as U+FFFD).",
    "input_raw": "Only for a path that is not UTF-8: the exact path with \\xNN escapes; else None.",
    "database": "{'name', 'version', 'hash'} of the signature database used.",
    "error": "None, or a one-line message (findings before the error are kept).",
    "binary": "Whether the input held NUL bytes (it is scanned all the same).",
    "bytes": "Size of the input (decompressed).",
    "lines": "Lines, counted as wc -l does plus a final unterminated line.",
    "runs": "Runs recognised in the input.",
    "failed": "Whether some run failed (a fatal cause or unclassified finding exists).",
    "run_outcomes": "One dict per run, in run order: 'run', 'outcome' (failed, completed, stopped, running or unknown) and 'line' (or None).",
    "findings_omitted": "Findings left out by max_findings.",
    "ended_early": "The input was cut off (a read error after some data, or inside a traceback).",
    "counts": "Matched lines by role, unclassified and unmatched error lines, evidence lines (dict).",
    "first_failure": "Which rank or node failed first, in a report spanning several (a log's rank or node prefixes): {'input', 'process', 'node', 'line', 'timestamp', 'timestamp_from', 'waits_on_peer', 'others_waiting'} of the first finding; else None.",
    "matches": "Only with all=True: every matched line (list of dicts); else None.",
}


def _field(name: str, doc: str) -> property:
    def get(self: Any) -> Any:
        return self._data.get(name)

    get.__name__ = name
    return property(get, doc=doc)


class Finding:
    """One finding of a report: a message, folded over processes and repeats, and what it
    means. Attributes are the JSON contract's finding fields; ``to_dict()`` gives them all."""

    __slots__ = ("_data",)

    def __init__(self, data: Dict[str, Any]) -> None:
        self._data = data

    def to_dict(self) -> Dict[str, Any]:
        """The finding as plain Python data (a deep copy of its JSON object)."""
        return json.loads(json.dumps(self._data))

    @property
    def is_failure(self) -> bool:
        """A cause or unclassified finding that is not survivable."""
        return self._data.get("role") in ("cause", "unclassified") and not self._data.get(
            "survivable", False
        )

    def __getattr__(self, name: str) -> Any:
        # Fields added to the contract after this module was written.
        data = object.__getattribute__(self, "_data")
        if name in data:
            return data[name]
        raise AttributeError(f"Finding has no field {name!r}")

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Finding) and other._data == self._data

    def __repr__(self) -> str:
        d = self._data
        return (
            f"<Finding rank={d.get('rank')} {d.get('role')} "
            f"{d.get('signature') or '(unclassified)'} line={d.get('line')}>"
        )


for _n, _d in _FINDING_FIELDS.items():
    setattr(Finding, _n, _field(_n, _d))


class Report:
    """The report for one input, with the fields of ``faultline scan --format json``.

    ``report.root_cause`` is the first finding when the input failed (else None);
    ``report.findings`` are in rank order; ``report.to_dict()`` is the JSON object;
    ``report.to_json()`` the JSON line the CLI prints.
    """

    __slots__ = ("_json", "_parsed", "_findings")

    def __init__(self, json_line: str) -> None:
        self._json = json_line
        self._parsed: Optional[Dict[str, Any]] = None
        self._findings: Optional[List[Finding]] = None

    @classmethod
    def from_json(cls, json_line: str) -> "Report":
        """A report from one JSON line of ``faultline scan --format json``."""
        report = cls(json_line)
        report._data  # parse now: a bad line raises here, not later
        return report

    @property
    def _data(self) -> Dict[str, Any]:
        if self._parsed is None:
            self._parsed = json.loads(self._json)
        return self._parsed

    @property
    def findings(self) -> List[Finding]:
        """The findings in rank order."""
        if self._findings is None:
            self._findings = [Finding(f) for f in self._data.get("findings", [])]
        return self._findings

    @property
    def root_cause(self) -> Optional[Finding]:
        """The first finding, the root cause, if the input failed; else None."""
        first = self.findings[0] if self.findings else None
        return first if first is not None and first.is_failure else None

    @property
    def diagnosed(self) -> bool:
        """Whether the input failed (the CLI's exit status 0): the same as ``failed``."""
        return any(f.is_failure for f in self.findings)

    @property
    def bucket(self) -> str:
        """The input's bucket in every count of many inputs (``faultline.summary``, the CLI's
        ``--summary``, ``faultline.ray``, ``faultline.spark.counts``): its exit status alone,
        ``diagnosed`` (0: some run failed), ``clean`` (1) or ``errored`` (2: an error, whatever
        was found). The Rust library's rule (``faultline::Bucket``)."""
        failed = self._data.get("failed")
        if failed is None:  # a report written before `failed` existed
            failed = self.root_cause is not None
        return _native.bucket(self._data.get("error") is not None, bool(failed))

    def to_dict(self) -> Dict[str, Any]:
        """The report as plain Python data: the JSON contract's object."""
        return json.loads(self._json)

    def to_json(self) -> str:
        """The report as one line of JSON, as ``faultline scan --format json`` prints it."""
        return self._json

    def __getattr__(self, name: str) -> Any:
        data = object.__getattribute__(self, "_data")
        if name in data:
            return data[name]
        raise AttributeError(f"Report has no field {name!r}")

    def __reduce__(self) -> Any:
        return (Report, (self._json,))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Report) and other._data == self._data

    def __repr__(self) -> str:
        cause = self.root_cause
        what = (
            f"root cause {cause.signature or '(unclassified)'} at line {cause.line}"
            if cause
            else ("error" if self.error else "no failure")
        )
        return f"<Report {self.input!r}: {what}, {len(self.findings)} findings>"


for _n, _d in _REPORT_FIELDS.items():
    setattr(Report, _n, _field(_n, _d))


class Summary:
    """The summary of many reports (``faultline scan --summary``, ``faultline summary``):
    per signature, how many inputs it is the root cause of, the inputs it was found in, its
    hits, and the first and last input (by path); every input counted in one bucket by its
    exit status (``diagnosed``, ``clean``, ``errored``), the clean and errored ones listed. ``str(summary)`` is the CLI's table; ``to_csv()`` its ``--format csv``."""

    __slots__ = ("_json", "_data")

    def __init__(self, summary_json: str) -> None:
        self._json = summary_json
        self._data: Dict[str, Any] = json.loads(summary_json)

    schema_version = _field("schema_version", "The summary's JSON schema version (2).")
    inputs = _field("inputs", "Inputs summarised (each counted once).")
    diagnosed = _field("diagnosed", "Inputs whose exit status alone is 0: some run failed.")
    clean = _field("clean", "Inputs whose exit status alone is 1 (listed in undiagnosed).")
    errored = _field("errored", "Inputs whose exit status alone is 2 (listed in errors).")
    errored_diagnosed = _field(
        "errored_diagnosed", "Errored inputs whose findings before the error named a root cause."
    )
    failed = _field("failed", "The same as errored (the key of the first summaries).")
    binary = _field("binary", "Inputs that held NUL bytes.")
    bytes = _field("bytes", "Bytes over all inputs.")
    lines = _field("lines", "Lines over all inputs.")
    databases = _field("databases", "The databases the reports were made with.")
    signatures = _field(
        "signatures",
        "One dict per signature: signature, category, title, first_findings, inputs, hits, "
        "first_input, last_input; sorted as the CLI's table.",
    )
    undiagnosed = _field("undiagnosed", "The clean inputs, sorted.")
    errors = _field("errors", "Inputs with an error: dicts of input, error, diagnosed.")
    repeated = _field("repeated", "Inputs given more than once (each counted once).")

    def to_dict(self) -> Dict[str, Any]:
        """The summary as plain Python data (``faultline summary --format json``)."""
        return json.loads(self._json)

    def to_json(self) -> str:
        """The summary as one line of JSON (``--summary --format json``)."""
        return self._json

    def render(self, format: str = "human") -> str:
        """The summary as the CLI prints it: ``human``, ``csv`` or ``json``."""
        return _native.render_summary(self._json, format)

    def to_csv(self) -> str:
        """The CLI's ``--summary --format csv`` table."""
        return self.render("csv")

    def to_arrow(self) -> Any:
        """The per-signature table as a ``pyarrow.Table`` (needs pyarrow)."""
        import pyarrow as pa

        return pa.Table.from_pylist(
            self.signatures,
            schema=pa.schema(
                [
                    ("signature", pa.string()),
                    ("category", pa.string()),
                    ("title", pa.string()),
                    ("first_findings", pa.int64()),
                    ("inputs", pa.int64()),
                    ("hits", pa.int64()),
                    ("first_input", pa.string()),
                    ("last_input", pa.string()),
                ]
            ),
        )

    def __str__(self) -> str:
        return self.render("human")

    def __reduce__(self) -> Any:
        return (Summary, (self._json,))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Summary) and other._data == self._data

    def __repr__(self) -> str:
        d = self._data
        return (
            f"<Summary {d['inputs']} inputs: {d['diagnosed']} diagnosed, "
            f"{d.get('clean', len(d['undiagnosed']))} clean, {d['failed']} errored>"
        )
