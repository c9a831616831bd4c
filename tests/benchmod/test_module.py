"""Bench modules: header and hook validation, loading for each api-kind, cases, and `harness run`
on bench-module manifests (CPU, for real)."""
from __future__ import annotations

import importlib.util
import json
from dataclasses import dataclass
from pathlib import Path
from textwrap import dedent

import pytest
import torch
import yaml

from harness.execute.benchmodule import (API_KINDS, BenchModuleError, load_bench, parse_cases, parse_header)
from harness.spec.benchmodule import is_bench_module_manifest, load_bench_manifest
from harness.measure.devices import make_device
from harness.spec.schema import ManifestError

from factories import ROOT
HAVE_TRITON = importlib.util.find_spec("triton") is not None
HAVE_TILELANG = importlib.util.find_spec("tilelang") is not None

OPERATORS = {
    "torch-function": "import torch\n\ndef scale(x):\n    return x * 2.0\n",
    "torch-module": dedent("""\
        import torch

        class Scale(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.register_buffer("k", torch.tensor(2.0))

            def forward(self, x):
                return x * self.k
        """),
    "triton-wrapper": dedent("""\
        import torch
        import triton
        import triton.language as tl

        @triton.jit
        def scale_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
            offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            m = offs < n
            tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=m) * 2.0, mask=m)

        def scale(x):
            y = torch.empty_like(x)
            scale_kernel[(triton.cdiv(x.numel(), 1024),)](x, y, x.numel(), BLOCK=1024)
            return y
        """),
    "tilelang-wrapper": "import tilelang\n\ndef scale(x):\n    return x * 2.0\n",
}
API_NAME = {"torch-module": "Scale"}


def bench_source(kind: str, kernels: str = "aten::mul", body: str | None = None) -> str:
    name = API_NAME.get(kind, "scale")
    api = f"operator_module.{name}"
    return dedent(f"""\
        # api-name: {name}
        # api-kind: {kind}
        # kernels: {kernels}
        import torch

        def build_operator_api(operator_module):
            return {api}

        def build_bench_cases():
            return [{{"id": "n1024", "n": 1024, "repeats": 5, "warmup": 1}}, {{"id": "n4096", "n": 4096, "seed": 3}}]

        def build_bench_case_fn(operator_api, case):
            x = torch.randn(case["n"])  # the CPU: these tests time on the CPU device wherever they run
            return lambda: operator_api(x)
        """) + (body or "")


def write_pair(tmp_path: Path, kind: str, bench: str | None = None, op: str | None = None) -> tuple[Path, Path]:
    opf, bf = tmp_path / "scale_op.py", tmp_path / "bench_scale_op.py"
    opf.write_text(op if op is not None else OPERATORS[kind])
    bf.write_text(bench if bench is not None else bench_source(kind))
    return opf, bf


@pytest.fixture(scope="module")
def cpu():
    dev = make_device("cpu")
    dev.setup()
    return dev


# -- header ----------------------------------------------------------------------------------

def test_header_is_read_from_the_leading_comments() -> None:
    h = parse_header("#!/usr/bin/env python\n# Copyright\n\n# api-name: rmsnorm\n# api-kind: torch-module\n"
                     "# kernels: rmsnorm_fwd , rmsnorm_bwd\nimport torch\n# kernels: ignored\n", "b.py")
    assert (h.api_name, h.api_kind, h.kernels) == ("rmsnorm", "torch-module", ("rmsnorm_fwd", "rmsnorm_bwd"))


def test_header_problems_are_all_reported() -> None:
    with pytest.raises(BenchModuleError) as err:
        parse_header("# api-name: 9lives\n# api-kind: cuda-kernel\n# api-kind: torch-module\nimport x\n", "b.py")
    text = "\n".join(err.value.problems)
    assert "appears twice" in text and "not a Python identifier" in text and "missing header line '# kernels" in text
    with pytest.raises(BenchModuleError, match="is not one of triton-wrapper, tilelang-wrapper"):
        parse_header("# api-name: a\n# api-kind: cuda-kernel\n# kernels: a\n", "b.py")
    with pytest.raises(BenchModuleError, match="names no kernel"):
        parse_header("# api-name: a\n# api-kind: torch-function\n# kernels:  \n", "b.py")
    assert API_KINDS == ("triton-wrapper", "tilelang-wrapper", "torch-function", "torch-module")


# -- loading each api-kind ---------------------------------------------------------------------

def test_torch_function_loads_and_runs(tmp_path: Path, cpu) -> None:
    loaded = load_bench(*write_pair(tmp_path, "torch-function"), cpu)
    cases = loaded.cases()
    assert [c.id for c in cases] == ["n1024", "n4096"]
    assert (cases[0].warmup, cases[0].repeats, cases[1].warmup, cases[1].repeats, cases[1].seed) == (1, 5, 5, 50, 3)
    out = loaded.case_fn(cases[0])()
    assert out.shape == (1024,)


def test_torch_module_is_built_on_the_device_in_eval_mode(tmp_path: Path, cpu) -> None:
    loaded = load_bench(*write_pair(tmp_path, "torch-module"), cpu)
    assert isinstance(loaded.api, torch.nn.Module) and not loaded.api.training
    assert loaded.api.k.device.type == "cpu"
    x = torch.ones(3)
    assert torch.equal(loaded.api(x), x * 2)


def test_forms_the_workflow_accepts_a_bound_forward_and_a_generator_of_cases(tmp_path: Path, cpu) -> None:
    opf, benchf = write_pair(tmp_path, "torch-module")
    benchf.write_text(benchf.read_text().replace("return operator_module.Scale", "return operator_module.Scale().forward"))
    loaded = load_bench(opf, benchf, cpu)
    assert not loaded.api.__self__.training and torch.equal(loaded.api(torch.ones(2)), torch.full((2,), 2.0))
    cases = parse_cases((dict(id=f"c{i}") for i in range(3)), "b.py")
    assert [c.id for c in cases] == ["c0", "c1", "c2"]
    with pytest.raises(BenchModuleError, match="at most 20"):
        parse_cases((dict(id=f"c{i}") for i in range(10 ** 9)), "b.py")  # read no further than the limit allows


def test_default_bench_file_is_bench_underscore_operator(tmp_path: Path, cpu) -> None:
    opf, _ = write_pair(tmp_path, "torch-function")
    assert load_bench(opf, None, cpu).header.api_name == "scale"


@pytest.mark.skipif(HAVE_TRITON, reason="checks the message shown where triton is missing")
def test_triton_wrapper_without_triton_says_so(tmp_path: Path, cpu) -> None:
    with pytest.raises(BenchModuleError, match="need the 'triton' package"):
        load_bench(*write_pair(tmp_path, "triton-wrapper"), cpu)


@pytest.mark.skipif(not HAVE_TRITON, reason="triton is not installed")
def test_triton_wrapper_loads(tmp_path: Path, cpu) -> None:
    loaded = load_bench(*write_pair(tmp_path, "triton-wrapper", bench_source("triton-wrapper", "scale")), cpu)
    assert loaded.header.kernels == ("scale",)


@pytest.mark.skipif(not HAVE_TRITON, reason="triton is not installed")
def test_triton_wrapper_needs_a_jit_kernel(tmp_path: Path, cpu) -> None:
    with pytest.raises(BenchModuleError, match="defines no @triton.jit kernel"):
        load_bench(*write_pair(tmp_path, "triton-wrapper", op=OPERATORS["torch-function"]), cpu)


@pytest.mark.skipif(HAVE_TILELANG, reason="checks the message shown where tilelang is missing")
def test_tilelang_wrapper_without_tilelang_says_so(tmp_path: Path, cpu) -> None:
    with pytest.raises(BenchModuleError, match="need the 'tilelang' package"):
        load_bench(*write_pair(tmp_path, "tilelang-wrapper"), cpu)


@pytest.mark.skipif(not HAVE_TILELANG, reason="tilelang is not installed")
def test_tilelang_wrapper_loads(tmp_path: Path, cpu) -> None:
    assert load_bench(*write_pair(tmp_path, "tilelang-wrapper"), cpu).header.api_kind == "tilelang-wrapper"


@pytest.mark.parametrize("kind, op, message", [
    ("torch-module", OPERATORS["torch-function"].replace("def scale", "def Scale"), "torch.nn.Module subclass"),
    ("torch-function", OPERATORS["torch-module"].replace("class Scale", "class scale"), "to be a function"),
    ("torch-function", "X = 1\n", "exports no 'scale'"),
])
def test_api_kind_must_match_the_operator(tmp_path: Path, cpu, kind: str, op: str, message: str) -> None:
    with pytest.raises(BenchModuleError, match=message):
        load_bench(*write_pair(tmp_path, kind, op=op), cpu)


# -- hooks and cases ---------------------------------------------------------------------------

def test_missing_and_misshapen_hooks(tmp_path: Path, cpu) -> None:
    src = bench_source("torch-function").replace("def build_bench_cases():", "def build_bench_cases(n):")
    src = src.replace("def build_operator_api(operator_module):\n    return operator_module.scale\n", "")
    with pytest.raises(BenchModuleError) as err:
        load_bench(*write_pair(tmp_path, "torch-function", src), cpu)
    assert err.value.problems == ["missing hook build_operator_api()", "build_bench_cases must take 0 argument(s), takes 1"]


def test_bench_module_import_error_is_reported(tmp_path: Path, cpu) -> None:
    with pytest.raises(BenchModuleError, match="importing bench_scale_op.py failed: ZeroDivisionError"):
        load_bench(*write_pair(tmp_path, "torch-function", bench_source("torch-function", body="1 / 0\n")), cpu)


@pytest.mark.parametrize("raw, message", [
    ({"id": "a"}, "must return a list"),
    ([], "returned no cases"),
    ([{"id": f"c{i}"} for i in range(21)], "at most 20"),
    ([{"id": "a"}, {"id": "a"}], "not unique"),
    (["a"], "is a str, not a dict"),
    ([{"n": 1}], "has no string 'id'"),
    ([{"id": "a", "repeats": 0}], "repeats must be an integer >= 1"),
    ([{"id": "a", "warmup": 1.5}], "warmup must be an integer >= 0"),
    ([{"id": "a", "seed": True}], "seed must be an integer"),
])
def test_case_validation(raw, message: str) -> None:
    with pytest.raises(BenchModuleError, match=message):
        parse_cases(raw, "b.py")


def test_nondeterministic_cases_are_refused(tmp_path: Path, cpu) -> None:
    src = bench_source("torch-function").replace('"n": 1024', '"n": __import__("random").randrange(10**9)')
    loaded = load_bench(*write_pair(tmp_path, "torch-function", src), cpu)
    with pytest.raises(BenchModuleError, match="not deterministic"):
        loaded.cases()


def test_case_fn_must_take_no_arguments(tmp_path: Path, cpu) -> None:
    src = bench_source("torch-function").replace("return lambda: operator_api(x)", "return lambda y: operator_api(x)")
    loaded = load_bench(*write_pair(tmp_path, "torch-function", src), cpu)
    with pytest.raises(BenchModuleError, match=r"takes arguments \(y\)"):
        loaded.case_fn(loaded.cases()[0])


def test_case_seed_makes_setup_reproducible(tmp_path: Path, cpu) -> None:
    src = bench_source("torch-function").replace("return lambda: operator_api(x)", "return lambda: x")
    loaded = load_bench(*write_pair(tmp_path, "torch-function", src), cpu)
    case = loaded.cases()[1]
    assert torch.equal(loaded.case_fn(case)(), loaded.case_fn(case)())


# -- manifests and the command line ----------------------------------------------------------------

def write_manifest(tmp_path: Path, **bench_module) -> Path:
    doc = {"schema_version": 1, "bench_module": {"operator": "scale_op.py", **bench_module},
           "bench": {"max_time_s": 0.3, "rse_threshold": 0.5, "warmup_ms": 0, "chunk": 5}}
    path = tmp_path / "bench.yaml"
    path.write_text(yaml.safe_dump(doc))
    return path


def test_manifest_schema_and_files(tmp_path: Path) -> None:
    write_pair(tmp_path, "torch-function")
    spec = load_bench_manifest(write_manifest(tmp_path, devices=["cpu"]))
    assert spec.mode == "events" and spec.devices == ("cpu",) and spec.bench is None
    assert is_bench_module_manifest(tmp_path / "bench.yaml")
    assert not is_bench_module_manifest(ROOT / "manifests" / "rmsnorm.yaml")
    with pytest.raises(ManifestError) as err:
        load_bench_manifest(write_manifest(tmp_path, mode="nsys", bench="nope.py", extra=1))
    text = str(err.value)
    assert "bench_module.mode" in text and "unknown field(s)" in text
    with pytest.raises(ManifestError, match="does not exist"):
        load_bench_manifest(write_manifest(tmp_path, bench="nope.py"))


@dataclass
class Ran:
    returncode: int
    stdout: str
    stderr: str


@pytest.fixture
def cli(capsys, monkeypatch):
    """`python -m harness ...` in this process (torch is imported once), run from the repo root."""
    from harness.cli import main
    monkeypatch.chdir(ROOT)

    def run(*args: str) -> Ran:
        capsys.readouterr()
        code = main(list(args))
        out = capsys.readouterr()
        return Ran(code, out.out, out.err)
    return run


def test_cli_runs_the_shipped_torch_bench_on_cpu_in_two_modes(tmp_path: Path, cli) -> None:
    for mode in ("events", "torch-profiler"):
        proc = cli("run", "bench_rmsnorm_torch.yaml", "--device", "cpu", "--mode", mode, "--out", str(tmp_path),
                    "--max-time-s", "0.3", "--table-format", "github", "--quiet")
        assert proc.returncode == 0, proc.stderr
        assert f"mode {mode}" in proc.stdout and "| rmsnorm" in proc.stdout  # github (markdown) table
        report = json.loads((tmp_path / f"rmsnorm-torch-cpu-{mode}.json").read_text())
        assert report["format"] == "opbench-report/1" and report["summary"]["ok"]
        assert {t["workload"] for t in report["traces"]} == {"b16-h512-fp32", "b256-h4096-fp32"}
        assert all(t["correctness"]["checked"] is False for t in report["traces"])
    kernels = report["traces"][0]["correctness"]["attribution"]["kernels"]
    assert kernels == {"aten::rms_norm": 30}


def test_cli_fails_a_case_whose_kernels_cannot_be_attributed(tmp_path: Path, cli) -> None:
    write_pair(tmp_path, "torch-function", bench_source("torch-function", kernels="scale"))
    proc = cli("run", str(write_manifest(tmp_path)), "--device", "cpu", "--mode", "torch-profiler",
                "--out", str(tmp_path / "out"), "--quiet")
    assert proc.returncode == 1
    report = json.loads(next((tmp_path / "out").glob("*.json")).read_text())
    assert {t["status"] for t in report["traces"]} == {"RUNTIME_ERROR"}
    assert "no kernel named scale" in report["traces"][0]["message"] and report["traces"][0]["timing"] is None


def test_cli_bad_module_and_bad_mode_exit_2(tmp_path: Path, cli) -> None:
    write_pair(tmp_path, "torch-function", "import torch\n")
    proc = cli("run", str(write_manifest(tmp_path)), "--device", "cpu", "--out", str(tmp_path / "o"))
    assert proc.returncode == 2 and "missing header line '# api-name" in proc.stderr
    write_pair(tmp_path, "torch-function")
    proc = cli("run", str(write_manifest(tmp_path)), "--device", "cpu", "--mode", "msprof", "--out", str(tmp_path / "o"))
    assert proc.returncode == 2 and "runs on npu, not cpu" in proc.stderr


def test_cli_skips_a_device_the_module_does_not_list(tmp_path: Path, cli) -> None:
    write_pair(tmp_path, "torch-function")
    proc = cli("run", str(write_manifest(tmp_path, devices=["npu"])), "--device", "cpu", "--out", str(tmp_path / "o"))
    assert proc.returncode == 0 and "SKIPPED" in proc.stdout


def test_validate_accepts_bench_module_manifests(cli) -> None:
    proc = cli("validate", "bench_rmsnorm.yaml", "bench_rmsnorm_torch.yaml", "rmsnorm.yaml")
    assert proc.returncode == 0, proc.stderr
    assert "bench module rmsnorm_op.py, mode events, devices cuda, npu" in proc.stdout


# -- tilelang as a solution language -----------------------------------------------------------------

def test_tilelang_solution_language(tmp_path: Path, cpu) -> None:
    from harness.spec.model import Solution
    from harness.execute.solutions import LANGUAGES, BuildError, build_solution

    assert "tilelang" in LANGUAGES
    entry = tmp_path / "tl.py"
    entry.write_text("import torch\n\ndef run(x):\n    return x + 1\n")
    sol = Solution("tl", "tilelang", entry, "run", (), False, ("cuda",), "test")
    if HAVE_TILELANG:
        assert callable(build_solution(sol, cpu))
    else:
        with pytest.raises(BuildError, match="need the 'tilelang' package"):
            build_solution(sol, cpu)


def test_cli_shards_cases(tmp_path: Path, cli) -> None:
    write_pair(tmp_path, "torch-function")
    manifest = str(write_manifest(tmp_path))
    for i in (1, 2):
        proc = cli("run", manifest, "--device", "cpu", "--shard", f"{i}/2", "--out", str(tmp_path / "o"), "--quiet")
        assert proc.returncode == 0, proc.stderr
    ids = [[t["workload"] for t in json.loads((tmp_path / "o" / f"scale-cpu-events-shard-{i}-of-2.json").read_text())["traces"]]
           for i in (1, 2)]
    assert ids == [["n1024"], ["n4096"]]
    assert cli("run", manifest, "--device", "cpu", "--shard", "3/2", "--out", str(tmp_path / "o")).returncode == 2
    assert cli("run", manifest, "--device", "cpu", "--devices", "all", "--out", str(tmp_path / "o")).returncode == 2


@pytest.mark.skipif(not (HAVE_TRITON and torch.cuda.is_available()), reason="needs triton and a CUDA GPU")
def test_cli_triton_bench_module_on_cuda_attributes_rmsnorm_kernel(tmp_path: Path, cli) -> None:
    for mode in ("events", "torch-profiler"):
        proc = cli("run", "bench_rmsnorm.yaml", "--device", "cuda", "--mode", mode, "--out", str(tmp_path),
                   "--max-time-s", "0.5", "--quiet")
        assert proc.returncode == 0, proc.stderr
    report = json.loads((tmp_path / "rmsnorm-cuda-torch-profiler.json").read_text())
    for t in report["traces"]:
        att = t["correctness"]["attribution"]
        assert att["kernels"] == {"rmsnorm_kernel": 50} and att["per_call"] == 1, att
        assert t["timing"]["median_ms"] > 0


HOSTILE_CASES = dedent("""\
    # api-name: scale
    # api-kind: torch-function
    # kernels: aten::mul
    import os
    import time

    import torch

    def build_operator_api(operator_module):
        return operator_module.scale

    def build_bench_cases():
        return [{"id": "ok1"}, {"id": "hang"}, {"id": "abort"}, {"id": "raise"}, {"id": "ok2"}]

    def build_bench_case_fn(operator_api, case):
        x = torch.randn(256)
        if case["id"] == "hang":
            return lambda: time.sleep(3600)
        if case["id"] == "abort":
            return os.abort
        if case["id"] == "raise":
            raise ValueError("this case cannot be built")
        return lambda: operator_api(x)
    """)


def test_cases_run_in_workers_a_hang_or_abort_costs_only_that_case(tmp_path: Path, cli) -> None:
    """Bench modules are user code: they run in workers with deadlines, like solutions."""
    write_pair(tmp_path, "torch-function", HOSTILE_CASES)
    doc = yaml.safe_load(write_manifest(tmp_path).read_text())
    doc["bench"]["run_timeout_s"] = 3
    (tmp_path / "bench.yaml").write_text(yaml.safe_dump(doc))
    proc = cli("run", str(tmp_path / "bench.yaml"), "--device", "cpu", "--out", str(tmp_path / "o"), "--quiet")
    assert proc.returncode == 1
    report = json.loads(next((tmp_path / "o").glob("*.json")).read_text())
    got = {t["workload"]: (t["status"], t["message"]) for t in report["traces"]}
    assert [t["workload"] for t in report["traces"]] == ["ok1", "hang", "abort", "raise", "ok2"]
    assert got["ok1"][0] == got["ok2"][0] == "PASSED"
    assert got["hang"][0] == "TIMEOUT" and got["abort"][0] == "RUNTIME_ERROR" and "SIGABRT" in got["abort"][1]
    assert got["raise"][0] == "RUNTIME_ERROR" and "this case cannot be built" in got["raise"][1]


def test_an_interrupted_bench_module_run_keeps_the_cases_that_finished(tmp_path: Path) -> None:
    """SIGINT while a case hangs: exit 130 and a report of the cases before it (results/interrupt)."""
    import signal
    import subprocess
    import sys
    import time
    write_pair(tmp_path, "torch-function", HOSTILE_CASES.replace(
        "lambda: time.sleep(3600)", "lambda: (print('HANGING', flush=True), time.sleep(3600))"))
    doc = yaml.safe_load(write_manifest(tmp_path).read_text())
    doc["bench"]["run_timeout_s"] = 3600
    (tmp_path / "bench.yaml").write_text(yaml.safe_dump(doc))
    out = tmp_path / "o"
    proc = subprocess.Popen([sys.executable, "-m", "harness", "run", str(tmp_path / "bench.yaml"), "--device", "cpu",
                             "--out", str(out), "--quiet"], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    deadline = time.monotonic() + 300
    while not any("HANGING" in p.read_text(errors="replace") for p in out.glob("logs/*.log")):
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
        time.sleep(0.2)
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 130, stdout[-2000:] + stderr[-2000:]
    report = json.loads(next(out.glob("*.json")).read_text())
    assert [(t["workload"], t["status"]) for t in report["traces"]] == [("ok1", "PASSED")]
    assert report["failures"][0]["message"].startswith("interrupted by SIGINT")
