"""Fatal message sites of Python and C++ sources, rendered as the line a user sees.

Python sites are found with the `ast` module: `raise X("...")` (also f-strings, `%` and
`.format` on a literal, concatenations, and a message held in a local variable assigned
just before), and `logger.error/exception/critical("...")` calls with literal text.
A site counts only if some literal text reaches the message: `raise X(str(e))` or
`raise X(msg)` with `msg` a parameter are not sites (no text of the project is printed).

C++ sites (`TORCH_CHECK`, `TORCH_CHECK_WITH`, `C10_THROW_ERROR`, `C10D_THROW_ERROR`,
`TORCH_INTERNAL_ASSERT`) are found by a small tokenizer that skips comments and string
literals and splits a macro call's arguments at top-level commas.

Placeholders are filled with plausible values chosen from the placeholder's expression
(a rank gets a small number, a dtype gets `torch.bfloat16`, a path gets a model path);
`render_value` holds the table.
"""
from __future__ import annotations

import ast
import builtins
import re
import string
from dataclasses import dataclass, field

LOG_LEVELS = {"error": "ERROR", "exception": "ERROR", "critical": "CRITICAL", "fatal": "CRITICAL"}
LOGGER_RECEIVER = re.compile(r"(^|\.)_?(logger|log|LOGGER|LOG|logging|_LOGGER|_log)$")
# Exceptions that steer control flow or end a process quietly: never a fatal message.
NOT_FATAL = {
    "StopIteration", "StopAsyncIteration", "GeneratorExit", "KeyboardInterrupt",
    "SystemExit", "CancelledError", "asyncio.CancelledError", "Warning",
    "DeprecationWarning", "UserWarning", "FutureWarning", "RuntimeWarning",
}
# torch's C++-defined exceptions print under the module they are registered in.
PRINTED_AS = {
    "DistError": "torch.distributed.DistError", "DistBackendError": "torch.distributed.DistBackendError",
    "DistStoreError": "torch.distributed.DistStoreError", "DistNetworkError": "torch.distributed.DistNetworkError",
    "DistQueueEmptyError": "torch.distributed.DistQueueEmptyError", "OutOfMemoryError": "torch.OutOfMemoryError",
    "AcceleratorError": "torch.AcceleratorError",
}
BUILTIN_NAMES = {n for n in dir(builtins) if isinstance(getattr(builtins, n), type)}


@dataclass
class Site:
    """One place in a source file that prints a fatal message."""

    path: str  # path inside the package, e.g. vllm/v1/engine/core.py
    line: int
    kind: str  # raise | log.error | log.exception | log.critical | TORCH_CHECK | ...
    exc: str  # exception as Python prints it, or the log level
    message: str  # the message with placeholders filled
    func: str = "<module>"
    source: str = ""  # first line of the statement, for a traceback frame
    template: str = ""  # the message with placeholders shown as {expr}

    @property
    def rendered(self) -> str:
        """The line (or lines) a user sees: `XError: message`, or the logged message."""
        if self.kind.startswith("log."):
            return self.message
        return f"{self.exc}: {self.message}" if self.message else self.exc


# ---------------------------------------------------------------- placeholder values

_NUMBER_WORDS = (
    "num", "count", "len", "length", "size", "tokens", "blocks", "idx", "index", "dim",
    "heads", "layers", "step", "batch", "seq", "max", "min", "limit", "total", "capacity",
    "rank", "id", "port", "world", "tp", "pp", "dp", "ep", "n", "k", "i", "j",
)


def _last_name(expr: str) -> str:
    names = re.findall(r"[A-Za-z_][A-Za-z_0-9]*", expr)
    skip = {"self", "len", "str", "repr", "type", "int", "float", "list", "tuple", "get", "cls", "__name__", "__class__", "name"}
    for n in reversed(names):
        if n not in skip:
            return n
    return names[-1] if names else "value"


def guess_value(expr: str) -> object:
    """A plausible value for the placeholder expression `expr` (source text)."""
    e = expr.strip()
    m = re.fullmatch(r"(?:str|repr|int|float|round)\((.*)\)", e, re.S)
    if m:
        return guess_value(m.group(1))
    low = e.lower()
    if "ncclgeterrorstring" in low:
        return "unhandled system error (run with NCCL_DEBUG=INFO for details)"
    if "cudageterrorstring" in low:
        return "invalid argument"
    if low.startswith("len("):
        return 2
    if "__name__" in low or low.startswith("type(") or "__class__" in low:
        return "LlamaForCausalLM" if "model" in low else "Tensor"
    bare = e
    while True:
        stripped = re.sub(r"\([^()]*\)", "", bare)
        if stripped == bare:
            break
        bare = stripped
    n = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", _last_name(bare)).lower()
    if n.startswith("get_") and len(n) > 4:
        n = n[4:]
    table = [
        (("gpu_memory_utilization", "utilization", "ratio", "fraction"), 0.9),
        (("local_rank", "rank"), 1),
        (("size", "world_size", "tensor_parallel_size", "pipeline_parallel_size", "tp_size", "pp_size", "dp_size", "ep_size"), 8),
        (("block_size", "page_size", "kernel_block_size", "cache_block_size"), 16),
        (("port",), 29500),
        (("host", "addr", "address", "ip", "endpoint", "master"), "10.0.0.2"),
        (("dtype",), "torch.bfloat16"),
        (("device",), "cuda:0"),
        (("model", "model_name", "model_id", "repo_id", "model_path", "tokenizer"), "meta-llama/Llama-3.1-8B-Instruct"),
        (("path", "dir", "directory", "file", "filename", "folder"), "/models/Llama-3.1-8B-Instruct"),
        (("backend", "attn_backend", "attention_backend"), "FLASH_ATTN"),
        (("version", "ver"), "2.6.3"),
        (("arch", "architecture", "architectures", "model_arch", "model_type"), "LlamaForCausalLM"),
        (("quant", "quantization", "quant_method", "method"), "fp8"),
        (("timeout", "seconds", "secs", "elapsed", "duration"), 600),
        (("memory", "mem", "gib", "gb", "free_memory", "total_memory", "bytes"), 14.5),
        (("e", "err", "exc", "error", "ex", "exception", "reason", "msg", "message", "cause"), "internal error"),
        (("key",), "max_model_len"),
        (("value", "val"), "auto"),
        (("name",), "llama"),
        (("platform",), "cuda"),
        (("pid",), 4242),
        (("signal", "sig", "signum"), 9),
        (("code", "exitcode", "exit_code", "returncode"), 1),
    ]
    for keys, value in table:
        if n in keys:
            return value
    for keys, value in table:
        if any(len(k) >= 3 and k != "size" and (n.endswith("_" + k) or n.startswith(k + "_")) for k in keys):
            return value
    parts = n.split("_")
    if any(p in _NUMBER_WORDS for p in parts):
        return 4096
    return n


def format_value(value: object, conversion: int | str | None = None, spec: str = "") -> str:
    """`value` as `format(value, spec)` after a `!r`/`!s` conversion, forgiving a spec that does not fit."""
    if conversion in ("r", ord("r")):
        value = repr(value)
    elif conversion in ("a", ord("a")):
        value = ascii(value)
    if spec:
        t = spec[-1:]
        try:
            if t in "eEfFgG%":
                return format(float(value) if isinstance(value, (int, float)) else 14.5, spec)
            if t in "dxXob":
                return format(int(value) if isinstance(value, (int, float)) else 8, spec)
            if t == "n":
                return format(value if isinstance(value, (int, float)) else 8, spec)
            return format(value if isinstance(value, (int, float)) else str(value), spec)
        except (ValueError, TypeError):
            return str(value)
    return str(value)


_PERCENT = re.compile(r"%(\([^)]*\))?([-#0 +]*\d*(?:\.\d+)?)([diouxXeEfFgGcrsa%])")


def percent_format(fmt: str, args: list[str]) -> str:
    """`fmt % args` where each arg is given as its source text (its value guessed)."""
    it = iter(args)

    def sub(m: re.Match) -> str:
        if m.group(3) == "%":
            return "%"
        expr = m.group(1)[1:-1] if m.group(1) else next(it, "value")
        v = guess_value(expr)
        conv = m.group(3)
        if conv == "r":
            return repr(v)
        if conv in "diouxXc":
            return format_value(v if isinstance(v, (int, float)) else 8, None, m.group(2) + ("d" if conv in "iu" else "d" if conv == "c" else conv))
        if conv in "eEfFgG":
            return format_value(v, None, m.group(2) + conv)
        return str(v)

    return _PERCENT.sub(sub, fmt)


def brace_format(fmt: str, args: list[str], kwargs: dict[str, str]) -> str:
    """`fmt.format(*args, **kwargs)` where each argument is given as its source text."""
    out: list[str] = []
    auto = 0
    try:
        parsed = list(string.Formatter().parse(fmt))
    except ValueError:
        return fmt
    for literal, fname, spec, conv in parsed:
        out.append(literal)
        if fname is None:
            continue
        base = re.split(r"[.\[]", fname, maxsplit=1)[0]
        if base == "":
            expr = args[auto] if auto < len(args) else "value"
            auto += 1
        elif base.isdigit():
            i = int(base)
            expr = args[i] if i < len(args) else "value"
        else:
            expr = kwargs.get(base, base)
        out.append(format_value(guess_value(expr), conv, spec or ""))
    return "".join(out)


# ---------------------------------------------------------------- Python sites


@dataclass
class _Module:
    """A module's functions and the calls to them, to fill a parameter placeholder from a caller."""

    funcs: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] = field(default_factory=dict)
    calls: dict[str, list[ast.Call]] = field(default_factory=dict)
    consts: dict[str, ast.expr] = field(default_factory=dict)  # module-level NAME = value

    @classmethod
    def of(cls, tree: ast.AST) -> "_Module":
        m = cls()
        for stmt in getattr(tree, "body", []):
            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
                m.consts[stmt.targets[0].id] = stmt.value
            elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.value is not None:
                m.consts[stmt.target.id] = stmt.value
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                m.funcs.setdefault(node.name, node)
            elif isinstance(node, ast.Call):
                f = node.func
                name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None
                if name:
                    m.calls.setdefault(name, []).append(node)
        return m

    def argument(self, func: ast.AST | None, param: str) -> ast.expr | None:
        """What the first call in this module to `func` passes for its parameter `param`."""
        if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return None
        params = [a.arg for a in func.args.posonlyargs + func.args.args]
        if param not in params and param not in [a.arg for a in func.args.kwonlyargs]:
            return None
        skip = 1 if params[:1] in (["self"], ["cls"]) else 0
        for call in self.calls.get(func.name, []):
            for k in call.keywords:
                if k.arg == param:
                    return k.value
            if param in params:
                i = params.index(param) - skip
                if 0 <= i < len(call.args) and not isinstance(call.args[i], ast.Starred):
                    return call.args[i]
        return None

    def returned(self, call: ast.expr) -> ast.expr | None:
        """The last `return EXPR` of the module function that `call` calls, if any."""
        if not isinstance(call, ast.Call):
            return None
        f = call.func
        name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None
        target = self.funcs.get(name or "")
        if target is None:
            return None
        rets = sorted((n for n in ast.walk(target) if isinstance(n, ast.Return) and n.value is not None), key=lambda n: n.lineno)
        return rets[-1].value if rets else None


class _Renderer:
    """Renders a message expression; `literal` records whether any literal text was used."""

    def __init__(self, assigns: dict[str, list[tuple[int, ast.expr]]], line: int,
                 module: _Module | None = None, func: ast.AST | None = None):
        self.assigns = assigns
        self.line = line
        self.module = module
        self.func = func
        self.literal = False
        self.depth = 0

    def placeholder(self, node: ast.expr) -> str:
        return str(self.value_of(node))

    def value_of(self, node: ast.expr) -> object:
        """A value for an expression the message does not spell out.

        A parameter of the enclosing function takes the text a caller in the same module passes
        (a string, or what a called module function returns), when that text holds a literal.
        """
        if self.module is not None and self.depth < 4:
            arg = self.module.argument(self.func, node.id) if isinstance(node, ast.Name) else None
            arg = self.module.returned(node) or arg if not isinstance(node, ast.Name) else arg
            if arg is not None and isinstance(arg, ast.Call) and not _is_str(arg):
                arg = self.module.returned(arg) or arg
            if arg is not None:
                sub = _Renderer({}, 1 << 30, self.module, None)
                sub.depth = self.depth + 2
                text = sub.render(arg)
                if sub.literal:
                    return text
        return guess_value(ast.unparse(node))

    def render(self, node: ast.expr) -> str:
        self.depth += 1
        try:
            if self.depth > 8:
                return self.placeholder(node)
            return self._render(node)
        finally:
            self.depth -= 1

    def _render(self, node: ast.expr) -> str:
        if isinstance(node, ast.Constant):
            if isinstance(node.value, str):
                self.literal = self.literal or bool(node.value.strip())
                return node.value
            return str(node.value)
        if isinstance(node, ast.JoinedStr):
            parts = []
            for v in node.values:
                if isinstance(v, ast.Constant):
                    self.literal = self.literal or bool(str(v.value).strip())
                    parts.append(str(v.value))
                elif isinstance(v, ast.FormattedValue):
                    spec = ""
                    if v.format_spec is not None:
                        spec = "".join(str(x.value) if isinstance(x, ast.Constant) else "" for x in v.format_spec.values)  # type: ignore[attr-defined]
                    conv = chr(v.conversion) if v.conversion and v.conversion > 0 else None
                    parts.append(format_value(self.value_of(v.value), conv, spec))
            return "".join(parts)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            return self.render(node.left) + self.render(node.right)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod) and _is_str(node.left):
            fmt = self.render(node.left)
            r = node.right
            args = [ast.unparse(x) for x in r.elts] if isinstance(r, ast.Tuple) else [ast.unparse(r)]
            return percent_format(fmt, args)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            if node.func.attr == "format" and _is_str(node.func.value):
                fmt = self.render(node.func.value)
                kw = {k.arg: ast.unparse(k.value) for k in node.keywords if k.arg}
                return brace_format(fmt, [ast.unparse(a) for a in node.args], kw)
            if node.func.attr == "join" and _is_str(node.func.value) and node.args and isinstance(node.args[0], (ast.List, ast.Tuple)):
                sep = self.render(node.func.value)
                return sep.join(self.render(x) for x in node.args[0].elts)
        if isinstance(node, ast.IfExp):
            return self.render(node.body)
        if isinstance(node, ast.Name):
            prior = [v for (ln, v) in self.assigns.get(node.id, []) if ln < self.line]
            if prior:
                return self.render(prior[-1])
            if self.module is not None and node.id in self.module.consts:
                return self.render(self.module.consts[node.id])
        return self.placeholder(node)


def _is_str(node: ast.expr) -> bool:
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str)
    if isinstance(node, ast.JoinedStr):
        return True
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _is_str(node.left) or _is_str(node.right)
    return False


def module_of(path: str) -> str:
    """`vllm/v1/engine/core.py` -> `vllm.v1.engine.core` (a package's `__init__.py` -> the package)."""
    mod = path[:-3] if path.endswith(".py") else path
    if mod.endswith("/__init__"):
        mod = mod[: -len("/__init__")]
    return mod.replace("/", ".")


@dataclass
class ClassIndex:
    """Where each exception class of the scanned package is defined, for its printed name."""

    by_module: dict[str, set[str]] = field(default_factory=dict)
    by_name: dict[str, set[str]] = field(default_factory=dict)

    def add(self, path: str, tree: ast.AST) -> None:
        mod = module_of(path)
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                self.by_module.setdefault(mod, set()).add(node.name)
                self.by_name.setdefault(node.name, set()).add(mod)

    def qualify(self, name: str, imported_from: str | None, here: str) -> str:
        """The name Python prints for exception class `name` raised in module `here`."""
        if name in PRINTED_AS and (imported_from or "").startswith("torch"):
            return PRINTED_AS[name]
        if name in BUILTIN_NAMES and imported_from is None:
            return name
        if imported_from is None and name in self.by_module.get(here, set()):
            return f"{here}.{name}"
        if imported_from is not None and name in self.by_module.get(imported_from, set()):
            return f"{imported_from}.{name}"
        homes = self.by_name.get(name, set())
        if len(homes) == 1:
            return f"{next(iter(homes))}.{name}"
        if imported_from is not None:
            return f"{imported_from}.{name}"
        return name


def _imports(tree: ast.Module, here: str, is_pkg: bool) -> tuple[dict[str, str], dict[str, str]]:
    """(names imported with `from M import N` -> M, module aliases `import M as A` -> M)."""
    names: dict[str, str] = {}
    mods: dict[str, str] = {}
    pkg_parts = here.split(".") if is_pkg else here.split(".")[:-1]
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = pkg_parts[: len(pkg_parts) - (node.level - 1)] if node.level > 1 else pkg_parts
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            for a in node.names:
                names[a.asname or a.name] = mod
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.asname:
                    mods[a.asname] = a.name
                else:
                    mods[a.name.split(".")[0]] = a.name.split(".")[0]
    return names, mods


def _exception_name(node: ast.expr, names: dict[str, str], mods: dict[str, str], index: ClassIndex, here: str) -> str | None:
    if isinstance(node, ast.Call):
        node = node.func
    if isinstance(node, ast.Name):
        return index.qualify(node.id, names.get(node.id), here)
    if isinstance(node, ast.Attribute):
        dotted = ast.unparse(node)
        head, _, rest = dotted.partition(".")
        if head in mods:
            dotted = mods[head] + "." + rest
        elif head in names:
            dotted = names[head] + "." + head + "." + rest
        if dotted.startswith("builtins."):
            return dotted[len("builtins."):]
        if dotted.startswith("asyncio.exceptions."):
            return dotted.split(".")[-1]
        return dotted
    return None


def _function_assigns(func: ast.AST) -> dict[str, list[tuple[int, ast.expr]]]:
    out: dict[str, list[tuple[int, ast.expr]]] = {}
    for node in ast.walk(func):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            out.setdefault(node.targets[0].id, []).append((node.lineno, node.value))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
            out.setdefault(node.target.id, []).append((node.lineno, node.value))
        elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name) and isinstance(node.op, ast.Add):
            prev = out.get(node.target.id)
            if prev:
                ln, v = prev[-1]
                prev.append((node.lineno, ast.BinOp(left=v, op=ast.Add(), right=node.value)))
    for v in out.values():
        v.sort(key=lambda t: t[0])
    return out


def python_sites(path: str, source: str, index: ClassIndex | None = None) -> list[Site]:
    """Every fatal message site of one Python file (`path` inside its package)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return []
    index = index or ClassIndex()
    if not index.by_module.get(module_of(path)):
        index.add(path, tree)
    here = module_of(path)
    names, mods = _imports(tree, here, path.endswith("__init__.py"))
    lines = source.splitlines()
    sites: list[Site] = []

    module = _Module.of(tree)

    def visit(node: ast.AST, func: ast.AST, assigns: dict[str, list[tuple[int, ast.expr]]]) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                visit(child, child, _function_assigns(child))
                continue
            if isinstance(child, ast.Raise) and child.exc is not None or _returns_exception(child):
                r = _Renderer(assigns, child.lineno, module, func)
                site = _raise_site(child, path, r, names, mods, index, here, lines)
                if site:
                    sites.append(site)
            elif isinstance(child, ast.Call):
                site = _log_site(child, path, _Renderer(assigns, child.lineno, module, func), lines)
                if site:
                    sites.append(site)
            visit(child, func, assigns)

    visit(tree, tree, _function_assigns(tree))
    return sites


def _first_line(lines: list[str], lineno: int) -> str:
    return lines[lineno - 1].strip() if 0 < lineno <= len(lines) else ""


def _func_name(r: "_Renderer") -> str:
    return getattr(r.func, "name", "<module>")


def _returns_exception(node: ast.AST) -> bool:
    """`return XError("...")`: a helper builds the exception its callers raise."""
    if not isinstance(node, ast.Return) or not isinstance(node.value, ast.Call):
        return False
    f = node.value.func
    name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
    return name.endswith(("Error", "Exception"))


def _raise_site(node: ast.Raise | ast.Return, path, r: "_Renderer", names, mods, index, here, lines) -> Site | None:
    exc = node.exc if isinstance(node, ast.Raise) else node.value
    if not isinstance(exc, ast.Call) or not exc.args:
        return None
    name = _exception_name(exc, names, mods, index, here)
    if name is None or name in NOT_FATAL or name.split(".")[-1] in NOT_FATAL:
        return None
    msg = r.render(exc.args[0])
    if not r.literal:
        return None
    return Site(path, node.lineno, "raise", name, msg, _func_name(r), _first_line(lines, node.lineno), ast.unparse(exc.args[0]))


def _log_site(node: ast.Call, path, r: "_Renderer", lines) -> Site | None:
    f = node.func
    if not isinstance(f, ast.Attribute) or f.attr not in LOG_LEVELS or not node.args:
        return None
    if not LOGGER_RECEIVER.search(ast.unparse(f.value)):
        return None
    msg = r.render(node.args[0])
    if not r.literal:
        return None
    if len(node.args) > 1 and "%" in msg:
        msg = percent_format(msg, [ast.unparse(a) for a in node.args[1:]])
    return Site(path, node.lineno, "log." + ("exception" if f.attr == "exception" else LOG_LEVELS[f.attr].lower()),
                LOG_LEVELS[f.attr], msg, _func_name(r), _first_line(lines, node.lineno), ast.unparse(node.args[0]))


# ---------------------------------------------------------------- C++ sites

CPP_MACROS = {"TORCH_CHECK", "TORCH_CHECK_WITH", "C10_THROW_ERROR", "C10D_THROW_ERROR", "TORCH_INTERNAL_ASSERT"}
# c10's error types as Python prints them (torch/csrc/Exceptions.h maps them).
CPP_ERROR_TYPES = {
    "Error": "RuntimeError", "ValueError": "ValueError", "TypeError": "TypeError",
    "IndexError": "IndexError", "NotImplementedError": "NotImplementedError",
    "OutOfMemoryError": "torch.OutOfMemoryError", "DistError": "torch.distributed.DistError",
    "DistBackendError": "torch.distributed.DistBackendError", "DistStoreError": "torch.distributed.DistStoreError",
    "DistNetworkError": "torch.distributed.DistNetworkError", "DistQueueEmptyError": "torch.distributed.DistQueueEmptyError",
}
# Calls whose value the user sees in a c10d message, with a plausible value.
CPP_CALL_VALUES = {
    "ncclGetErrorWithVersion": "unhandled cuda error (run with NCCL_DEBUG=INFO for details), NCCL version 2.27.5",
    "getNcclErrorDetailStr": "ncclUnhandledCudaError: Call to CUDA function failed.\nLast error:\nCuda failure 'out of memory'",
    "ncclGetErrorString": "unhandled system error (run with NCCL_DEBUG=INFO for details)",
    "std::to_string": "1234",
}


@dataclass
class Token:
    kind: str  # id | str | punct | other
    text: str
    line: int


def cpp_tokens(src: str) -> list[Token]:
    """Identifiers, string literals (unescaped text) and punctuation; comments and preprocessor line joins skipped."""
    toks: list[Token] = []
    i, line, n = 0, 1, len(src)
    while i < n:
        c = src[i]
        if c == "\n":
            line += 1
            i += 1
        elif c in " \t\r\\":
            i += 1
        elif src.startswith("//", i):
            j = src.find("\n", i)
            i = n if j < 0 else j
        elif src.startswith("/*", i):
            j = src.find("*/", i + 2)
            j = n if j < 0 else j + 2
            line += src.count("\n", i, j)
            i = j
        elif c == "R" and src.startswith('R"', i):
            m = re.match(r'R"([^(]*)\(', src[i:])
            if not m:
                i += 1
                continue
            end = src.find(")" + m.group(1) + '"', i)
            end = n if end < 0 else end
            toks.append(Token("str", src[i + m.end():end], line))
            line += src.count("\n", i, end)
            i = end + len(m.group(1)) + 2
        elif c == '"' or c == "'":
            j = i + 1
            buf = []
            while j < n and src[j] != c:
                if src[j] == "\\" and j + 1 < n:
                    buf.append({"n": "\n", "t": "\t", '"': '"', "'": "'", "\\": "\\", "\n": ""}.get(src[j + 1], src[j + 1]))
                    j += 2
                    continue
                buf.append(src[j])
                j += 1
            toks.append(Token("str" if c == '"' else "other", "".join(buf), line))
            i = j + 1
        elif c.isalpha() or c == "_":
            m = re.compile(r"[A-Za-z_][A-Za-z_0-9]*(::[A-Za-z_][A-Za-z_0-9]*)*").match(src, i)
            assert m is not None
            toks.append(Token("id", m.group(0), line))
            i = m.end()
        elif c.isdigit():
            m = re.compile(r"[0-9][0-9A-Za-z_.']*").match(src, i)
            assert m is not None
            toks.append(Token("other", m.group(0), line))
            i = m.end()
        else:
            toks.append(Token("punct", c, line))
            i += 1
    return toks


def _split_args(toks: list[Token], start: int) -> tuple[list[list[Token]], int]:
    """Arguments of the call whose `(` is at `start`; returns (args, index after `)`)."""
    args: list[list[Token]] = [[]]
    depth = 0
    i = start
    while i < len(toks):
        t = toks[i]
        if t.kind == "punct" and t.text in "([{":
            depth += 1
            if depth > 1:
                args[-1].append(t)
        elif t.kind == "punct" and t.text in ")]}":
            depth -= 1
            if depth == 0:
                return ([a for a in args if a] if any(args) else []), i + 1
            args[-1].append(t)
        elif t.kind == "punct" and t.text == "," and depth == 1:
            args.append([])
        else:
            args[-1].append(t)
        i += 1
    return [a for a in args if a], i


def _cpp_text(toks: list[Token]) -> str:
    out = ""
    for t in toks:
        piece = f'"{t.text}"' if t.kind == "str" else t.text
        if out and (out[-1].isalnum() or out[-1] in '_"') and (piece[:1].isalnum() or piece[:1] in '_"'):
            out += " "
        out += piece
    return out


def _cpp_render(arg: list[Token], toks: list[Token], at: int, depth: int = 0) -> tuple[str, bool]:
    """The text one argument contributes to a c10::str message, and whether it held a literal."""
    if all(t.kind == "str" for t in arg):
        return "".join(t.text for t in arg), True
    # Split at top-level `+` (std::string concatenation) and render each part.
    parts: list[list[Token]] = [[]]
    d = 0
    for t in arg:
        if t.kind == "punct" and t.text in "([{":
            d += 1
        elif t.kind == "punct" and t.text in ")]}":
            d -= 1
        if t.kind == "punct" and t.text == "+" and d == 0:
            parts.append([])
        else:
            parts[-1].append(t)
    if len(parts) > 1:
        out, lit = "", False
        for p in parts:
            s, l2 = _cpp_render(p, toks, at, depth + 1)
            out += s
            lit = lit or l2
        return out, lit
    if arg and arg[0].kind == "id":
        head = arg[0].text
        if head in CPP_CALL_VALUES:
            return CPP_CALL_VALUES[head], False
        if head == "std::string" and len(arg) >= 3 and arg[2].kind == "str":
            return "".join(t.text for t in arg if t.kind == "str"), True
        if head == "std::string" and any(t.text == "__FILE__" for t in arg):
            return "/pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp", False
        if len(arg) == 1 and depth < 2:
            value = _cpp_local(arg[0].text, toks, at)
            if value is not None:
                return _cpp_render(value, toks, at, depth + 1)
    return str(guess_value(_cpp_text(arg))), False


def _cpp_local(name: str, toks: list[Token], at: int) -> list[Token] | None:
    """The initialiser of `... name = EXPR;` among the 400 tokens before `at`, if any."""
    for i in range(at - 1, max(0, at - 400), -1):
        if toks[i].kind == "id" and toks[i].text == name and i + 1 < at and toks[i + 1].text == "=" and toks[i + 2].text != "=":
            j = i + 2
            out = []
            d = 0
            while j < at and not (toks[j].text == ";" and d == 0):
                if toks[j].text in "([{":
                    d += 1
                elif toks[j].text in ")]}":
                    d -= 1
                out.append(toks[j])
                j += 1
            return out
    return None


def cpp_sites(path: str, source: str) -> list[Site]:
    """Every TORCH_CHECK-like message site of one C++ file."""
    toks = cpp_tokens(source)
    sites: list[Site] = []
    lines = source.splitlines()
    for i, t in enumerate(toks):
        if t.kind != "id" or t.text not in CPP_MACROS or i + 1 >= len(toks) or toks[i + 1].text != "(":
            continue
        if i > 0 and toks[i - 1].text == "define":
            continue
        args, _ = _split_args(toks, i + 1)
        macro = t.text
        exc = "RuntimeError"
        if macro in ("TORCH_CHECK_WITH", "C10_THROW_ERROR", "C10D_THROW_ERROR"):
            if not args:
                continue
            etype = _cpp_text(args[0])
            exc = CPP_ERROR_TYPES.get(etype.split("::")[-1], "RuntimeError")
            args = args[1:]
        if macro in ("TORCH_CHECK", "TORCH_CHECK_WITH", "TORCH_INTERNAL_ASSERT"):
            cond, msg_args = (args[0], args[1:]) if args else ([], [])
        else:
            cond, msg_args = [], args
        msg, lit = "", False
        for a in msg_args:
            s, l2 = _cpp_render(a, toks, i)
            msg += s
            lit = lit or l2
        if macro == "TORCH_INTERNAL_ASSERT":
            msg = f'{_cpp_text(cond)} INTERNAL ASSERT FAILED at "{path}":{t.line}, please report a bug to PyTorch. {msg}'.rstrip()
            lit = True
        elif not msg_args and macro in ("TORCH_CHECK", "TORCH_CHECK_WITH"):
            msg = (f"Expected {_cpp_text(cond)} to be true, but got false.  (Could this error message be improved?  "
                   "If so, please report an enhancement request to PyTorch.)")
            lit = True
        if not lit:
            continue
        sites.append(Site(path, t.line, macro, exc, msg, "<c++>", _first_line(lines, t.line), _cpp_text([x for a in msg_args for x in a])))
    return sites
