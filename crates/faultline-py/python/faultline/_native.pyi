"""Type stubs of the Rust extension module (``faultline._native``). Use ``faultline``'s
Python API; this layer returns the JSON contract's text, which it wraps."""

from typing import List, Optional, Tuple, Union

__version__: str
MAX_THREADS: int
SCHEMA_VERSION: int
SUMMARY_SCHEMA_VERSION: int

class Baseline:
    @property
    def warnings(self) -> List[str]: ...
    @property
    def templates(self) -> int: ...
    def info_json(self) -> str: ...

class Database:
    @staticmethod
    def embedded() -> "Database": ...
    @staticmethod
    def from_dir(path: str) -> "Database": ...
    @staticmethod
    def load(path: str) -> "Database": ...
    @property
    def name(self) -> str: ...
    @property
    def version(self) -> str: ...
    @property
    def hash(self) -> str: ...
    @property
    def signature_count(self) -> int: ...
    def error_report(self, name: str, message: str) -> str: ...
    def load_baseline(
        self,
        goods: List[str],
        inputs: List[str] = ...,
        max_templates: int = 1000000,
        threads: Optional[int] = None,
        max_line_bytes: Optional[int] = None,
        stdin: bool = False,
    ) -> Baseline: ...
    def scan_path(
        self,
        path: str,
        threads: Optional[int] = None,
        all: bool = False,
        max_findings: int = 1000,
        max_line_bytes: Optional[int] = None,
        stdin: bool = False,
        baseline: Optional[Baseline] = None,
    ) -> str: ...
    def scan_bytes(
        self,
        data: Union[bytes, bytearray, memoryview],
        name: str,
        threads: Optional[int] = None,
        all: bool = False,
        max_findings: int = 1000,
        max_line_bytes: Optional[int] = None,
        baseline: Optional[Baseline] = None,
    ) -> str: ...
    def scan_reader(
        self,
        fileobj: object,
        name: str,
        threads: Optional[int] = None,
        all: bool = False,
        max_findings: int = 1000,
        max_line_bytes: Optional[int] = None,
        baseline: Optional[Baseline] = None,
    ) -> str: ...
    def scan_paths(
        self,
        paths: List[str],
        threads: Optional[int] = None,
        all: bool = False,
        max_findings: int = 1000,
        max_line_bytes: Optional[int] = None,
        glob: List[str] = ...,
        exclude: List[str] = ...,
        stdin: bool = False,
        baseline: Optional[Baseline] = None,
    ) -> List[str]: ...

def embedded_identity() -> Tuple[str, str, str]: ...
def walk_inputs(
    paths: List[str], glob: List[str] = ..., exclude: List[str] = ..., stdin: bool = False
) -> List[Tuple[str, str, Optional[str], int]]: ...
def nothing_selected(roots: List[str], glob: List[str] = ..., exclude: List[str] = ...) -> str: ...
def not_a_log_by_name(name: str) -> Optional[str]: ...
def bucket(error: bool, failed: bool) -> str: ...
def summary(lines: List[str], origin: str, allow_mixed_databases: bool = False) -> str: ...
def render_summary(summary_json: str, format: str) -> str: ...
