"""An in-place operation, as SOL-ExecBench's L1/018 (a KV-cache update) is one: what its trusted reference
updates and returns, a solution may update and return too, and every timed call finds the input as it was
made, as upstream's per-call clones give it; any other input a solution changes is still INPUT_MUTATED
(real workers, CPU)."""
from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from factories import FAST_BENCH
from harness.run.runner import Runner, RunOptions
from harness.spec.manifest import load_manifest

# not idempotent, and acc fixed data (ones: not redrawn before a timed call), so only a restore keeps it right
REFERENCE = "import torch\n\ndef run(acc, x):\n    acc.add_(x)\n    return acc\n"
SOLUTIONS = {  # name: (source, expected status)
    "in-place": ("def run(acc, x):\n    acc.add_(x)\n    return acc\n", "PASSED"),
    "fresh": ("def run(acc, x):\n    return acc + x\n", "PASSED"),
    "twice": ("def run(acc, x):\n    acc.add_(x)\n    acc.add_(x)\n    return acc - x\n", "PASSED"),
    "changes-x": ("def run(acc, x):\n    x.mul_(2)\n    return acc + x / 2\n", "INPUT_MUTATED"),
}


@pytest.fixture(scope="module")
def traces(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    tmp = tmp_path_factory.mktemp("inplace")
    sols = []
    for name, (source, _) in SOLUTIONS.items():
        (tmp / f"{name.replace('-', '_')}.py").write_text(source)
        sols.append({"name": name, "language": "pytorch", "entry_point": f"{tmp / name.replace('-', '_')}.py::run"})
    doc = {"schema_version": 1,
           "definition": {"name": "accumulate", "axes": {"n": {"type": "var"}},
                          "inputs": {"acc": {"shape": ["n"], "dtype": "float32"}, "x": {"shape": ["n"], "dtype": "float32"}},
                          "outputs": {"acc_out": {"shape": ["n"], "dtype": "float32"}}, "reference": REFERENCE},
           "workloads": [{"id": "n4096", "axes": {"n": 4096}, "inputs": {"acc": {"type": "ones"}}}], "solutions": sols, "bench": FAST_BENCH}
    (tmp / "acc.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))
    report = Runner(load_manifest(tmp / "acc.yaml"), RunOptions(device="cpu", run_seed=7, log_dir=tmp / "logs")).run()
    return {t.solution: t for t in report.traces}


@pytest.mark.parametrize("name", list(SOLUTIONS))
def test_status(traces: dict, name: str) -> None:
    trace = traces[name]
    assert str(trace.status) == SOLUTIONS[name][1], f"{name}: {trace.status} {trace.message}"
    if SOLUTIONS[name][1] == "PASSED":
        assert trace.correctness["updated_in_place"] == ["acc"] and trace.correctness["timed_rechecks"]
    else:
        assert "x" in trace.message and "acc" not in trace.message
