"""Triton solutions: a Python file whose entry point launches @triton.jit kernels.

Triton compiles on the first call for each specialisation, so compile errors surface during the
first correctness round; the worker maps triton's CompilationError to COMPILE_ERROR.
"""
from __future__ import annotations

from typing import Any, Callable

from harness.measure.devices import Device
from harness.spec.model import Solution
from harness.execute.solutions.common import entry, load_module, require


def build(solution: Solution, device: Device) -> Callable[..., Any]:
    require("triton", "triton")
    module = load_module(solution.entry_file, solution.name)
    return entry(module, solution.entry_symbol, solution.entry_file.name)
