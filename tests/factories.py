"""Manifest documents for tests: small problems built in memory (imported by test modules;
conftest.py only holds fixtures, since a sub-folder conftest would shadow it as a module)."""
from __future__ import annotations

from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SOLUTIONS = Path(__file__).resolve().parent / "solutions"
FIXTURES = Path(__file__).resolve().parent / "fixtures"

# Loose, short timing so runner tests finish in seconds on a 2-core CI machine. The timeouts only guard
# against a real hang (none of these solutions should hit one, however loaded the machine), so they are
# generous; a test about timeouts sets its own short run_timeout_s for the solution that hangs.
FAST_BENCH: dict[str, Any] = {"max_time_s": 0.3, "min_samples": 3, "rse_threshold": 0.5, "correctness_rounds": 2,
                              "warmup_count": 1, "warmup_ms": 0, "compile_timeout_s": 300, "run_timeout_s": 120,
                              "chunk": 3}

AXPY_REFERENCE = "import torch\n\ndef run(x, w):\n    return x * w + 1.0\n"


def axpy_document(solutions: list[dict[str, Any]], bench: dict[str, Any] | None = None, n: int = 4096) -> dict[str, Any]:
    return {
        "schema_version": 1,
        "definition": {
            "name": "axpy", "description": "y = x * w + 1",
            "axes": {"n": {"type": "var"}},
            "inputs": {"x": {"shape": ["n"], "dtype": "float32"}, "w": {"shape": ["n"], "dtype": "float32"}},
            "outputs": {"y": {"shape": ["n"], "dtype": "float32"}},
            "reference": AXPY_REFERENCE,
        },
        "workloads": [{"id": "n4096", "axes": {"n": n}}],
        "solutions": solutions,
        "bench": {**FAST_BENCH, **(bench or {})},
    }


def solution(name: str, file: str, **extra: Any) -> dict[str, Any]:
    return {"name": name, "language": "pytorch", "entry_point": f"{SOLUTIONS / file}::run", **extra}
