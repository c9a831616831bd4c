"""Operator bench modules: the contract, its validation, and running its cases in a bench mode.

A bench module (`bench_<op>.py` beside `<op>.py`) starts with a header
    # api-name: rmsnorm
    # api-kind: triton-wrapper        (triton-wrapper | tilelang-wrapper | torch-function | torch-module)
    # kernels: rmsnorm, rmsnorm_bwd   (comma-separated; `<name>_kernel` counts too; `# kernel:` as well)
is import-only, and exports three hooks:
    build_operator_api(operator_module) -> the API to time (a torch-module class is built as
                                           cls().to(device).eval(), i.e. .npu()/.cuda()/plain)
    build_bench_cases() -> at most 20 deterministic dicts with a unique `id` and optional
                           `warmup` (default 5), `repeats` (default 50), `seed`
    build_bench_case_fn(operator_api, case) -> a zero-argument callable; setup happens outside it,
                           and it neither checks results, synchronizes nor prints.
Every problem found is reported at once (`BenchModuleError.problems`).
"""
from __future__ import annotations

import inspect
import random
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any, Callable

from harness.errors import InputError

API_KINDS = ("triton-wrapper", "tilelang-wrapper", "torch-function", "torch-module")
HOOKS = {"build_operator_api": 1, "build_bench_cases": 0, "build_bench_case_fn": 2}  # required positional params
MAX_CASES = 20
DEFAULT_WARMUP, DEFAULT_REPEATS = 5, 50
HEADER_RE = re.compile(r"^#\s*(api-name|api-kind|kernels|kernel)\s*:\s*(.*?)\s*$")
IDENT_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
KERNEL_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_:.]*$")  # triton/tilelang names, or aten::op for CPU ops


class BenchModuleError(InputError):
    """Every problem of one bench module, reported at once."""

    def __init__(self, origin: str, problems: list[str]):
        self.origin = origin
        self.problems = list(problems)
        super().__init__(f"{origin}: " + "; ".join(self.problems))

    def lines(self) -> list[str]:
        return [f"invalid bench module {self.origin}: {len(self.problems)} problem(s)", *(f"  {p}" for p in self.problems)]


@dataclass(frozen=True)
class Header:
    api_name: str
    api_kind: str
    kernels: tuple[str, ...]


@dataclass(frozen=True)
class BenchCase:
    id: str
    params: dict[str, Any]
    warmup: int = DEFAULT_WARMUP
    repeats: int = DEFAULT_REPEATS
    seed: int = 0


def parse_header(text: str, origin: str) -> Header:
    """Read the header from the leading comment block (blank lines and other comments allowed)."""
    found: dict[str, str] = {}
    problems: list[str] = []
    for line in text.splitlines():
        stripped = line.strip()
        if stripped and not stripped.startswith("#"):
            break
        m = HEADER_RE.match(stripped)
        if m:
            key = "kernels" if m.group(1) == "kernel" else m.group(1)  # the workflow accepts the singular
            if key in found:
                problems.append(f"'# {m.group(1)}:' appears twice" if m.group(1) != "kernel" or "kernels" not in found
                                else "'# kernel:' and '# kernels:' both given")
            found[key] = m.group(2)
    for key in ("api-name", "api-kind", "kernels"):
        if key not in found:
            problems.append(f"missing header line '# {key}: ...' in the leading comment block")
    name, kind = found.get("api-name", ""), found.get("api-kind", "")
    kernels = tuple(k.strip() for k in found.get("kernels", "").split(",") if k.strip())
    if "api-name" in found and not IDENT_RE.match(name):
        problems.append(f"api-name {name!r} is not a Python identifier")
    if "api-kind" in found and kind not in API_KINDS:
        problems.append(f"api-kind {kind!r} is not one of {', '.join(API_KINDS)}")
    if "kernels" in found and not kernels:
        problems.append("'# kernels:' names no kernel")
    problems += [f"kernel name {k!r} is not a valid kernel name" for k in kernels if not KERNEL_RE.match(k)]
    if problems:
        raise BenchModuleError(origin, problems)
    return Header(name, kind, kernels)


def check_hooks(module: ModuleType, origin: str) -> None:
    problems = []
    for hook, arity in HOOKS.items():
        fn = getattr(module, hook, None)
        if fn is None:
            problems.append(f"missing hook {hook}()")
            continue
        if not callable(fn):
            problems.append(f"{hook} is not callable")
            continue
        try:
            params = inspect.signature(fn).parameters.values()
        except (TypeError, ValueError):
            continue
        required = [p for p in params if p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        if len(required) != arity:
            problems.append(f"{hook} must take {arity} argument(s), takes {len(required)}")
    if problems:
        raise BenchModuleError(origin, problems)


def _has_object_from(module: ModuleType, package: str) -> bool:
    return any(type(v).__module__.split(".")[0] == package for v in vars(module).values())


def check_api_kind(operator: ModuleType, header: Header, origin: str) -> None:
    """The operator module exports `api-name`, of the shape `api-kind` promises."""
    import torch

    obj = getattr(operator, header.api_name, None)
    if obj is None:
        raise BenchModuleError(origin, [f"operator module exports no {header.api_name!r} (the header's api-name)"])
    kind, problems = header.api_kind, []
    if kind == "torch-module":
        if not (isinstance(obj, type) and issubclass(obj, torch.nn.Module)):
            problems.append(f"api-kind torch-module needs {header.api_name!r} to be a torch.nn.Module subclass")
    elif isinstance(obj, type) or not callable(obj):
        problems.append(f"api-kind {kind} needs {header.api_name!r} to be a function")
    if kind == "triton-wrapper" and not _has_object_from(operator, "triton"):
        problems.append("api-kind triton-wrapper, but the operator module defines no @triton.jit kernel")
    if kind == "tilelang-wrapper" and "tilelang" not in sys.modules:
        problems.append("api-kind tilelang-wrapper, but the operator module does not import tilelang")
    if problems:
        raise BenchModuleError(origin, problems)


REQUIRED_PACKAGE = {"triton-wrapper": "triton", "tilelang-wrapper": "tilelang"}


def build_module_api(api: Any, device: Any) -> Any:
    """torch-module entry points: `cls()` moved to the device (`.npu()` / `.cuda()` / plain) in eval
    mode; a bound method of a module (`Model().forward`) has its module moved and stays bound."""
    import torch
    if inspect.ismethod(api) and isinstance(api.__self__, torch.nn.Module):
        api.__self__.to(device.torch_device).eval()
        return api
    if isinstance(api, type) and issubclass(api, torch.nn.Module):
        api = api()
    return api.to(device.torch_device).eval()


def parse_cases(raw: Any, origin: str) -> list[BenchCase]:
    if inspect.isgenerator(raw) or isinstance(raw, type(iter(()))):  # the workflow accepts a generator too
        raw = [c for _, c in zip(range(MAX_CASES + 1), raw)]
    if not isinstance(raw, (list, tuple)):
        raise BenchModuleError(origin, [f"build_bench_cases() must return a list of dicts, got {type(raw).__name__}"])
    problems: list[str] = []
    if not raw:
        problems.append("build_bench_cases() returned no cases")
    if len(raw) > MAX_CASES:
        problems.append(f"build_bench_cases() returned {len(raw)} cases; at most {MAX_CASES} are allowed")
    cases, seen = [], set()
    for i, c in enumerate(raw):
        where = f"case [{i}]"
        if not isinstance(c, dict):
            problems.append(f"{where} is a {type(c).__name__}, not a dict")
            continue
        cid = c.get("id")
        if not isinstance(cid, str) or not cid:
            problems.append(f"{where} has no string 'id'")
            continue
        if cid in seen:
            problems.append(f"case id {cid!r} is not unique")
        seen.add(cid)
        counts = {}
        for key, default, low in (("warmup", DEFAULT_WARMUP, 0), ("repeats", DEFAULT_REPEATS, 1), ("seed", 0, None)):
            v = c.get(key, default)
            if isinstance(v, bool) or not isinstance(v, int) or (low is not None and v < low):
                problems.append(f"case {cid!r}: {key} must be an integer" + (f" >= {low}" if low is not None else "")
                                + f", got {v!r}")
                v = default
            counts[key] = v
        cases.append(BenchCase(cid, dict(c), **counts))
    if problems:
        raise BenchModuleError(origin, problems)
    return cases


@dataclass
class LoadedBench:
    """A validated bench module bound to its operator and a device; builds case callables."""

    header: Header
    bench: ModuleType
    operator: ModuleType
    api: Any
    origin: str
    device: Any = None
    _cases: list[BenchCase] = field(default_factory=list)

    def cases(self) -> list[BenchCase]:
        if not self._cases:
            first = parse_cases(self.bench.build_bench_cases(), self.origin)
            again = parse_cases(self.bench.build_bench_cases(), self.origin)
            if [(c.id, repr(c.params)) for c in first] != [(c.id, repr(c.params)) for c in again]:
                raise BenchModuleError(self.origin, ["build_bench_cases() is not deterministic: two calls differ"])
            self._cases = first
        return self._cases

    def case_fn(self, case: BenchCase) -> Callable[[], Any]:
        import torch
        torch.manual_seed(case.seed)
        random.seed(case.seed)
        fn = self.bench.build_bench_case_fn(self.api, dict(case.params))
        if not callable(fn):
            raise BenchModuleError(self.origin, [f"build_bench_case_fn returned {type(fn).__name__} for case "
                                                 f"{case.id!r}, not a zero-argument callable"])
        try:
            params = inspect.signature(fn).parameters.values()
            required = [p for p in params if p.default is p.empty and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
        except (TypeError, ValueError):
            required = []
        if required:
            raise BenchModuleError(self.origin, [f"the callable for case {case.id!r} takes arguments "
                                                 f"({', '.join(p.name for p in required)}); it must take none"])
        return fn


def provenance(api: Any) -> str:
    """The module an API was defined in: a function's or class's own; a bound method's or a
    functools.partial's function's; an instance's class's (a built Model, a triton JITFunction)."""
    import functools
    while isinstance(api, functools.partial):
        api = api.func
    if inspect.ismethod(api):
        api = api.__func__
    if inspect.isfunction(api) or inspect.isclass(api) or inspect.isbuiltin(api):
        return str(getattr(api, "__module__", "") or "")
    return type(api).__module__


def default_bench_file(operator_file: Path) -> Path:
    return operator_file.with_name(f"bench_{operator_file.name}")


def load_bench(operator_file: Path, bench_file: Path | None, device: Any) -> LoadedBench:
    """Validate header and hooks, import the operator (torch and torch_npu already imported by the
    device's setup, as torch_npu requires), and build the operator API for `device`."""
    from harness.execute.solutions.common import BuildError, load_module, require

    operator_file = Path(operator_file).resolve()
    bench_file = Path(bench_file).resolve() if bench_file else default_bench_file(operator_file)
    origin = str(bench_file)
    for f in (operator_file, bench_file):
        if not f.is_file():
            raise BenchModuleError(str(f), ["file does not exist"])
    header = parse_header(bench_file.read_text(), origin)
    try:
        if header.api_kind in REQUIRED_PACKAGE:
            require(REQUIRED_PACKAGE[header.api_kind], header.api_kind)
        bench = load_module(bench_file, "bench")
        check_hooks(bench, origin)
        operator = load_module(operator_file, "operator")
    except BuildError as exc:
        raise BenchModuleError(origin, [str(exc)]) from exc
    check_api_kind(operator, header, str(operator_file))
    api = bench.build_operator_api(operator)
    if api is None:
        raise BenchModuleError(origin, ["build_operator_api returned None"])
    where = provenance(api)
    if where != operator.__name__:
        raise BenchModuleError(origin, [f"build_operator_api returned an API defined in {where!r}, not in the operator "
                                        f"file {operator_file.name} (an optimisation round would time the wrong code)"])
    if header.api_kind == "torch-module":
        import torch
        bound = inspect.ismethod(api) and isinstance(api.__self__, torch.nn.Module)
        if not ((isinstance(api, type) and issubclass(api, torch.nn.Module)) or isinstance(api, torch.nn.Module) or bound):
            raise BenchModuleError(origin, [f"api-kind torch-module: build_operator_api returned "
                                            f"{type(api).__name__}, not a torch.nn.Module (class or instance)"])
        api = build_module_api(api, device)
    elif not callable(api):
        raise BenchModuleError(origin, [f"build_operator_api returned {type(api).__name__}, which is not callable"])
    return LoadedBench(header, bench, operator, api, origin, device)
