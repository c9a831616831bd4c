"""bench/timing_accuracy.py, the parts that can run without a GPU: the manifests it generates pass
`harness validate` and a real `harness run` (on the CPU) whose report it reads back; its ncu CSV and
nvbench JSON readers on recorded samples; the FlashInfer-Bench timer loaded from the real wheel; a
table with a failed timer still prints. The GPU paths (ncu, do_bench, cuda-bench) have not run here."""
from __future__ import annotations

import ast
import dataclasses
import importlib.util
import inspect
import json
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "bench" / "timing_accuracy.py"
CB_WHEELS = [ROOT / ".whl" / "cuda_bench-0.3.0-cp312-cp312-manylinux_2_27_x86_64.whl",
             Path("/work/main/.whl/cuda_bench-0.3.0-cp312-cp312-manylinux_2_27_x86_64.whl")]
FIB_WHEELS = [ROOT / ".whl" / "flashinfer_bench-0.1.2-py3-none-any.whl",
              Path("/work/main/.whl/flashinfer_bench-0.1.2-py3-none-any.whl")]


@pytest.fixture(scope="module")
def ta():
    spec = importlib.util.spec_from_file_location("timing_accuracy", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules["timing_accuracy"] = module  # dataclasses resolve their module through sys.modules
    spec.loader.exec_module(module)
    yield module
    sys.modules.pop("timing_accuracy", None)


# -- the cases and their manifests --------------------------------------------------------------------
def test_cases_cover_what_the_table_claims(ta):
    cases = ta.all_cases()
    assert len(cases) >= 10
    assert {c.language for c in cases.values()} == {"pytorch", "triton", "cuda_cpp"}
    assert any(c.kernels > 1 for c in cases.values()), "one multi-kernel solution"
    # the Triton and CUDA C++ cases time the repo's own solutions, not copies that could drift
    triton = next(c for c in cases.values() if c.language == "triton")
    assert triton.solution_source == (ROOT / "manifests/rmsnorm/triton_rmsnorm.py").read_text()
    cuda = next(c for c in cases.values() if c.language == "cuda_cpp")
    assert cuda.solution_source == (ROOT / "manifests/rmsnorm/rmsnorm_binding.cpp").read_text()
    assert cuda.sources["rmsnorm.cu"] == (ROOT / "manifests/rmsnorm/rmsnorm.cu").read_text() and "rmsnorm.h" in cuda.sources
    assert cuda.build["extra_cuda_cflags"], "the build flags of manifests/rmsnorm/solutions/cuda.yaml"


def test_every_generated_manifest_validates(ta, tmp_path):
    cases = ta.all_cases()
    paths = [ta.write_case(c, tmp_path / name) for name, c in cases.items()]
    proc = subprocess.run([sys.executable, "-m", "harness", "validate", *map(str, paths)], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    ok = [ln for ln in proc.stdout.splitlines() if ln.startswith("OK ")]
    assert len(ok) == len(cases)
    assert all("1 workloads, 1 solutions" in ln for ln in ok)


def test_manifest_subcommand_writes_a_valid_manifest(ta, tmp_path, capsys):
    ta.main(["manifest", "cuda-rmsnorm-4096x8192", str(tmp_path / "m")])
    path = Path(capsys.readouterr().out.strip())
    assert path == tmp_path / "m" / "manifest.yaml"
    assert {p.name for p in (tmp_path / "m").iterdir()} >= {"rmsnorm_binding.cpp", "rmsnorm.cu", "rmsnorm.h"}
    proc = subprocess.run([sys.executable, "-m", "harness", "validate", str(path)], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr


@pytest.mark.parametrize("name", ["add-fp32-1M", "softmax-bf16-256x4096", "gemm-bf16-1024",
                                  "matmul-bias-relu-bf16-2048"])
def test_pytorch_solution_agrees_with_its_reference_on_cpu(ta, tmp_path, name):
    """What the peers and ncu time (the solution file, called directly) is what the manifest checks."""
    case = ta.all_cases()[name]
    case = dataclasses.replace(case, axes={a: min(v, 64) for a, v in case.axes.items()})
    ta.write_case(case, tmp_path)
    fn = ta.load_solution(case, tmp_path)
    args = ta.make_inputs(case, "cpu")
    namespace: dict = {}
    exec(case.reference, namespace)
    got, want = fn(*args), namespace["run"](*args)
    assert got.shape == case.shape(case.output) and str(got.dtype) == f"torch.{case.output.dtype}"
    tol = case.tolerance or {"atol": 2e-2, "rtol": 2e-2}
    torch.testing.assert_close(got.float(), want.float(), atol=tol["atol"], rtol=tol["rtol"])


def test_harness_run_round_trip_on_cpu(ta, tmp_path):
    """The real `python -m harness run` on a suite of generated manifests (CPU, tiny sizes): one run
    times every case, and each reading is its problem's solution trace, with the timer the report names."""
    cases = ta.all_cases()
    small = [dataclasses.replace(cases["matmul-bias-relu-bf16-2048"], axes={"m": 32, "n": 16, "k": 24}),
             dataclasses.replace(cases["add-fp32-1M"], axes={"n": 64})]
    names = [c.name for c in small]
    suite = ta.write_suite(small, tmp_path / "cases", {"max_time_s": 0.3, "correctness_rounds": 1})
    default = ta.harness_run(suite, tmp_path / "default", None, names, device="cpu")
    events = ta.harness_run(suite, tmp_path / "events", "events", names, device="cpu")
    assert set(default) == set(events) == set(names)
    for r in (*default.values(), *events.values()):
        assert isinstance(r, ta.OpbenchReading), r.note
        assert r.us > 0 and r.n >= 1 and r.mode
    assert {r.mode for r in events.values()} == {"events"}
    from harness.results.report import Report
    traces = Report.load(next((tmp_path / "events").glob("*.json"))).traces
    for t in traces:
        assert t.solution == ta.SOLUTION and t.timing.median_ms * 1e3 == pytest.approx(events[t.definition].us)
    assert sorted(t.definition for t in traces) == sorted(names)


def test_a_failing_solution_is_a_reason_not_a_number(ta, tmp_path):
    case = dataclasses.replace(ta.all_cases()["add-fp32-1M"], axes={"n": 64},
                               solution_source="import torch\n\n\ndef run(a, b):\n    return a - b\n")
    manifest = ta.write_case(case, tmp_path / "case", {"max_time_s": 0.2, "correctness_rounds": 1})
    r = ta.harness_run(manifest, tmp_path / "out", None, [case.name], device="cpu")[case.name]
    assert r.us is None and r.note.startswith("INCORRECT_NUMERICAL")
    missing = ta.harness_run(manifest, tmp_path / "out2", None, [case.name, "other"], device="cpu")["other"]
    assert missing.us is None and "no trace of other/kernel" in missing.note


# -- Nsight Compute's CSV -----------------------------------------------------------------------------
NCU_CSV = """==PROF== Connected to process 4242 (/usr/bin/python3.12)
==PROF== Profiling "nvjet_tst_128x256_64x4_1x2_h_bz_coopB_NNT" - 0: 0%....50%....100% - 1 pass
==PROF== Profiling "vectorized_elementwise_kernel" - 1: 0%....50%....100% - 1 pass
==PROF== Profiling "vectorized_elementwise_kernel" - 2: 0%....50%....100% - 1 pass
==PROF== Disconnected from process 4242
"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size","Device","CC","Section Name","Metric Name","Metric Unit","Metric Value"
"0","4242","python3.12","127.0.0.1","nvjet_tst_128x256_64x4_1x2_h_bz_coopB_NNT","1","7","(384, 1, 1)","(16, 8, 1)","0","9.0","Command line profiler metrics","gpu__time_duration.sum","nsecond","31,776"
"1","4242","python3.12","127.0.0.1","void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctorOnSelf_add<c10::BFloat16>, std::array<char *, 3>>(int, T2, T3)","1","7","(128, 1, 1)","(4096, 1, 1)","0","9.0","Command line profiler metrics","gpu__time_duration.sum","nsecond","5,024"
"2","4242","python3.12","127.0.0.1","void at::native::vectorized_elementwise_kernel<4, at::native::(anonymous namespace)::launch_clamp_scalar(at::TensorIteratorBase &, c10::Scalar, c10::Scalar, at::native::detail::ClampLimits)::[lambda() (instance 1)]::operator ()() const::[lambda() (instance 10)]::operator ()() const::[lambda(c10::BFloat16) (instance 1)], std::array<char *, 2>>(int, T2, T3)","1","7","(128, 1, 1)","(4096, 1, 1)","0","9.0","Command line profiler metrics","gpu__time_duration.sum","nsecond","4,512"
"3","4242","python3.12","127.0.0.1","nvjet_tst_128x256_64x4_1x2_h_bz_coopB_NNT","1","7","(384, 1, 1)","(16, 8, 1)","0","9.0","Command line profiler metrics","gpu__time_duration.sum","nsecond","32,000"
"4","4242","python3.12","127.0.0.1","void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctorOnSelf_add<c10::BFloat16>, std::array<char *, 3>>(int, T2, T3)","1","7","(128, 1, 1)","(4096, 1, 1)","0","9.0","Command line profiler metrics","gpu__time_duration.sum","nsecond","5,000"
"5","4242","python3.12","127.0.0.1","void at::native::vectorized_elementwise_kernel<4, at::native::(anonymous namespace)::launch_clamp_scalar(at::TensorIteratorBase &, c10::Scalar, c10::Scalar, at::native::detail::ClampLimits)::[lambda() (instance 1)]::operator ()() const::[lambda() (instance 10)]::operator ()() const::[lambda(c10::BFloat16) (instance 1)], std::array<char *, 2>>(int, T2, T3)","1","7","(128, 1, 1)","(4096, 1, 1)","0","9.0","Command line profiler metrics","gpu__time_duration.sum","nsecond","4,500"
"""


def test_ncu_csv_multi_kernel_call_is_the_sum_of_its_kernels(ta):
    kernels = ta.parse_ncu_csv(NCU_CSV)
    assert [k.id for k in kernels] == list(range(6))
    assert kernels[0].us == pytest.approx(31.776)
    r = ta.ncu_per_call(kernels, calls=2)
    assert r.kernels_per_call == 3
    assert r.kernel_names == ("nvjet_tst_128x256_64x4_1x2_h_bz_coopB_NNT", "vectorized_elementwise_kernel",
                              "vectorized_elementwise_kernel")
    assert r.us == pytest.approx(((31.776 + 5.024 + 4.512) + (32.0 + 5.0 + 4.5)) / 2)  # median of two sums


def test_ncu_csv_units_other_rows_and_application_output(ta):
    header = NCU_CSV.splitlines()[5]
    text = ("hello from the application\n" + header + "\n"
            '"0","1","p","h","k","1","7","(1, 1, 1)","(1, 1, 1)","0","9.0","s","gpu__time_duration.sum","usecond","2.5"\n'
            '"0","1","p","h","k","1","7","(1, 1, 1)","(1, 1, 1)","0","9.0","s","sm__cycles_elapsed.avg","cycle","999"\n'
            "==PROF== Report: nothing\n"
            '"1","1","p","h","k","1","7","(1, 1, 1)","(1, 1, 1)","0","9.0","s","gpu__time_duration.sum","msecond","0.003"\n'
            '"2","1","p","h","k","1","7","(1, 1, 1)","(1, 1, 1)","0","9.0","s","gpu__time_duration.sum","nsecond","2600"\n')
    kernels = ta.parse_ncu_csv(text)
    assert [k.us for k in kernels] == pytest.approx([2.5, 3.0, 2.6])
    r = ta.ncu_per_call(kernels, calls=3)
    assert r.kernels_per_call == 1 and r.us == pytest.approx(2.6)


def test_ncu_problems_become_reasons(ta):
    assert ta.parse_ncu_csv("==ERROR== ERR_NVGPUCTRPERM - no permission\n") == []
    r = ta.ncu_per_call(ta.parse_ncu_csv(NCU_CSV), calls=4)  # 6 kernels over 4 calls
    assert r.us is None and "not a whole number" in r.note
    with pytest.raises(ValueError, match="furlong"):
        ta.parse_ncu_csv(NCU_CSV.replace('"nsecond"', '"furlong"'))


# -- nvbench's JSON -----------------------------------------------------------------------------------
def _nvbench_doc(summaries):
    return {"meta": {}, "devices": [{"id": 0, "name": "NVIDIA H100"}], "benchmarks": [{
        "name": "gemm-bf16-1024", "devices": [0], "axes": [], "states": [{
            "name": "Device=0", "device": 0, "type_config_index": 0, "axis_values": [], "is_skipped": False,
            "summaries": [{"tag": tag, "name": tag, "data": [{"name": "value", "type": kind, "value": value}]}
                          for tag, kind, value in summaries]}]}]}


def test_nvbench_cold_gpu_median_in_microseconds(ta):
    doc = _nvbench_doc([("nv/cold/sample_size", "int64", "1234"), ("nv/cold/time/gpu/mean", "float64", "1.1e-05"),
                        ("nv/cold/time/gpu/median", "float64", "1.0e-05"), ("nv/cold/time/cpu/median", "float64", "9e-05")])
    r = ta.nvbench_cold_gpu_us(doc)
    assert r.us == pytest.approx(10.0) and r.note == "median of 1234 samples"
    r = ta.nvbench_cold_gpu_us(_nvbench_doc([("nv/cold/time/gpu/mean", "float64", "2.5e-06")]))
    assert r.us == pytest.approx(2.5) and "mean" in r.note
    assert ta.nvbench_cold_gpu_us(_nvbench_doc([("nv/batch/time/gpu/mean", "float64", "1e-6")])).us is None
    assert ta.nvbench_cold_gpu_us(doc, "gemm-bf16-1024").us == pytest.approx(10.0)
    assert "for add-fp32-1" in ta.nvbench_cold_gpu_us(doc, "add-fp32-1").note
    skipped = _nvbench_doc([])
    skipped["benchmarks"][0]["states"][0].update(is_skipped=True, skip_reason="no device")
    assert "no device" in ta.nvbench_cold_gpu_us(skipped).note


@pytest.fixture
def cuda_bench_wheel():
    wheel = next((w for w in CB_WHEELS if w.is_file()), None)
    if wheel is None:
        pytest.skip("cuda_bench-0.3.0 wheel not present")
    return wheel


def test_nvbench_reader_agrees_with_cuda_bench_own_reader(ta, tmp_path, monkeypatch, cuda_bench_wheel):
    """cuda-bench ships a pure-Python reader of its JSON (cuda.bench.results); ours reads the same median."""
    with zipfile.ZipFile(cuda_bench_wheel) as z:
        z.extractall(tmp_path / "site", [n for n in z.namelist() if n.endswith(".py") or ".dist-info/" in n])
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    for name in [m for m in sys.modules if m == "cuda" or m.startswith("cuda.")]:
        monkeypatch.delitem(sys.modules, name)
    from cuda.bench.results import BenchmarkResult
    doc = _nvbench_doc([("nv/cold/sample_size", "int64", "77"), ("nv/cold/time/gpu/median", "float64", "3.0e-05")])
    path = tmp_path / "nv.json"
    path.write_text(json.dumps(doc))
    state = BenchmarkResult.from_json(path)["gemm-bf16-1024"][0]
    assert state.summaries["nv/cold/time/gpu/median"].value * 1e6 == pytest.approx(ta.nvbench_cold_gpu_us(doc).us)


def test_cuda_bench_calls_exist_in_its_declared_api(cuda_bench_wheel):
    """Every cuda.bench call the script makes, checked against the wheel's own type stub (the native
    module itself is for Python 3.12 and a GPU, so it is not loaded here)."""
    with zipfile.ZipFile(cuda_bench_wheel) as z:
        tree = ast.parse(z.read("cuda/bench/__init__.pyi").decode())
    classes = {n.name: {f.name: f for f in n.body if isinstance(f, ast.FunctionDef)}
               for n in tree.body if isinstance(n, ast.ClassDef)}
    functions = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
    assert {"register", "run_all_benchmarks"} <= functions
    assert "set_name" in classes["Benchmark"] and "get_stream" in classes["Launch"]
    assert "addressof" in classes["CudaStream"] and "get_device" in classes["State"]
    exec_kwargs = {a.arg for a in classes["State"]["exec"].args.kwonlyargs}
    assert "batched" in exec_kwargs
    script = SCRIPT.read_text()
    for call in ("bench.register(benchmark_of(fn)).set_name(", "state.exec(launcher, batched=False)",
                 "launch.get_stream().addressof()", "state.get_device()", "bench.run_all_benchmarks(["):
        assert call in script


# -- FlashInfer-Bench's timer, from the real wheel ----------------------------------------------------
@pytest.fixture
def fib_on_path(tmp_path, monkeypatch):
    wheel = next((w for w in FIB_WHEELS if w.is_file()), None)
    if wheel is None:
        pytest.skip("flashinfer_bench-0.1.2 wheel not present")
    target = tmp_path / "site"
    with zipfile.ZipFile(wheel) as z:  # a pure wheel: what pip install --no-deps --target lays out
        z.extractall(target)
    monkeypatch.syspath_prepend(str(target))
    for name in [m for m in sys.modules if m.startswith("flashinfer_bench")]:
        monkeypatch.delitem(sys.modules, name)
    return target


def test_fib_timer_loads_without_its_package(ta, fib_on_path):
    timing = ta.load_fib_timing()
    assert Path(timing.__file__) == fib_on_path / "flashinfer_bench" / "bench" / "timing.py"
    assert not [m for m in sys.modules if m == "flashinfer_bench" or m.startswith("flashinfer_bench.")], \
        "the package (and its heavy imports) stays unimported; the stub is gone again"
    params = inspect.signature(timing.do_bench).parameters
    assert params["return_mode"].default == "mean" and "median" in str(params["return_mode"].annotation)


def test_fib_do_bench_median_runs_with_host_events(ta, fib_on_path, monkeypatch):
    """The call the script makes, do_bench(fn, return_mode="median"), run for real on the CPU with
    torch.cuda's events and synchronize replaced by host-clock ones (its flush buffer on the CPU)."""
    timing = ta.load_fib_timing()

    class HostEvent:
        def __init__(self, enable_timing=False):
            self.t = None

        def record(self, stream=None):
            self.t = time.perf_counter()

        def elapsed_time(self, end):
            return (end.t - self.t) * 1e3

    monkeypatch.setattr(torch.cuda, "Event", HostEvent)
    monkeypatch.setattr(torch.cuda, "synchronize", lambda device=None: None)
    calls = []
    ms = timing.do_bench(lambda: calls.append(time.sleep(0.001)), rep=20, warmup=2, return_mode="median",
                         device="cpu")
    assert len(calls) == 22 and 0.9 < ms < 50


def test_no_fib_package_is_a_reason(ta, monkeypatch):
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None)
    with pytest.raises(ImportError, match="flashinfer_bench is not on sys.path"):
        ta.load_fib_timing()


# -- the table ----------------------------------------------------------------------------------------
def test_table_keeps_printing_when_a_timer_fails(ta):
    cases = ta.all_cases()
    row = ta.Row(cases["gemm-bf16-1024"],
                 ncu=ta.NcuReading(10.0, kernels_per_call=1, kernel_names=("nvjet",)),
                 opbench_default=ta.OpbenchReading(10.5, mode="cupti", n=100, rule_met=True),
                 opbench_events=ta.OpbenchReading(12.0, mode="events", n=100, rule_met=True),
                 peers={"do_bench": ta.Reading(11.0, "median"), "fib": ta.failed("ImportError: no flashinfer_bench"),
                        "cuda_bench": ta.Reading(9.5, "median of 10 samples")})
    skipped = ta.Row(cases["add-fp32-1M"])
    lines = ta.table_rows([row, skipped])
    assert lines[0] == ["gemm-bf16-1024", "10.00", "10.50 (cupti)", "+5.0%", "12.00", "+20.0%", "11.00", "+10.0%",
                        "n/a (ImportError: no flashinfer_bench)", "-", "9.50", "-5.0%"]
    assert lines[1][1] == "skipped" and lines[1][3] == "-"
    assert len(ta.HEADERS) == len(lines[0])
    kernels = ta.kernel_lines([row, skipped])
    assert "1 kernel(s) per call (ncu: nvjet)" in kernels[0] and "ncu did not count" in kernels[1]
    assert any("fib: ImportError" in n for n in ta.note_lines([row]))
    data = ta.results_json([row], {"ncu_calls": 10})
    assert data["cases"]["gemm-bf16-1024"]["opbench_default"]["mode"] == "cupti"
    assert data["cases"]["gemm-bf16-1024"]["fib"]["us"] is None
    assert data["cases"]["gemm-bf16-1024"]["cuda_bench"]["error_pct_vs_ncu"] == pytest.approx(-5.0)


def test_a_reading_without_a_number_says_why(ta):
    with pytest.raises(ValueError):
        ta.Reading(None)
    with pytest.raises(ValueError):
        ta.Reading(float("nan"), "x")


def test_peers_process_without_a_gpu_reports_why_for_every_peer(ta, tmp_path):
    """The real `peers` subprocess over two cases on this CPU-only machine: no callable, so each peer's
    cell of each case says why, through the JSON file the parent reads (the protocol a GPU run uses)."""
    cases = [ta.all_cases()["add-fp32-1M"], ta.all_cases()["gemm-bf16-1024"]]
    got = ta.peers_readings(cases, ta.case_root(cases, tmp_path), timeout_s=300)
    assert set(got) == {c.name for c in cases}
    for readings in got.values():
        assert set(readings) == {"do_bench", "fib", "cuda_bench"}
        for r in readings.values():
            assert r.us is None and r.note.startswith("building the solution:"), r.note


def test_ncu_splits_at_each_cases_marker(ta):
    """ncu profiles every case in one process: the kernels after each case's marker are its calls."""
    marker = '"{id}","1","python3","h","at::cuda::(anonymous namespace)::spin_kernel(long)","1","7","(1, 1, 1)",' \
             '"(1, 1, 1)","0","9.0","Command line profiler metrics","gpu__time_duration.sum","nsecond","1,500"'
    head, body = NCU_CSV.split('"0","4242"', 1)
    rows = ('"0","4242"' + body).strip().splitlines()
    renumbered = [marker.format(id=0)] + [r.replace(f'"{i}","4242"', f'"{i + 1}","4242"', 1) for i, r in enumerate(rows[:3])] \
        + [marker.format(id=4)] + [r.replace(f'"{i}","4242"', f'"{i + 2}","4242"', 1) for i, r in enumerate(rows[3:], 3)]
    text = head + "\n".join(renumbered) + "\n"
    cases = [ta.all_cases()["matmul-bias-relu-bf16-2048"], ta.all_cases()["gemm-bf16-1024"], ta.all_cases()["add-fp32-1M"]]
    lines = f"{ta.CASE_DONE} matmul-bias-relu-bf16-2048\n{ta.CASE_FAILED} gemm-bf16-1024 RuntimeError: no kernel image\n"
    got = ta.ncu_results(cases, text + lines, "", 0, calls=1)
    assert got["matmul-bias-relu-bf16-2048"].us == pytest.approx(31.776 + 5.024 + 4.512)
    assert got["matmul-bias-relu-bf16-2048"].kernels_per_call == 3
    assert got["gemm-bf16-1024"].note == "RuntimeError: no kernel image"
    assert got["add-fp32-1M"].us is None and "not reached" in got["add-fp32-1M"].note
    # the process died in the first case, after its kernels ran: no number for it, and the reason is its own
    died = ta.ncu_results(cases, text, "RuntimeError: CUDA error: an illegal memory access was encountered", 1, calls=1)
    assert died["matmul-bias-relu-bf16-2048"].us is None and "illegal memory access" in died["matmul-bias-relu-bf16-2048"].note
    assert "not finished; ncu did not finish in 9 s" in ta.ncu_results(cases, text, "", -15, 1, "ncu did not finish in 9 s")["add-fp32-1M"].note
    with pytest.raises(ValueError, match="before the first"):
        ta.split_at_markers(ta.parse_ncu_csv(NCU_CSV))


def test_the_profiled_process_names_the_case_it_could_not_run(ta, tmp_path):
    """The real `kernel` process on this CPU machine: the first case cannot build its callable, says so
    on its line, and the process then stops at the profiler; the parent's cells say both."""
    cases = [ta.all_cases()["add-fp32-1M"], ta.all_cases()["softmax-bf16-256x4096"]]
    root = ta.case_root(cases, tmp_path)
    proc = subprocess.run([sys.executable, str(SCRIPT), "kernel", *(c.name for c in cases), "--calls", "2",
                           "--root", str(root)], capture_output=True, text=True, timeout=300)
    assert proc.returncode != 0
    got = ta.ncu_results(cases, proc.stdout, proc.stderr, proc.returncode, calls=2)
    assert got["add-fp32-1M"].us is None and "Error" in got["add-fp32-1M"].note
    assert "not reached" in got["softmax-bf16-256x4096"].note


def test_reason_picks_the_line_that_says_what_went_wrong(ta):
    assert ta.reason("Traceback:\n  File x\nRuntimeError: CUDA error: no device\n") == "RuntimeError: CUDA error: no device"
    assert ta.reason("==PROF== a\n==ERROR== ERR_NVGPUCTRPERM - no permission\n==PROF== b\n").startswith("==ERROR==")
    assert ta.reason("just some output") == "just some output"


def test_floors_come_off_both_sides_for_small_kernels(ta):
    cases = ta.all_cases()
    floor = ta.Row(cases[ta.FLOOR], ncu=ta.NcuReading(2.0, kernels_per_call=1),
                   opbench_default=ta.OpbenchReading(1.25, mode="cupti"), opbench_events=ta.OpbenchReading(4.0, mode="events"))
    small = ta.Row(cases["add-fp32-1M"], ncu=ta.NcuReading(5.0, kernels_per_call=1),
                   opbench_default=ta.OpbenchReading(4.25, mode="cupti"), opbench_events=ta.OpbenchReading(7.0, mode="events"))
    big = ta.Row(cases["gemm-bf16-8192"], ncu=ta.NcuReading(1400.0), opbench_default=ta.OpbenchReading(1399.0))
    lines = ta.floor_lines([floor, small, big])
    assert lines[0] == "- floors (add-fp32-1): ncu 2.00 us, opbench_default 1.25 us, opbench_events 4.00 us"
    assert lines[1].startswith("- add-fp32-1M: ncu 3.00 us above its floor")
    assert "opbench_default +0.00 us (+0.0%)" in lines[1] and "opbench_events +0.00 us (+0.0%)" in lines[1]
    assert len(lines) == 2, "only kernels under 10 us"
    assert ta.floor_lines([small]) == [], "no floor case, no floor lines"



def test_runs_of_parts_make_one_table(ta, tmp_path, capsys):
    """The cases do not fit one device call with every timer: `table` reads each part's JSON back and
    prints one table, in the cases' order, with the floors taken across parts."""
    cases = ta.all_cases()
    part1 = [ta.Row(cases["add-fp32-1M"], ncu=ta.NcuReading(5.0, kernels_per_call=1, kernel_names=("add",)),
                    opbench_default=ta.OpbenchReading(4.25, mode="cupti", n=300, rule_met=True, flags=("NOISY(x)",)),
                    peers={"fib": ta.failed("no flashinfer_bench"), "do_bench": ta.Reading(7.0, "median")})]
    part2 = [ta.Row(cases[ta.FLOOR], ncu=ta.NcuReading(2.0, kernels_per_call=1),
                    opbench_default=ta.OpbenchReading(1.25, mode="cupti"))]
    paths = []
    for i, rows in enumerate((part1, part2)):
        paths.append(tmp_path / f"p{i}.json")
        paths[-1].write_text(json.dumps(ta.results_json(rows, {"wall_s": 1.0, "bench": {}, "skip": [], "not_run": []})))
    back = ta.rows_from_json(json.loads(paths[0].read_text()), cases)
    assert ta.table_rows(back) == ta.table_rows(part1) and back[0].opbench_default.flags == ("NOISY(x)",)
    ta.main(["table", *map(str, paths)])
    out = capsys.readouterr().out
    assert out.index("| add-fp32-1 ") < out.index("| add-fp32-1M ")  # the cases' order, not the files'
    assert "- add-fp32-1M: ncu 3.00 us above its floor" in out and "fib: no flashinfer_bench" in out


def test_a_calls_kernels_are_summed_past_the_harness_kernels_before_them(ta):
    """`probe` and `kinds` read traces of steps of (flush, eviction, the call's kernels): each call is the
    sum of its own kernels, the median over calls."""
    trace = [30.0, 20.0, 1.0, 2.0, 30.0, 20.0, 1.5, 2.5, 30.0, 20.0, 9.0, 9.0]
    assert ta.median_per_call(trace, before=2, kernels=2) == 4.0
    assert ta.median_per_call([7.0, 1.0, 7.0, 3.0, 7.0, 2.0], before=1, kernels=1) == 2.0


# -- the run's stages ---------------------------------------------------------------------------------
def _fake_stages(ta, monkeypatch, peers_s: float = 0.0, harness=None):
    """Each stage's process replaced by a stand-in that returns (or raises) at once: `run_main`'s own logic."""
    def peers(cases, root, timeout_s):
        time.sleep(peers_s)
        return {c.name: {k: ta.Reading(3.0, "median") for k in ta.PEERS} for c in cases}

    def run(suite, out, timer, names, timeout_s):
        return harness(timer, names) if harness else {n: ta.OpbenchReading(2.0, mode=timer or "cupti") for n in names}

    def ncu(cases, root, calls, timeout_s):
        return {c.name: ta.NcuReading(2.5, kernels_per_call=1) for c in cases}
    monkeypatch.setattr(ta, "peers_readings", peers)
    monkeypatch.setattr(ta, "harness_run", run)
    monkeypatch.setattr(ta, "ncu_readings", ncu)


def test_a_stage_with_too_little_time_left_is_not_started(ta, tmp_path, monkeypatch, capsys):
    _fake_stages(ta, monkeypatch, peers_s=0.6)
    cases = [ta.all_cases()["add-fp32-1M"]]
    ta.run_main(cases, set(), 1, 1.0, tmp_path, deadline_s=1.0, min_stage_s=0.5)
    doc = json.loads((tmp_path / "timing_accuracy.json").read_text())
    assert doc["settings"]["not_run"] == ["opbench default", "opbench events", "ncu"]
    assert doc["cases"]["add-fp32-1M"]["do_bench"]["us"] == 3.0 and doc["cases"]["add-fp32-1M"]["ncu"] is None
    assert "Not run or cut short" in capsys.readouterr().out


def test_an_interrupted_stage_keeps_the_cells_it_finished(ta, tmp_path, monkeypatch, capsys):
    """SIGTERM while `harness run` ran: the rows its report holds are kept, the rest of the run is not started,
    and the table and the JSON still come out."""
    cases = [ta.all_cases()["add-fp32-1"], ta.all_cases()["add-fp32-1M"]]

    def harness(timer, names):
        raise ta.Interrupted({"add-fp32-1": ta.OpbenchReading(1.5, mode="cupti"),
                              "add-fp32-1M": ta.failed("harness run interrupted (SIGTERM or Ctrl-C)")})
    _fake_stages(ta, monkeypatch, harness=harness)
    ta.run_main(cases, set(), 1, 1.0, tmp_path)
    doc = json.loads((tmp_path / "timing_accuracy.json").read_text())
    assert doc["cases"]["add-fp32-1"]["opbench_default"]["us"] == 1.5
    assert "interrupted" in doc["cases"]["add-fp32-1M"]["opbench_default"]["note"]
    assert doc["settings"]["not_run"] == ["opbench default", "opbench events", "ncu"]
    assert doc["settings"]["stages_s"].keys() == {"peers"}
    assert "| add-fp32-1M " in capsys.readouterr().out


def test_every_stage_rewrites_the_numbers(ta, tmp_path, monkeypatch):
    """The JSON holds each finished stage's cells before the next stage starts (a call cut by its limit
    leaves them)."""
    cases = [ta.all_cases()["gemm-bf16-1024"]]
    found = []

    def ncu(cases, root, calls, timeout_s):
        found.append(json.loads((tmp_path / "timing_accuracy.json").read_text()))
        return {c.name: ta.NcuReading(7.0, kernels_per_call=1) for c in cases}
    _fake_stages(ta, monkeypatch)
    monkeypatch.setattr(ta, "ncu_readings", ncu)
    ta.run_main(cases, set(), 1, 1.0, tmp_path)
    before = found[0]["cases"]["gemm-bf16-1024"]
    assert before["opbench_events"]["mode"] == "events" and before["fib"]["us"] == 3.0 and before["ncu"] is None
    after = json.loads((tmp_path / "timing_accuracy.json").read_text())["cases"]["gemm-bf16-1024"]
    assert after["ncu"]["us"] == 7.0 and after["opbench_default"]["error_pct_vs_ncu"] == pytest.approx((2.0 / 7.0 - 1) * 100)


def test_a_cut_harness_run_keeps_its_reports_rows(ta, tmp_path):
    """`harness run` stopped by its time limit writes the rows it finished: those are read, the others say
    why."""
    cases = [dataclasses.replace(ta.all_cases()["add-fp32-1M"], axes={"n": 64})]
    suite = ta.write_suite(cases, tmp_path / "cases", {"max_time_s": 0.2, "correctness_rounds": 1})
    ta.harness_run(suite, tmp_path / "out", None, [cases[0].name], device="cpu")
    got = ta.report_readings(tmp_path / "out", [cases[0].name, "gemm-bf16-1024"], "harness run did not finish in 9 s",
                             cut=True)
    assert isinstance(got[cases[0].name], ta.OpbenchReading)
    assert got["gemm-bf16-1024"].note == "harness run did not finish in 9 s"
    assert ta.report_readings(tmp_path / "none", ["x"], "why")["x"].note == "why"


def test_a_truncated_peers_file_is_a_reason(ta, tmp_path):
    cases = [ta.all_cases()["add-fp32-1M"]]
    (tmp_path / "peers.json").write_text('{"add-fp32-1M": {"do_bench": {"us": 3')
    got = ta.peers_json(cases, tmp_path / "peers.json", "peers process exit -9")
    assert all(r.us is None and "unreadable" in r.note for r in got["add-fp32-1M"].values())
