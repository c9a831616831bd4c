"""TileLang solutions: a Python file whose entry point calls a tilelang-compiled kernel."""
from __future__ import annotations

from typing import Any, Callable

from harness.measure.devices import Device
from harness.spec.model import Solution
from harness.execute.solutions.common import entry, load_module, require


def build(solution: Solution, device: Device) -> Callable[..., Any]:
    require("tilelang", "tilelang")
    module = load_module(solution.entry_file, solution.name)
    return entry(module, solution.entry_symbol, solution.entry_file.name)
