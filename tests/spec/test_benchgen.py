"""`opbench bench-gen`: the entrypoint resolved from the source alone in the workflow's order, refusals
with their reason, and a generated module that is deterministic, passes the lint and runs."""
from __future__ import annotations

from pathlib import Path

import pytest

from harness.cli import main
from harness.spec.benchgen import BenchGenError, Entrypoint, resolve
from harness.spec.benchlint import lint

TRITON = '''import torch
import triton
import triton.language as tl


@triton.jit
def _scale_kernel(x_ptr, n):
    pass


def scale(x):
    _scale_kernel[(1,)](x, x.numel())
    return x


def _helper(x):
    return x
'''
MODEL = '''import torch


class Model(torch.nn.Module):
    def __init__(self, dim=64):
        super().__init__()
        self.w = torch.nn.Parameter(torch.ones(dim))

    def forward(self, x):
        return x * self.w


def model_fn(x):
    return x * 2


def get_inputs():
    return [torch.randn(8, 64)]
'''


@pytest.mark.parametrize("source,stem,want", [
    (TRITON, "scale", Entrypoint("scale", "triton-wrapper")),
    (MODEL, "op", Entrypoint("Model", "torch-module")),  # a no-argument Model wins over a function
    ("def rmsnorm(x):\n    return x\n\ndef _h(x):\n    return x\n", "op", Entrypoint("rmsnorm", "torch-function")),
])
def test_the_entrypoint_is_resolved_in_the_workflows_order(source: str, stem: str, want: Entrypoint) -> None:
    assert resolve(source, stem) == want


@pytest.mark.parametrize("source,words", [
    ("import torch\nclass A(torch.nn.Module):\n    pass\nclass B(torch.nn.Module):\n    pass\n", "ambiguous: torch.nn.Modules A, B"),
    ("import torch\nclass A(torch.nn.Module):\n    def __init__(self, dim):\n        pass\n", "needs constructor arguments (dim)"),
    ("def f(x):\n    return x\n\ndef g(x):\n    return x\n", "ambiguous: public functions f, g"),
])
def test_an_entrypoint_that_would_be_a_guess_is_refused(source: str, words: str) -> None:
    with pytest.raises(BenchGenError, match=words.replace("(", r"\(").replace(")", r"\)")):
        resolve(source, "op")


def test_a_generated_module_is_deterministic_passes_the_lint_and_runs(tmp_path: Path) -> None:
    op = tmp_path / "op.py"
    op.write_text(MODEL)
    assert main(["bench-gen", str(op)]) == 0
    bench = tmp_path / "bench_op.py"
    first = bench.read_text()
    assert main(["bench-gen", str(op)]) == 0 and bench.read_text() == first
    assert "# api-kind: torch-module" in first and not lint(bench, op, "torch-module")
    assert main(["run-bench", "--bench-file", str(bench), "--operator-file", str(op), "--device", "cpu",
                 "--max-time-s", "0.2", "--quiet", "--out", str(tmp_path / "out")]) == 0
    assert (tmp_path / "op_perf.jsonl").read_text().count("case_label") == 1


def test_cases_come_from_a_manifests_workloads(tmp_path: Path) -> None:
    from factories import ROOT
    op = tmp_path / "rmsnorm_torch.py"
    op.write_text((ROOT / "manifests" / "bench_rmsnorm_torch" / "rmsnorm_torch.py").read_text())
    assert main(["bench-gen", str(op), "--manifest", str(ROOT / "manifests" / "rmsnorm.yaml"),
                 "--out", str(tmp_path / "b.py")]) == 0
    text = (tmp_path / "b.py").read_text()
    assert "'id': 'medium-fp32', 'seed': 3" in text and "['x', [256, 4096], 'float32']" in text


def test_unknown_inputs_are_bad_input(tmp_path: Path) -> None:
    op = tmp_path / "op.py"
    op.write_text("def f(x):\n    return x\n")
    assert main(["bench-gen", str(op)]) == 2
