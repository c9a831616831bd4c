"""A tiny CPU workspace for the launcher tests: an axpy manifest and its PyTorch solution, side by side."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

FAST_BENCH = {"max_time_s": 0.3, "min_samples": 3, "rse_threshold": 0.5, "correctness_rounds": 2,
              "warmup_count": 1, "warmup_ms": 0, "run_timeout_s": 60}
# exported by the stub CANN set_env.sh of the NPU image test; ASCEND_RT_VISIBLE_DEVICES is recorded in reports
FAKE_CANN_ENV = "fake-cann-set-env"
SOLUTION = "def run(x, w):\n    return x * w + 1.0\n"


def write_workspace(root: Path) -> Path:
    """A workspace with an axpy manifest and one PyTorch solution beside it; returns the manifest."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "axpy_solution.py").write_text(SOLUTION)
    doc: dict[str, Any] = {
        "schema_version": 1,
        "definition": {"name": "axpy", "description": "y = x * w + 1", "axes": {"n": {"type": "var"}},
                       "inputs": {"x": {"shape": ["n"], "dtype": "float32"}, "w": {"shape": ["n"], "dtype": "float32"}},
                       "outputs": {"y": {"shape": ["n"], "dtype": "float32"}},
                       "reference": "import torch\n\ndef run(x, w):\n    return x * w + 1.0\n"},
        "workloads": [{"id": "n1024", "axes": {"n": 1024}}],
        "solutions": [{"name": "torch-axpy", "language": "pytorch", "entry_point": "axpy_solution.py::run"}],
        "bench": FAST_BENCH,
    }
    manifest = root / "axpy.yaml"
    manifest.write_text(yaml.safe_dump(doc, sort_keys=False))
    return manifest
