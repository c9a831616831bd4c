"""Turn a Solution into a callable for one device; one module per language says how it is built.

Build errors are raised as `BuildError` so the worker reports COMPILE_ERROR with the compiler's words.
"""
from __future__ import annotations

from typing import Any, Callable

from ..devices import Device
from ..model import Solution
from .common import BuildError

LANGUAGES = ("pytorch", "triton", "cuda_cpp", "tilelang")


def build_solution(solution: Solution, device: Device) -> Callable[..., Any]:
    if solution.language == "pytorch":
        from .pytorch import build
    elif solution.language == "triton":
        from .triton import build
    elif solution.language == "cuda_cpp":
        from .cuda_cpp import build
    elif solution.language == "tilelang":
        from .tilelang import build
    else:
        raise BuildError(f"unknown language {solution.language!r}; expected one of {LANGUAGES}")
    return build(solution, device)


__all__ = ["BuildError", "LANGUAGES", "build_solution"]
