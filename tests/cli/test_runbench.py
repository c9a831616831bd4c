"""`opbench run-bench`: the Ascend workflow's runner contract on the CPU (real workers, real torch):
the perf file and its JSONL artifact, the `Perf file:` line, a baseline comparison, exit codes, and
kernel attribution that cannot undercount (header names united with the operator's own kernels)."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from harness.cli import main
from harness.execute.benchmodule import parse_header
from harness.spec.benchlint import kernel_sources, operator_kernels
from harness.measure.profilers.attribution import AttributionError, KernelRecord, attribute, attribute_total_op
from factories import ROOT

FIELDS = {"case_label", "kernel_names", "kernel_source", "kernel_avg_time_us", "ops", "total_op_avg_time_us",
          "error_message", "case_wall_clock_seconds", "bench_mode"}


@pytest.fixture
def pair(tmp_path: Path) -> Path:
    """The shipped CPU-capable bench module and its operator, copied where their perf files may go."""
    for f in (ROOT / "manifests" / "bench_rmsnorm_torch").glob("*.py"):
        shutil.copy(f, tmp_path / f.name)
    return tmp_path


def run_bench(folder: Path, *extra: str) -> int:
    return main(["run-bench", "--bench-file", str(folder / "bench_rmsnorm_torch.py"), "--operator-file",
                 str(folder / "rmsnorm_torch.py"), "--device", "cpu", "--max-time-s", "0.3", "--quiet",
                 "--out", str(folder / "out"), *extra])


def test_run_bench_writes_the_perf_file_and_artifact_the_workflow_reads(pair: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run_bench(pair, "--bench-mode", "torch-profiler", "-m", "all") == 0
    out = capsys.readouterr().out
    perf = pair / "rmsnorm_torch_perf.txt"
    assert f"Perf file: {perf.resolve()}" in out
    lines = [json.loads(l) for l in (pair / "rmsnorm_torch_perf.jsonl").read_text().splitlines()]
    assert [l["case_label"] for l in lines] == ["b16-h512-fp32", "b256-h4096-fp32"]  # declared order
    assert all(set(l) == FIELDS and not l["error_message"] and l["kernel_avg_time_us"] > 0 for l in lines)
    assert lines[0]["kernel_source"] == {"aten::rms_norm": "header"}
    assert lines[0]["total_op_avg_time_us"] >= lines[0]["kernel_avg_time_us"] * 0.5 and lines[0]["ops"]
    assert "total kernel time over 2 case(s)" in perf.read_text()
    assert list((pair / "out" / "rmsnorm_torch").glob("*.json"))  # the full opbench report beside it


def test_a_baseline_gives_per_case_lines_a_geomean_and_pass(pair: Path, capsys: pytest.CaptureFixture[str]) -> None:
    shutil.copy(pair / "rmsnorm_torch.py", pair / "opt_rmsnorm_torch.py")
    assert run_bench(pair, "--bench-mode", "perf-counter", "--baseline-operator-file", str(pair / "opt_rmsnorm_torch.py")) == 0
    out = capsys.readouterr().out
    assert "geomean speedup:" in out and "average improvement:" in out and "metric source: total-op" in out
    assert out.strip().splitlines()[-3] == "PASS"


def test_a_baseline_with_the_candidates_stem_keeps_its_own_report(pair: Path) -> None:
    """The same operator as its own baseline (or opt/rmsnorm.py against rmsnorm.py): two full reports,
    the baseline's not written over the candidate's."""
    assert run_bench(pair, "--bench-mode", "perf-counter", "--baseline-operator-file", str(pair / "rmsnorm_torch.py")) == 0
    reports = {f.parent.name: json.loads(f.read_text()) for f in (pair / "out").glob("*/*.json")}
    assert set(reports) == {"rmsnorm_torch", "rmsnorm_torch-baseline"}
    assert all(len(r["traces"]) == 2 for r in reports.values())


def test_exact_repeats_takes_each_cases_repeats_and_no_more(pair: Path) -> None:
    """Events mode: `repeats` is the least number of samples by default (the stopping rule may take
    more); --exact-repeats follows the workflow, exactly `repeats` samples a case (30 here)."""
    assert run_bench(pair, "--bench-mode", "events", "--exact-repeats") == 0
    report = json.loads(next((pair / "out" / "rmsnorm_torch").glob("*.json")).read_text())
    timed = [t["timing"] for t in report["traces"]]
    assert [t["n"] for t in timed] == [30, 30] and all("exactly 30 samples" in t["stop_reason"] for t in timed)


def test_a_failed_case_stops_the_rest_unless_skip_error_and_still_writes_the_artifact(pair: Path) -> None:
    bench = pair / "bench_rmsnorm_torch.py"
    bench.write_text(bench.read_text().replace(
        "    return lambda: operator_api(x, w)",
        "    if case['batch'] == 16:\n        return lambda: operator_api(x[:, :3], w)  # shapes that do not fit\n"
        "    return lambda: operator_api(x, w)"))
    assert run_bench(pair) == 1
    lines = [json.loads(l) for l in (pair / "rmsnorm_torch_perf.jsonl").read_text().splitlines()]
    assert lines[0]["error_message"].startswith("RUNTIME_ERROR") and lines[1]["error_message"].startswith("SKIPPED")
    assert run_bench(pair, "--skip-error") == 1
    lines = [json.loads(l) for l in (pair / "rmsnorm_torch_perf.jsonl").read_text().splitlines()]
    assert lines[0]["error_message"] and not lines[1]["error_message"] and lines[1]["total_op_avg_time_us"] > 0


def test_usage_errors_exit_2(pair: Path) -> None:
    assert main(["run-bench", "--bench-file", str(pair / "nope.py"), "--operator-file", str(pair / "rmsnorm_torch.py"),
                 "--device", "cpu"]) == 2
    assert run_bench(pair, "-m", "kernel") == 2  # events mode times whole calls: there is no kernel metric


OPERATOR = '''import triton
import triton.language as tl


@triton.autotune(configs=[], key=["n"])
@triton.jit
def rms_fwd(x_ptr, n):
    pass


@triton.jit
def rms_stats_v2(x_ptr, n):  # renamed in an optimisation round; the header still says rms_stats
    pass


def rmsnorm(x):
    return x
'''


def test_the_kernels_counted_are_the_headers_and_the_operators_own() -> None:
    found = operator_kernels(OPERATOR)
    assert found == ("rms_fwd", "rms_stats_v2")
    header = parse_header("# api-name: rmsnorm\n# api-kind: triton-wrapper\n# kernel: rms_fwd, rms_stats\n", "b.py")
    assert kernel_sources(header.kernels, found) == {"rms_fwd": "header+operator", "rms_stats": "header",
                                                     "rms_stats_v2": "operator"}


def test_a_header_kernel_that_never_ran_is_an_error_not_a_smaller_time() -> None:
    rows = [KernelRecord("rms_fwd", 1.0, float(i)) for i in range(4)] + \
           [KernelRecord("rms_stats_v2", 0.9, i + 0.5) for i in range(4)]
    counted = attribute(rows, ("rms_fwd", "rms_stats_v2"), calls=4)
    assert counted.samples_ms == [pytest.approx(1.9e-3)] * 4  # both kernels of each call
    with pytest.raises(AttributionError, match="rms_stats named in the header never ran"):
        attribute(rows, ("rms_fwd", "rms_stats", "rms_stats_v2"), calls=4, required=("rms_fwd", "rms_stats"))



def test_total_op_alone_counts_all_device_work_but_the_flush_and_needs_no_names() -> None:
    rows = [KernelRecord("elementwise", 2.0, float(i)) for i in range(4)] + \
           [KernelRecord("reduce", 1.0, i + 0.5) for i in range(4)] + [KernelRecord("flush", 50.0, i + 0.7) for i in range(4)]
    att = attribute_total_op(rows, calls=4, harness_ops=("flush",))
    assert att.total_op_us == pytest.approx(3.0) and att.samples_ms == [pytest.approx(3e-3)] and not att.kernels
    with pytest.raises(AttributionError, match="no device work"):
        attribute_total_op([KernelRecord("flush", 5.0, 0.0)], calls=1, harness_ops=("flush",))


def test_a_torch_module_written_by_bench_gen_runs_in_a_profiler_mode_with_total_op(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """bench-gen's header names the Model (a torch-module has no kernels of its own): the kernel metric
    cannot attribute it and says how to time it; -m total-op times all of its device work."""
    for f in (ROOT / "manifests" / "bench_rmsnorm_module").glob("*.py"):
        shutil.copy(f, tmp_path / f.name)
    args = ["run-bench", "--bench-file", str(tmp_path / "bench_rmsnorm_model.py"), "--operator-file",
            str(tmp_path / "rmsnorm_model.py"), "--device", "cpu", "--bench-mode", "torch-profiler", "--quiet",
            "--out", str(tmp_path / "out")]
    assert main([*args, "-m", "kernel"]) == 1
    assert "-m total-op" in capsys.readouterr().out
    assert main([*args, "-m", "total-op"]) == 0
    line = json.loads((tmp_path / "rmsnorm_model_perf.jsonl").read_text())
    assert line["kernel_avg_time_us"] is None and line["total_op_avg_time_us"] > 0 and not line["error_message"]
    assert {o["op_type"] for o in line["ops"]} >= {"aten::mul", "aten::mean"}


LINTED = '''# api-name: rmsnorm
# api-kind: torch-function
# kernels: aten::rms_norm
import numpy as np
import torch
import rmsnorm_torch

torch.manual_seed(0)


def build_operator_api(operator_module):
    return operator_module.rmsnorm


def build_bench_cases():
    return [{"id": "a", "x": torch.randn(4, 8), "n": int(np.random.randint(3))}]


def build_bench_case_fn(operator_api, case):
    x = torch.randn(4, 8)
    w = torch.ones(8)

    def timed():
        y = operator_api(x, w)
        torch.cuda.synchronize()
        print(y.sum().item())
    return timed
'''


def test_the_lint_names_every_broken_rule_with_file_and_line(pair: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (pair / "bench_rmsnorm_torch.py").write_text(LINTED)
    assert run_bench(pair) == 2
    err = capsys.readouterr().err
    bench = pair / "bench_rmsnorm_torch.py"
    for line, words in ((6, "imports the operator 'rmsnorm_torch' itself"), (8, "runs code at import"),
                        (16, "build_bench_cases builds tensors (torch.randn)"), (16, "np.random.randint() without a seed"),
                        (25, "synchronizes"), (26, "prints"), (26, "copies to the host")):
        assert f"{bench}:{line}: " in err and words in err, (line, words, err)


def test_an_api_from_elsewhere_than_the_operator_file_is_refused(pair: Path) -> None:
    from harness.execute.benchmodule import BenchModuleError, load_bench
    from harness.measure.devices.cpu import CpuDevice
    bench = pair / "bench_rmsnorm_torch.py"
    bench.write_text(bench.read_text().replace("return operator_module.rmsnorm", "return torch.nn.functional.rms_norm"))
    with pytest.raises(BenchModuleError, match="defined in 'torch.nn.functional', not in the operator file"):
        load_bench(pair / "rmsnorm_torch.py", bench, CpuDevice())
