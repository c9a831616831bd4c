"""Turn a Solution into a callable for one device; one module per language says how it is built.

Build errors are raised as `BuildError` so the worker reports COMPILE_ERROR with the compiler's words.
"""
from __future__ import annotations

from typing import Any, Callable

from harness.measure.devices import Device
from harness.spec.model import Solution
from harness.execute.solutions.common import BuildError

LANGUAGES = ("pytorch", "triton", "cuda_cpp", "tilelang")


def build_solution(solution: Solution, device: Device) -> Callable[..., Any]:
    if solution.language == "pytorch":
        from harness.execute.solutions.pytorch import build
    elif solution.language == "triton":
        from harness.execute.solutions.triton import build
    elif solution.language == "cuda_cpp":
        from harness.execute.solutions.cuda_cpp import build
    elif solution.language == "tilelang":
        from harness.execute.solutions.tilelang import build
    else:
        raise BuildError(f"unknown language {solution.language!r}; expected one of {LANGUAGES}")
    return build(solution, device)


__all__ = ["BuildError", "LANGUAGES", "build_solution"]
