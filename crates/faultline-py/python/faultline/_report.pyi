"""Type stubs of Report, Finding and Summary: the JSON contract's fields (README, "JSON
output"), read-only."""

from typing import Any, Dict, List, Optional

class Finding:
    rank: int
    signature: Optional[str]
    role: str
    severity: str
    category: str
    title: str
    line: int
    last_line: int
    offset: int
    text: str
    text_truncated: bool
    count: int
    processes: List[str]
    process_count: int
    survivable: bool
    ended_process: bool
    run: int
    timestamp: Optional[str]
    tentative: bool
    captures: Dict[str, str]
    remediation: Optional[str]
    traceback: Optional[List[str]]
    why: str
    def __init__(self, data: Dict[str, Any]) -> None: ...
    @property
    def is_failure(self) -> bool: ...
    def to_dict(self) -> Dict[str, Any]: ...
    def __getattr__(self, name: str) -> Any: ...

class Report:
    schema_version: int
    input: str
    input_raw: Optional[str]
    database: Dict[str, str]
    error: Optional[str]
    binary: bool
    bytes: int
    lines: int
    runs: int
    failed: bool
    findings_omitted: int
    ended_early: bool
    counts: Dict[str, int]
    first_failure: Optional[Dict[str, Any]]
    matches: Optional[List[Dict[str, Any]]]
    def __init__(self, json_line: str) -> None: ...
    @classmethod
    def from_json(cls, json_line: str) -> "Report": ...
    @property
    def findings(self) -> List[Finding]: ...
    @property
    def root_cause(self) -> Optional[Finding]: ...
    @property
    def diagnosed(self) -> bool: ...
    def to_dict(self) -> Dict[str, Any]: ...
    def to_json(self) -> str: ...
    def __getattr__(self, name: str) -> Any: ...

class Summary:
    inputs: int
    diagnosed: int
    failed: int
    binary: int
    bytes: int
    lines: int
    databases: List[Dict[str, str]]
    signatures: List[Dict[str, Any]]
    undiagnosed: List[str]
    errors: List[Dict[str, Any]]
    repeated: List[Dict[str, Any]]
    def __init__(self, summary_json: str) -> None: ...
    def to_dict(self) -> Dict[str, Any]: ...
    def to_json(self) -> str: ...
    def render(self, format: str = "human") -> str: ...
    def to_csv(self) -> str: ...
    def to_arrow(self) -> Any: ...
