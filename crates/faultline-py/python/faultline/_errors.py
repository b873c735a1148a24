"""The exceptions faultline raises. Every message is the library's (and the CLI's) own line:
``file:line:column: reason`` for a signature file, ``path: reason`` or
``path: at byte offset N: reason`` for an input or an archive."""

from __future__ import annotations

from typing import List, Optional


class FaultlineError(Exception):
    """Base class of every faultline error.

    Attributes set by the library: ``path`` (the file concerned, or None), ``offset`` (the
    byte offset of a read error part-way through an input, or None) and ``problems`` (every
    ``file:line:column: reason`` of a bad signature directory; the message shows the first).
    """

    path: Optional[str] = None
    offset: Optional[int] = None
    problems: List[str] = []


class SignatureError(FaultlineError):
    """A signature directory is invalid: a missing ``db.toml``, a TOML error, a missing or
    unknown field, a bad pattern... ``problems`` lists them all, each ``file:line:column: reason``."""


class InputError(FaultlineError, OSError):
    """An input (or a directory) cannot be opened or read: ``path: reason``. Also an
    ``OSError``. A read error part-way through an input does not raise: the report carries it
    in ``error`` (with the byte offset), as the CLI does."""


class ArchiveError(FaultlineError):
    """A compiled database archive cannot be used (truncated, corrupt, another format)."""


class LimitError(FaultlineError):
    """A signature set exceeds a resource limit while it is compiled."""


class ReportError(FaultlineError, ValueError):
    """A JSON line given to ``faultline.summary`` is not a faultline report
    (``<reports>:LINE:COLUMN: reason``)."""


class UsageError(FaultlineError, ValueError):
    """An argument cannot be used: a bad glob, reports made with different databases..."""


class FaultlineWarning(UserWarning):
    """Something odd that faultline goes on with (a baseline whose good run failed, or that
    holds no template); the message is the CLI's ``faultline: warning: ...`` line."""


__all__ = [
    "FaultlineWarning",
    "FaultlineError",
    "SignatureError",
    "InputError",
    "ArchiveError",
    "LimitError",
    "ReportError",
    "UsageError",
]
