"""bench/harness_cost.py on the CPU: its generated problem is a valid manifest, and a real run of it
prints the per-row table from the traces' `cost_s` (what the script reports on the GPU too)."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from harness.spec.manifest import load_manifest

SCRIPT = Path(__file__).resolve().parents[2] / "bench" / "harness_cost.py"


@pytest.fixture(scope="module")
def hc():
    spec = importlib.util.spec_from_file_location("harness_cost", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules["harness_cost"] = module
    spec.loader.exec_module(module)
    yield module
    sys.modules.pop("harness_cost", None)


def test_the_generated_problem_is_a_valid_manifest(hc, tmp_path: Path) -> None:
    m = load_manifest(hc.add_manifest(tmp_path, 1.0))
    assert m.workloads[0].axes["n"] == (1 << 30) // 4 and m.solutions[0].name == "torch-add"


def test_a_cpu_run_prints_each_rows_cost(hc, tmp_path: Path, capsys) -> None:
    manifest = hc.add_manifest(tmp_path, 1 / 1024)  # 1 MiB tensors
    hc.main([str(manifest), "--device", "cpu", "--out", str(tmp_path / "out")])
    printed = capsys.readouterr().out
    row = next(line for line in printed.splitlines() if line.startswith("| torch-add / "))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[1] == "PASSED" and float(cells[2]) > 0 and float(cells[3]) > 0  # total, and the first row's build
    assert (tmp_path / "out" / "harness_cost.json").is_file()


def test_overhead_is_issue_13s_definition(hc) -> None:
    """Wall minus build, correctness work and the measured device time: a solution's own host work in its
    correctness calls (cudnn-graph's 0.7 s a row) is not the harness's."""
    trace = {"solution": "s", "workload": "w", "status": "PASSED",
             "cost_s": {"total": 1.0, "build": 0.1, "correctness": 0.5},
             "timing": {"measured_ms": 100.0}, "reference_timing": {"measured_ms": 100.0}}
    assert hc.row_cost(trace)["overhead"] == pytest.approx(0.2)


@pytest.mark.parametrize("argv", [["--fib-only"], ["--fib-rounds", "3"], ["--vs-fib", "--fib-rounds", "0"],
                                  ["m.yaml", "--vs-fib", "--fib-only"]])
def test_the_flashinfer_bench_options_are_checked(hc, argv: list[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        hc.main(argv)
    assert exc.value.code == 2
