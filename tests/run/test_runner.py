"""Runner statuses for correct, wrong, crashing, hanging and cheating solutions (real workers, CPU)."""
from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from harness.spec.manifest import load_manifest
from harness.run.runner import Runner, RunOptions
from harness.results.trace import Status

from factories import axpy_document, solution

CASES = {
    # name: (file, extra solution fields, expected status, words the message must contain)
    "good": ("good.py", {}, Status.PASSED, ""),
    "good-dps": ("good_dps.py", {"destination_passing_style": True}, Status.PASSED, ""),
    "wrong": ("wrong.py", {}, Status.INCORRECT_NUMERICAL, "outside atol"),
    "raises": ("raises.py", {}, Status.RUNTIME_ERROR, "deliberate failure"),
    "crash": ("crash.py", {}, Status.RUNTIME_ERROR, "SIGSEGV"),
    "sleeper": ("sleeper.py", {}, Status.TIMEOUT, "did not finish"),
    "syntax": ("syntax_error.py", {}, Status.COMPILE_ERROR, "SyntaxError"),
    "shape": ("wrong_shape.py", {}, Status.INCORRECT_SHAPE, "(4095,)"),
    "dtype": ("wrong_dtype.py", {}, Status.INCORRECT_DTYPE, "float64"),
    "nan": ("nan.py", {}, Status.INCORRECT_NUMERICAL, "NaN"),
    "mutate": ("mutate_input.py", {}, Status.INPUT_MUTATED, "x"),
    "alias": ("alias_input.py", {}, Status.INPUT_MUTATED, "x"),
    "alias-view": ("alias_view.py", {}, Status.INVALID_OUTPUT, "shares memory with an input"),
    "cached-output": ("cached_output.py", {}, Status.INVALID_OUTPUT, "earlier call"),
    "cached-clone": ("cached_clone.py", {}, Status.INCORRECT_NUMERICAL, "round 2"),
    "lazy-when-timed": ("lazy_when_timed.py", {}, Status.INCORRECT_NUMERICAL, "timed sample"),
    "right-when-probed": ("right_when_probed.py", {}, Status.INCORRECT_NUMERICAL, "timed sample"),
    "pointer-cache": ("pointer_cache.py", {}, Status.INCORRECT_NUMERICAL, "outside atol"),  # a round or a timed sample
    "dps-early-exit": ("dps_early_exit.py", {"destination_passing_style": True}, Status.PASSED, ""),
    "patch-timer": ("patch_timer.py", {}, Status.TAMPERED, "elapsed_time"),
    "skip-probe": ("skip_probe.py", {}, Status.TAMPERED, "hidden_work_check"),
    "forged-activities": ("forged_activities.py", {}, Status.TAMPERED, "call_times_us"),
    "thread": ("background_thread.py", {}, Status.TAMPERED, "threads left running"),
    "pool-thread": ("pool_thread.py", {}, Status.TAMPERED, "ThreadPoolExecutor"),
    "torch-named-thread": ("torch_named_thread.py", {}, Status.TAMPERED, "pin_memory"),
    "function-mode": ("function_mode.py", {}, Status.TAMPERED, "torch modes active"),
    "subclass": ("subclass_output.py", {}, Status.INVALID_OUTPUT, "exactly torch.Tensor"),
    "oom": ("host_oom.py", {}, Status.OUT_OF_MEMORY, "allocate"),
}


# Per-call timeouts sized for what each solution does, so no status depends on how fast (or loaded) the machine
# is. The sleeper hangs for an hour: its TIMEOUT is the point, so its manifest waits only HANG_TIMEOUT_S (long
# enough for the reference's own calls, which share the limit, on a loaded machine). Every other solution
# returns, so its timeout only guards against a real hang and is generous (the harness default).
HANGS = {"sleeper"}
HANG_TIMEOUT_S = 5
RETURNS_TIMEOUT_S = 120


def _run(tmp: Path, names: list[str], run_timeout_s: float) -> list:
    sols = [solution(name, CASES[name][0], **CASES[name][1]) for name in names]
    path = tmp / "axpy.yaml"
    path.write_text(yaml.safe_dump(axpy_document(sols, {"run_timeout_s": run_timeout_s}), sort_keys=False))
    return Runner(load_manifest(path), RunOptions(device="cpu", run_seed=1234, log_dir=tmp / "logs")).run().traces


@pytest.fixture(scope="module")
def traces(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    returns = _run(tmp_path_factory.mktemp("returns"), [n for n in CASES if n not in HANGS], RETURNS_TIMEOUT_S)
    hangs = _run(tmp_path_factory.mktemp("hangs"), sorted(HANGS), HANG_TIMEOUT_S)
    return {t.solution: t for t in [*returns, *hangs]}


@pytest.mark.parametrize("name", list(CASES))
def test_status(traces: dict, name: str) -> None:
    _, _, status, words = CASES[name]
    trace = traces[name]
    assert trace.status == status, f"{name}: {trace.status} {trace.message}"
    assert words in trace.message


def test_passing_solution_is_timed_with_raw_samples(traces: dict) -> None:
    t = traces["good"]
    assert t.timing is not None and t.reference_timing is not None
    assert t.timing.n == len(t.timing.samples_ms) >= 3
    assert t.timing.min_ms <= t.timing.median_ms <= max(t.timing.samples_ms)
    assert t.speedup == pytest.approx(t.reference_timing.median_ms / t.timing.median_ms)
    assert t.correctness["rounds"] == 2
    assert "gb_per_s" in t.throughput


def test_failures_are_not_timed(traces: dict) -> None:
    assert traces["wrong"].timing is None and traces["crash"].timing is None


def test_gpu_only_solution_is_skipped_on_cpu(write_manifest, tmp_path: Path) -> None:
    doc = axpy_document([solution("gpu-only", "good.py", devices=["cuda"])])
    result = Runner(load_manifest(write_manifest(doc)), RunOptions(device="cpu", log_dir=tmp_path / "logs")).run()
    (t,) = result.traces
    assert t.status == Status.SKIPPED and "targets cuda" in t.message and t.as_expected


def test_a_run_that_keeps_bytecode_compiles_behind_it_and_leaves_no_process(write_manifest, tmp_path: Path,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """The bytecode compiler (harness/bytecode) is the run's own process: spared by the stray sweeps, gone at the end."""
    import os
    import sys
    from harness.execute import containment
    monkeypatch.setattr(sys, "pycache_prefix", str(tmp_path / "pycache"))
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    before = containment.descendants(os.getpid())
    runner = Runner(load_manifest(write_manifest(axpy_document([solution("good", "good.py")]))),
                    RunOptions(device="cpu", log_dir=tmp_path / "logs"))
    (t,) = runner.run().traces
    assert t.status == Status.PASSED
    assert runner.behind is not None and runner.behind.returncode is not None
    assert not containment.descendants(os.getpid()) - before - containment._own_helpers()


def test_same_run_seed_gives_same_inputs(write_manifest, tmp_path: Path) -> None:
    """The private seed is recorded so a run can be reproduced bit for bit."""
    from harness.execute.inputs import generate_inputs, mix_seed
    import torch
    m = load_manifest(write_manifest(axpy_document([])))
    w = m.workloads[0]
    a = generate_inputs(m.definition, w, mix_seed(7, w.seed, 0), torch.device("cpu"))
    b = generate_inputs(m.definition, w, mix_seed(7, w.seed, 0), torch.device("cpu"))
    c = generate_inputs(m.definition, w, mix_seed(8, w.seed, 0), torch.device("cpu"))
    assert torch.equal(a["x"], b["x"]) and not torch.equal(a["x"], c["x"])


def test_broken_reference_is_a_clear_run_error(write_manifest, tmp_path: Path) -> None:
    from harness.run.runner import RunError
    doc = axpy_document([solution("good", "good.py")])
    doc["definition"]["reference"] = "def not_run(x, w):\n    return x\n"
    with pytest.raises(RunError, match="defines no function 'run'"):
        Runner(load_manifest(write_manifest(doc)), RunOptions(device="cpu", log_dir=tmp_path / "logs")).run()


def test_unavailable_device_is_a_clear_run_error(write_manifest) -> None:
    from harness.run.runner import RunError, resolve_device
    import torch
    if torch.cuda.is_available():
        pytest.skip("a CUDA device is present")
    with pytest.raises(RunError, match="not usable here"):
        resolve_device("cuda")


BROKEN_REFERENCES = {
    # name: (reference source, words the message must contain)
    "raises": ("def run(x, w):\n    raise ValueError('reference bug')\n", "reference bug"),
    "hangs": ("import time\n\ndef run(x, w):\n    time.sleep(3600)\n", "did not finish"),
    "wrong-shape": ("def run(x, w):\n    return (x * w)[:-1]\n", "declares (4096,)"),
    "wrong-dtype": ("def run(x, w):\n    return (x * w).double()\n", "float64"),
}


@pytest.mark.parametrize("name", list(BROKEN_REFERENCES))
def test_a_broken_reference_is_the_manifests_fault(write_manifest, tmp_path: Path, name: str) -> None:
    """Raise, hang or break the declared outputs: INVALID_REFERENCE for every solution of the workload,
    with the reason, and no solution charged with a failure."""
    source, words = BROKEN_REFERENCES[name]
    doc = axpy_document([solution("good", "good.py"), solution("wrong", "wrong.py")], {"run_timeout_s": 5})
    doc["definition"]["reference"] = source
    report = Runner(load_manifest(write_manifest(doc)), RunOptions(device="cpu", log_dir=tmp_path / "logs")).run()
    assert [t.status for t in report.traces] == [Status.INVALID_REFERENCE] * 2
    assert all(words in t.message for t in report.traces), [t.message for t in report.traces]


def test_an_invalid_reference_exits_2(write_manifest, tmp_path: Path) -> None:
    from harness.cli import main
    doc = axpy_document([solution("good", "good.py")])
    doc["definition"]["reference"] = "def run(x, w):\n    return (x * w)[:-1]\n"
    assert main(["run", str(write_manifest(doc)), "--device", "cpu", "--out", str(tmp_path / "out")]) == 2
    assert (tmp_path / "out" / "axpy-cpu.json").is_file()  # the report is still written


def test_a_log_holds_one_run_with_a_header_and_the_reference_has_one_per_problem(tmp_path: Path) -> None:
    path = tmp_path / "axpy.yaml"
    path.write_text(yaml.safe_dump(axpy_document([solution("good", "good.py")], {"max_time_s": 0.1}), sort_keys=False))
    for seed in (11, 12):
        Runner(load_manifest(path), RunOptions(device="cpu", run_seed=seed, log_dir=tmp_path / "logs")).run()
    log = (tmp_path / "logs" / "good.log").read_text()
    assert log.startswith("== opbench run 12: good started ") and "run 11" not in log
    assert (tmp_path / "logs" / "reference.axpy.log").read_text().startswith("== opbench run 12: reference.axpy")
    assert not (tmp_path / "logs" / "reference.log").exists()


def test_a_row_whose_reference_never_settles_is_noisy(write_manifest, tmp_path: Path) -> None:
    """The speedup divides the reference's median by the solution's: a reference median the stopping rule
    never settled (here a reference that sleeps 0 and 4 ms in turn) makes the row NOISY even when the
    solution's own samples settled."""
    doc = axpy_document([solution("good", "good.py")], {"rse_threshold": 0.05, "max_time_s": 0.5, "min_samples": 10})
    doc["definition"]["reference"] = ("import itertools, time\n\nCALLS = itertools.count()\n\ndef run(x, w):\n"
                                      "    time.sleep(0.004 * (next(CALLS) % 2))\n    return x * w + 1.0\n")
    (row,) = Runner(load_manifest(write_manifest(doc)), RunOptions(device="cpu", log_dir=tmp_path / "logs")).run().traces
    assert row.status == Status.PASSED and not row.reference_timing.rule_met
    noisy = [f for f in row.flags if f.startswith("NOISY")]
    assert noisy == (["NOISY(reference: max_time_s (0.5) reached)"] if row.timing.rule_met else
                     [f"NOISY({row.timing.stop_reason})"])
