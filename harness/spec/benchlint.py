"""The bench-module contract's rules, checked from the source alone (AST; nothing is imported).

Run by `validate` (bench-module manifests) and `run-bench` before anything runs. Errors stop the run
(exit 2, every one listed with file:line); warnings are printed and the run goes on.

errors:   code run at import; the bench module importing the operator itself (an optimisation round
          would time the wrong file); sync, print, asserts, result checks or host copies inside the
          timed callable; tensors built in build_bench_cases (cases are plain data); a raw
          @triton.jit / tilelang kernel returned as the API
warnings: numpy's global random state used without a seed; a wrapper chosen although the operator
          has a torch.nn.Module that takes no arguments (the workflow picks the Model first)
"""
from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

TIMED_FORBIDDEN = {"synchronize": "synchronizes", "print": "prints", "allclose": "checks results",
                   "assert_close": "checks results", "item": "copies to the host", "cpu": "copies to the host",
                   "tolist": "copies to the host", "numpy": "copies to the host"}
TOP_LEVEL_OK = (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


KERNEL_DECORATORS = {("triton", "jit"), ("triton", "autotune"), ("triton", "heuristics"), ("tilelang", "jit"),
                     ("T", "prim_func"), ("tl", "jit")}  # module.attr forms; a bare `jit` / `prim_func` too


def _decorator_name(node: ast.expr) -> tuple[str, str]:
    """(module, attr) of a decorator: `triton.jit` -> (triton, jit), `jit(...)` -> ("", jit)."""
    if isinstance(node, ast.Call):
        node = node.func
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        return node.value.id, node.attr
    if isinstance(node, ast.Name):
        return "", node.id
    return "", ""


def operator_kernels(source: str) -> tuple[str, ...]:
    """Top-level kernels of an operator file, read without importing it: functions decorated with
    @triton.jit (or autotune/heuristics stacked on it), @tilelang.jit or @T.prim_func."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return ()
    out = []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for dec in node.decorator_list:
                module, attr = _decorator_name(dec)
                if (module, attr) in KERNEL_DECORATORS or (module == "" and attr in ("jit", "prim_func")):
                    out.append(node.name)
                    break
    return tuple(out)


def kernel_sources(header: tuple[str, ...], found: tuple[str, ...]) -> dict[str, str]:
    """Every kernel to count and where its name came from: the header, the operator file, or both
    (the union: a kernel renamed in an optimised operator is still counted)."""
    out = {k: "header" for k in header}
    for k in found:
        out[k] = "header+operator" if k in out else "operator"
    return out



@dataclass(frozen=True)
class Finding:
    file: str
    line: int
    level: str  # "error" | "warning"
    message: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.level}: {self.message}"


def _parse(path: Path) -> ast.Module | None:
    try:
        return ast.parse(path.read_text(), filename=str(path))
    except (SyntaxError, ValueError, OSError, UnicodeDecodeError):
        return None  # loading reports it, with the interpreter's words


def _constant(node: ast.expr) -> bool:
    """A literal, or a container/arithmetic of literals: data a module may define at import."""
    if isinstance(node, ast.Constant):
        return True
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        return all(_constant(e) for e in node.elts)
    if isinstance(node, ast.Dict):
        return all(k is not None and _constant(k) for k in node.keys) and all(_constant(v) for v in node.values)
    if isinstance(node, ast.BinOp):
        return _constant(node.left) and _constant(node.right)
    if isinstance(node, ast.UnaryOp):
        return _constant(node.operand)
    return isinstance(node, ast.Name)  # an alias of another constant


def _import_time(tree: ast.Module, file: str) -> list[Finding]:
    out = []
    for i, node in enumerate(tree.body):
        if isinstance(node, TOP_LEVEL_OK) or (i == 0 and isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)):
            continue
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None and _constant(node.value):
            continue
        if isinstance(node, ast.If) and "__name__" in ast.unparse(node.test):
            continue
        out.append(Finding(file, node.lineno, "error", f"runs code at import ({ast.unparse(node)[:60]!r}); "
                           "a bench module only defines its hooks and constants"))
    return out


def _imports_operator(tree: ast.Module, file: str, operator_stem: str) -> list[Finding]:
    out = []
    for node in ast.walk(tree):
        names = ([a.name for a in node.names] if isinstance(node, ast.Import) else
                 [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
        if any(n.split(".")[0] == operator_stem for n in names):
            out.append(Finding(file, node.lineno, "error", f"imports the operator {operator_stem!r} itself; use the "
                               "module build_operator_api receives (another round's operator is passed in there)"))
    return out


def _function(tree: ast.Module, name: str) -> ast.FunctionDef | None:
    return next((n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == name), None)


def _timed_bodies(fn: ast.FunctionDef) -> list[ast.AST]:
    """The callables build_bench_case_fn returns: `return lambda: ...`, or a nested def it returns."""
    nested = {n.name: n for n in ast.walk(fn) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n is not fn}
    out: list[ast.AST] = []
    for node in ast.walk(fn):
        if isinstance(node, ast.Return) and node.value is not None:
            if isinstance(node.value, ast.Lambda):
                out.append(node.value.body)
            elif isinstance(node.value, ast.Name) and node.value.id in nested:
                out.append(nested[node.value.id])
    return out


def _called(node: ast.Call) -> str:
    f = node.func
    return f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""


def _timed_callable(tree: ast.Module, file: str) -> list[Finding]:
    fn = _function(tree, "build_bench_case_fn")
    out = []
    for body in _timed_bodies(fn) if fn is not None else []:
        for node in ast.walk(body):
            if isinstance(node, ast.Assert):
                out.append(Finding(file, node.lineno, "error", "the timed callable asserts (checks belong outside it)"))
            elif isinstance(node, ast.Call) and _called(node) in TIMED_FORBIDDEN:
                out.append(Finding(file, node.lineno, "error", f"the timed callable {TIMED_FORBIDDEN[_called(node)]} "
                                   f"({_called(node)}()); the runner owns synchronization, and it must only run the op"))
    return out


def _case_tensors(tree: ast.Module, file: str) -> list[Finding]:
    fn = _function(tree, "build_bench_cases")
    out = []
    for node in ast.walk(fn) if fn is not None else []:
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name) \
                and node.func.value.id == "torch":
            out.append(Finding(file, node.lineno, "error", f"build_bench_cases builds tensors (torch.{node.func.attr}); "
                               "cases are plain data, tensors are made in build_bench_case_fn"))
    return out


def _numpy_seed(tree: ast.Module, file: str) -> list[Finding]:
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
             and isinstance(n.func.value, ast.Attribute) and n.func.value.attr == "random"
             and isinstance(n.func.value.value, ast.Name) and n.func.value.value.id in ("np", "numpy")]
    seeded = any(c.func.attr == "seed" or (c.func.attr == "default_rng" and c.args) for c in calls)  # type: ignore[union-attr]
    if seeded:
        return []
    return [Finding(file, c.lineno, "warning", f"np.random.{c.func.attr}() without a seed: cases differ between "  # type: ignore[union-attr]
                    "runs (seed it, or use the case's 'seed')") for c in calls[:1]]


def _returned_attr(tree: ast.Module) -> tuple[str, int] | None:
    """`return operator_module.<name>` in build_operator_api: (name, line)."""
    fn = _function(tree, "build_operator_api")
    if fn is None or not fn.args.args:
        return None
    param = fn.args.args[0].arg
    for node in ast.walk(fn):
        if isinstance(node, ast.Return) and isinstance(node.value, ast.Attribute) \
                and isinstance(node.value.value, ast.Name) and node.value.value.id == param:
            return node.value.attr, node.lineno
    return None


def _no_arg_models(operator: ast.Module) -> list[str]:
    out = []
    for node in operator.body:
        if isinstance(node, ast.ClassDef) and any("Module" in ast.unparse(b) for b in node.bases):
            init = next((n for n in node.body if isinstance(n, ast.FunctionDef) and n.name == "__init__"), None)
            if init is None or len(init.args.args) - len(init.args.defaults) <= 1:
                out.append(node.name)
    return out


def lint(bench: Path, operator: Path, api_kind: str | None = None) -> list[Finding]:
    """Every finding of the bench module against its operator, errors and warnings, in file order."""
    tree, op_tree = _parse(bench), _parse(operator)
    if tree is None:
        return []
    file = str(bench)
    found = (_import_time(tree, file) + _imports_operator(tree, file, operator.stem) + _timed_callable(tree, file)
             + _case_tensors(tree, file) + _numpy_seed(tree, file))
    returned = _returned_attr(tree)
    if op_tree is not None and returned is not None:
        name, line = returned
        if name in operator_kernels(operator.read_text()):
            found.append(Finding(file, line, "error", f"build_operator_api returns the raw kernel {name!r}; return "
                                 "the wrapper (or Model) that launches it"))
        models = _no_arg_models(op_tree)
        if models and api_kind not in (None, "torch-module") and name not in models:
            found.append(Finding(file, line, "warning", f"the operator has a torch.nn.Module that takes no arguments "
                                 f"({', '.join(models)}); the workflow benchmarks it (api-kind torch-module) before a wrapper"))
    return sorted(found, key=lambda f: f.line)
