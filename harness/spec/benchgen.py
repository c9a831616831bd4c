"""`opbench bench-gen`: write the bench module of an operator file, from its source alone.

The public entrypoint is resolved statically, in the workflow's order: a torch.nn.Module that takes
no constructor arguments wins (api-kind torch-module); else one public wrapper function around the
file's @triton.jit / tilelang kernels (triton-wrapper, tilelang-wrapper); else one public function
(torch-function). Two candidates of the same rank, or a Model that needs constructor arguments and
nothing else, are refused with the reason: guessing would time the wrong thing.

Cases come from a manifest's workloads (`--manifest`: the definition's inputs, shapes and dtypes per
workload, each case seeded with the workload's seed), or from the operator's own `get_inputs()`
(KernelBench's convention). The module is plain text derived only from those inputs: the same
operator and manifest give the same file, and it passes the lint (spec/benchlint.py).
"""
from __future__ import annotations

import ast
import pprint
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.errors import InputError
from harness.spec.benchlint import operator_kernels

MAX_CASES = 20


class BenchGenError(InputError):
    """The operator's entrypoint cannot be resolved safely, or its inputs are unknown."""


@dataclass(frozen=True)
class Entrypoint:
    name: str
    kind: str  # torch-module | triton-wrapper | tilelang-wrapper | torch-function


def _is_module_class(node: ast.ClassDef) -> bool:
    return any(ast.unparse(b).split(".")[-1] == "Module" for b in node.bases)


def _init_required(node: ast.ClassDef) -> list[str]:
    init = next((n for n in node.body if isinstance(n, ast.FunctionDef) and n.name == "__init__"), None)
    if init is None:
        return []
    params = [a.arg for a in init.args.args[1:]]
    return params[: len(params) - len(init.args.defaults)]


def _calls(fn: ast.FunctionDef, names: set[str]) -> bool:
    """Whether `fn` launches one of `names` (`k[grid](...)` or `k(...)`)."""
    for node in ast.walk(fn):
        if isinstance(node, ast.Call):
            f = node.func.value if isinstance(node.func, ast.Subscript) else node.func
            if isinstance(f, ast.Name) and f.id in names:
                return True
    return False


def resolve(source: str, stem: str) -> Entrypoint:
    """The operator's public entrypoint, or BenchGenError saying why none can be chosen."""
    try:
        tree = ast.parse(source)
    except SyntaxError as exc:
        raise BenchGenError(f"the operator does not parse: {exc.msg} (line {exc.lineno})") from None
    kernels = set(operator_kernels(source))
    models = [n for n in tree.body if isinstance(n, ast.ClassDef) and _is_module_class(n)]
    ready = [m for m in models if not _init_required(m)]
    if len(ready) > 1:
        named = [m for m in ready if m.name == "Model"]
        if len(named) != 1:
            raise BenchGenError(f"ambiguous: torch.nn.Modules {', '.join(m.name for m in ready)} all take no arguments; "
                                "keep one public Model (or name it Model)")
        ready = named
    if ready:
        return Entrypoint(ready[0].name, "torch-module")
    public = [n for n in tree.body if isinstance(n, ast.FunctionDef) and not n.name.startswith("_")
              and n.name not in kernels and n.name not in ("get_inputs", "get_init_inputs")]
    is_tilelang = "tilelang" in source
    wrappers = [f for f in public if _calls(f, kernels)] if kernels else []
    ranked = wrappers or ([] if kernels else public)
    if len(ranked) > 1:
        named = [f for f in ranked if f.name == stem]
        if len(named) != 1:
            raise BenchGenError(f"ambiguous: public functions {', '.join(f.name for f in ranked)} could each be the "
                                f"entrypoint; keep one public (prefix helpers with _) or name it {stem!r}")
        ranked = named
    if ranked:
        kind = ("tilelang-wrapper" if is_tilelang else "triton-wrapper") if kernels else "torch-function"
        return Entrypoint(ranked[0].name, kind)
    if models:
        m = models[0]
        raise BenchGenError(f"{m.name} needs constructor arguments ({', '.join(_init_required(m))}) and there is no "
                            "wrapper function: building it would mean guessing them")
    raise BenchGenError("no public entrypoint: no torch.nn.Module without arguments, no public wrapper or function")


def cases_from_manifest(manifest: Any) -> list[dict[str, Any]]:
    """One case per workload (at most MAX_CASES): the inputs as (name, shape, dtype) or a scalar value."""
    d = manifest.definition
    out = []
    for w in manifest.workloads[:MAX_CASES]:
        inputs = []
        for name, spec in d.inputs.items():
            shape = w.shape_of(spec)
            if shape is None:
                inputs.append([name, None, w.inputs[name].params.get("value")])
            else:
                inputs.append([name, list(shape), w.dtypes[name]])
        out.append({"id": w.id, "seed": int(w.seed), "inputs": inputs})
    return out


TEMPLATE = '''# api-name: {name}
# api-kind: {kind}
# kernels: {kernels}
"""Bench module for {stem}.{name}, written by `opbench bench-gen` (edit the cases freely; keep the hooks).{note}"""
import torch

CASES = {cases}


def _device():
    if hasattr(torch, "npu") and torch.npu.is_available():
        return "npu"
    return "cuda" if torch.cuda.is_available() else "cpu"


def build_operator_api(operator_module):
    return operator_module.{name}


def build_bench_cases():
    return [dict(case) for case in CASES]


def build_bench_case_fn(operator_api, case):
{body}
'''

BODY_MANIFEST = '''    g = torch.Generator(device="cpu").manual_seed(case["seed"])
    args = []
    for _name, shape, dtype in case["inputs"]:
        if shape is None:
            args.append(dtype)  # a scalar input: its value
            continue
        kind = getattr(torch, dtype)
        if kind.is_floating_point:
            args.append(torch.randn(shape, generator=g).to(kind).to(_device()))
        else:
            args.append(torch.randint(0, 8, shape, generator=g).to(kind).to(_device()))
    return lambda: operator_api(*args)'''

BODY_GET_INPUTS = '''    import importlib
    torch.manual_seed(case["seed"])
    inputs = importlib.import_module(operator_api.__module__).get_inputs()
    args = [a.to(_device()) if isinstance(a, torch.Tensor) else a for a in inputs]
    return lambda: operator_api(*args)'''


def generate(operator: Path, manifest: Any | None = None) -> str:
    """The bench module's text (deterministic in the operator's source and the manifest)."""
    source = operator.read_text()
    entry = resolve(source, operator.stem)
    kernels = operator_kernels(source)
    if manifest is not None:
        cases, body = cases_from_manifest(manifest), BODY_MANIFEST
    elif "def get_inputs" in source:
        cases, body = [{"id": "get_inputs", "seed": 0}], BODY_GET_INPUTS
    else:
        raise BenchGenError("the inputs are unknown: pass --manifest (its workloads become the cases) or define "
                            "get_inputs() in the operator")
    # with no kernel in the file, the header names the entrypoint: profiler modes need the device
    # kernels' (or, on the CPU, the aten ops') names there; events and perf-counter do not
    note = "" if kernels else ("\n\nThe operator launches no kernel of its own (its device work is torch's), so the header names\n"
                               "the entrypoint: profiler modes time it with `run-bench -m total-op` (all device work of a call).\n")
    return TEMPLATE.format(name=entry.name, kind=entry.kind, kernels=", ".join(kernels) or entry.name, stem=operator.stem,
                           note=note,
                           cases=pprint.pformat(cases, sort_dicts=False, width=110), body=body)
