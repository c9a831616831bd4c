"""SOL-ExecBench problems read as upstream reads them, run through `hpc-bench`, traces in the upstream
shape (checked against flashinfer-bench's own pydantic model). The fixture is written here, in
SOL-ExecBench's format: `languages` lists, nulls, digit-string shapes, an `expr` axis, custom inputs,
constraints, per-workload tolerances, sources given by path beside the solution JSON."""
from __future__ import annotations

import importlib.util
import json
import sys
import types
from pathlib import Path
from typing import Any

import pytest
import torch

from harness.cli.hpcbench import main as hpc_bench
from harness.spec.flashinfer import Problem
from harness.spec.manifest import load_manifest
from harness.spec.schema import ManifestError

REFERENCE = '''import torch

def make_inputs(axes_and_scalars, device):
    n, d = axes_and_scalars["n"], axes_and_scalars["d"]
    return {"x": torch.randn(n, d, device=device), "w": torch.rand(1, d, device=device) + 0.5}

def run(x, w, eps):
    return {"y": x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * w, "half": x[:, : x.shape[1] // 2].sum(-1)}
'''
KERNEL = '''import torch

def run(x, w, eps, y, half):
    y.copy_(x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * w)
    half.copy_(x[:, : x.shape[1] // 2].sum(-1))
'''
RETURNS = '''import torch

def run(x, w, eps):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * w, x[:, : x.shape[1] // 2].sum(-1)
'''
DEFINITION = {
    "name": "rmsnorm_custom", "op_type": "norm", "description": None, "hf_id": None,
    "axes": {"n": {"type": "var", "description": None}, "d": {"type": "const", "value": 64},
             "d2": {"type": "expr", "expression": "d // 2"}},
    "constraints": ["d == 2 * d2"],
    "custom_inputs_entrypoint": "make_inputs",
    "inputs": {"x": {"shape": ["n", "d"], "dtype": "float32"}, "w": {"shape": ["1", "d"], "dtype": "float32"},
               "eps": {"shape": None, "dtype": "float32"}},
    "outputs": {"y": {"shape": ["n", "d"], "dtype": "float32", "description": None},
                "half": {"shape": ["n"], "dtype": "float32"}},
    "reference": REFERENCE,
}


def workload(uuid: str, n: int, **extra: Any) -> dict[str, Any]:
    return {"uuid": uuid, "axes": {"n": n},
            "inputs": {"x": {"type": "custom"}, "w": {"type": "custom"}, "eps": {"type": "scalar", "value": 1e-6}}, **extra}


def solution(name: str, entry: str, sources: list[dict[str, Any]], **spec: Any) -> dict[str, Any]:
    return {"name": name, "definition": "rmsnorm_custom", "author": "test", "description": None,
            "spec": {"languages": ["pytorch"], "target_hardware": ["LOCAL"], "entry_point": entry, "dependencies": [],
                     **spec},
            "sources": sources}


def make_problem(root: Path) -> tuple[Path, Path, Path]:
    """(problem dir, a DPS solution given by path only, a returning solution with empty content)."""
    problem, sols = root / "rmsnorm_custom", root / "mine"
    problem.mkdir(parents=True)
    sols.mkdir()
    (problem / "definition.json").write_text(json.dumps(DEFINITION))
    lines = [workload("w-8", 8, tolerance={"max_atol": 1e-4, "max_rtol": 1e-4, "required_matched_ratio": 0.999}),
             workload("w-0", 0), workload("w-33", 33, tolerance={"required_match_ratio": 0.9})]
    (problem / "workload.jsonl").write_text("".join(json.dumps(l) + "\n" for l in lines))
    (sols / "kernel.py").write_text(KERNEL)
    (sols / "returns.py").write_text(RETURNS)
    dps = sols / "solution.json"
    dps.write_text(json.dumps(solution("dps", "kernel.py::run", [{"path": "kernel.py"}])))
    ret = sols / "solution_returns.json"
    ret.write_text(json.dumps(solution("returns", "returns.py::run", [{"path": "returns.py", "content": ""}],
                                       destination_passing_style=False)))
    return problem, dps, ret


def test_a_sol_problem_is_read_as_upstream_reads_it(tmp_path: Path) -> None:
    problem, dps, ret = make_problem(tmp_path)
    m = load_manifest(problem, Problem(folder=problem, solutions=(dps, ret)))
    assert m.definition.custom_inputs == "make_inputs" and m.definition.constraints == ("d == 2 * d2",)
    assert m.definition.inputs["w"].shape == (1, "d")  # "1" is a size
    w8, w0, w33 = m.workloads
    assert w8.axes == {"d": 64, "n": 8, "d2": 32}
    assert (w8.tolerance.atol, w8.tolerance.rtol, round(w8.tolerance.max_mismatch, 6)) == (1e-4, 1e-4, 0.001)
    assert (w0.tolerance.atol, w0.tolerance.max_mismatch) == (1e-2, 0.01)  # SOL-ExecBench's defaults
    assert round(w33.tolerance.max_mismatch, 6) == 0.1  # the dataset's other spelling
    assert w0.axes["n"] == 0
    assert [s.destination_passing_style for s in m.solutions] == [True, False]  # upstream's default is True
    assert [s.language for s in m.solutions] == ["pytorch", "pytorch"]
    assert "copy_" in m.solutions[0].entry_file.read_text()


def test_every_problem_of_a_sol_problem_is_named_at_once(tmp_path: Path) -> None:
    problem, dps, _ = make_problem(tmp_path)
    bad = json.loads((problem / "definition.json").read_text())
    bad["axes"]["d2"]["expression"] = "d // k"
    bad["constraints"] = ["n < 20"]
    (problem / "definition.json").write_text(json.dumps(bad))
    gone = tmp_path / "mine" / "solution_gone.json"
    gone.write_text(json.dumps(solution("gone", "absent.py::run", [{"path": "absent.py"}])))
    with pytest.raises(ManifestError) as info:
        load_manifest(problem, Problem(folder=problem, solutions=(dps, gone)))
    text = str(info.value)
    assert "unknown name 'k'" in text
    assert "no content and no file 'absent.py' beside the solution JSON" in text and "solution_gone.json" in text
    bad["axes"]["d2"]["expression"] = "d // 2"
    (problem / "definition.json").write_text(json.dumps(bad))
    with pytest.raises(ManifestError) as info:
        load_manifest(problem, Problem(folder=problem, solutions=(dps,)))
    assert "constraint 'n < 20' does not hold at" in str(info.value) and "workload.jsonl:3" in str(info.value)


def fib_models() -> Any:
    """flashinfer-bench's trace models (`Trace`, `Evaluation`), from the installed wheel's data/trace.py
    (its package __init__ imports flashinfer and tvm-ffi, which a CPU machine does not have)."""
    spec = importlib.util.find_spec("flashinfer_bench")
    assert spec is not None and spec.origin, "flashinfer-bench is a test dependency (requirements-test-nodeps.txt)"
    data = Path(spec.origin).parent / "data"
    package = types.ModuleType("fib_models")
    package.__path__ = [str(data)]
    sys.modules["fib_models"] = package
    for name in ("utils", "workload", "trace"):
        mod_spec = importlib.util.spec_from_file_location(f"fib_models.{name}", data / f"{name}.py")
        assert mod_spec is not None and mod_spec.loader is not None
        module = importlib.util.module_from_spec(mod_spec)
        sys.modules[f"fib_models.{name}"] = module
        mod_spec.loader.exec_module(module)
    return sys.modules["fib_models.trace"]


SCALED = '''import torch

def make_inputs(axes_and_scalars, device):
    n = axes_and_scalars["n"]
    return {"x": torch.randn(n, 4, device=device), "scale": 0.5 if axes_and_scalars["halve"] else 2.0}

def run(x, scale):
    return x * scale
'''


def test_what_upstream_lets_through_runs_as_upstream_runs_it(tmp_path: Path) -> None:
    """Three things of SOL-ExecBench's published set that upstream's loader accepts: a scalar made by
    the custom generator (Quant/011's routed_scaling_factor), a workload axis the definition does not
    declare, read by that generator (L2/032's is_joint_block), a workload input the definition does not
    declare, never read (L2/068's bias1)."""
    problem = tmp_path / "scaled"
    problem.mkdir()
    (problem / "definition.json").write_text(json.dumps({
        "name": "scaled", "axes": {"n": {"type": "var"}}, "custom_inputs_entrypoint": "make_inputs",
        "inputs": {"x": {"shape": ["n", 4], "dtype": "float32"}, "scale": {"shape": None, "dtype": "float32"}},
        "outputs": {"y": {"shape": ["n", 4], "dtype": "float32"}}, "reference": SCALED}))
    lines = [{"uuid": f"w{h}", "axes": {"n": 3, "halve": h},
              "inputs": {"x": {"type": "custom"}, "scale": {"type": "custom"}, "bias1": {"type": "custom"}}}
             for h in (0, 1)]
    (problem / "workload.jsonl").write_text("".join(json.dumps(l) + "\n" for l in lines))
    sol = tmp_path / "solution.json"
    sol.write_text(json.dumps({"name": "mine", "definition": "scaled", "sources": [{"path": "k.py", "content": SCALED}],
                               "spec": {"languages": ["pytorch"], "entry_point": "k.py::run",
                                        "destination_passing_style": False}}))
    m = load_manifest(problem, Problem(folder=problem, solutions=(sol,)))
    assert [w.axes for w in m.workloads] == [{"n": 3, "halve": 0}, {"n": 3, "halve": 1}]
    assert [sorted(w.inputs) for w in m.workloads] == [["scale", "x"]] * 2
    out = tmp_path / "traces.jsonl"
    rc = hpc_bench([str(problem), "--solution", str(sol), "-o", str(out), "--device", "cpu", "--max-time-s", "0.1",
                    "--rounds", "1", "--out", str(tmp_path / "report")])
    assert rc == 0 and [json.loads(l)["evaluation"]["status"] for l in out.read_text().splitlines()] == ["PASSED"] * 2


SPLIT = '''import torch

def run(x):
    both = torch.stack([x * 2, x + 1])
    return both[0], both[1]
'''


def test_a_reference_whose_outputs_are_views_of_one_tensor_is_a_good_reference(tmp_path: Path) -> None:
    """SOL-ExecBench's L1/006, L1/035 and L1/065 references return views of one result; the reference is
    trusted code, so its outputs are not held to the fresh-tensor rule a solution is (it was
    INVALID_REFERENCE on the H100, 2026-12-06). A solution may return disjoint views of one result too (L2/030's
    reference, run as its solution, was REWARD_HACK on the H100); two outputs on the same bytes are refused."""
    problem = tmp_path / "split"
    problem.mkdir()
    (problem / "definition.json").write_text(json.dumps({
        "name": "split", "axes": {"n": {"type": "var"}}, "inputs": {"x": {"shape": ["n"], "dtype": "float32"}},
        "outputs": {"a": {"shape": ["n"], "dtype": "float32"}, "b": {"shape": ["n"], "dtype": "float32"}},
        "reference": SPLIT}))
    (problem / "workload.jsonl").write_text(json.dumps({"uuid": "w", "axes": {"n": 8}, "inputs": {"x": {"type": "random"}}}) + "\n")
    same = "import torch\n\ndef run(x):\n    y = x * 2\n    return y, y[:]\n"  # a and b: one result, twice
    for name, code in (("fresh", "import torch\n\ndef run(x):\n    return x * 2, x + 1\n"), ("views", SPLIT), ("same", same)):
        (tmp_path / f"{name}.json").write_text(json.dumps({
            "name": name, "definition": "split", "sources": [{"path": "k.py", "content": code}],
            "spec": {"languages": ["pytorch"], "entry_point": "k.py::run", "destination_passing_style": False}}))
    out = tmp_path / "traces.jsonl"
    hpc_bench([str(problem), "--solution", str(tmp_path / "fresh.json"), "--solution", str(tmp_path / "views.json"),
               "--solution", str(tmp_path / "same.json"), "-o", str(out), "--device", "cpu", "--max-time-s", "0.1", "--rounds", "1", "--out", str(tmp_path / "report")])
    got = {json.loads(l)["solution"]: json.loads(l)["evaluation"] for l in out.read_text().splitlines()}
    assert got["fresh"]["status"] == "PASSED" and got["views"]["status"] == "PASSED", got
    assert got["same"]["status"] == "REWARD_HACK" and "overlaps another output" in str(got["same"].get("log")), got["same"]


def test_hpc_bench_runs_a_sol_problem_and_writes_upstream_traces(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    problem, dps, ret = make_problem(tmp_path)
    out = tmp_path / "traces.jsonl"
    rc = hpc_bench([str(problem), "--solution", str(dps), "--solution", str(ret), "-o", str(out), "--device", "cpu",
                    "--max-time-s", "0.2", "--rounds", "2", "--out", str(tmp_path / "report")])
    printed = capsys.readouterr().out
    assert rc == 0, printed
    traces = [json.loads(line) for line in out.read_text().splitlines()]
    assert [(t["solution"], t["workload"]["uuid"], t["evaluation"]["status"]) for t in traces] == [
        (s, w, "PASSED") for s in ("dps", "returns") for w in ("w-8", "w-0", "w-33")]
    models = fib_models()
    for t in traces:  # FlashInfer-Bench has no custom inputs: its Evaluation model checks the rest
        checked = models.Evaluation.model_validate(t["evaluation"])
        assert checked.performance.latency_ms > 0 and checked.correctness.max_absolute_error < 1e-3
    assert traces[0]["workload"]["tolerance"]["max_atol"] == 1e-4 and traces[0]["workload"]["axes"] == {"n": 8}
    assert traces[0]["opbench"]["status"] == "PASSED"  # the richer record rides along


def test_a_flashinfer_bench_directory_gives_traces_its_own_model_accepts(tmp_path: Path) -> None:
    sys.path.insert(0, str(Path(__file__).parent))
    from test_flashinfer import make_dir
    root = make_dir(tmp_path / "fib")
    (root / "solutions" / "wrong.json").write_text(json.dumps({
        "name": "wrong", "definition": "rmsnorm_h128", "author": "test",
        "spec": {"language": "python", "target_hardware": ["cpu"], "entry_point": "main.py::run",
                 "destination_passing_style": False},
        "sources": [{"path": "main.py", "content": "def run(input, weight, eps):\n    return {'output': input * 2}\n"}]}))
    out = tmp_path / "traces.jsonl"
    assert hpc_bench([str(root), "-o", str(out), "--device", "cpu", "--max-time-s", "0.1", "--rounds", "1",
                      "--out", str(tmp_path / "report")]) == 1  # one solution is wrong
    traces = [fib_models().Trace.model_validate_json(line) for line in out.read_text().splitlines()]
    assert sorted((t.solution, t.evaluation.status.value) for t in traces) == [
        ("rmsnorm_py", "PASSED"), ("rmsnorm_py", "PASSED"), ("wrong", "INCORRECT_NUMERICAL"), ("wrong", "INCORRECT_NUMERICAL")]
    assert all(t.evaluation.performance is None for t in traces if t.solution == "wrong")


def test_hpc_bench_json_prints_traces_and_a_typo_is_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    problem, dps, _ = make_problem(tmp_path)
    assert hpc_bench([str(problem), "--solution", str(tmp_path / "nope.json")]) == 2
    assert "no such file" in capsys.readouterr().err
    rc = hpc_bench(["--definition", str(problem / "definition.json"), "--workload", str(problem / "workload.jsonl"),
                    "--solution", str(dps), "--json", "--device", "cpu", "--max-time-s", "0.1",
                    "--rounds", "1", "--out", str(tmp_path / "report")])
    lines = [json.loads(l) for l in capsys.readouterr().out.splitlines() if l.startswith("{")]
    assert rc == 0 and len(lines) == 3 and {l["evaluation"]["status"] for l in lines} == {"PASSED"}


def test_opbench_run_takes_the_same_files_and_refuses_a_name_that_matches_nothing(tmp_path: Path) -> None:
    from harness.cli import main
    problem, dps, _ = make_problem(tmp_path)
    common = ["run", str(problem), "--device", "cpu", "--max-time-s", "0.1", "--rounds", "1", "--quiet",
              "--out", str(tmp_path / "o")]
    assert main(common + ["--solution", str(dps), "--workload", "w-8"]) == 0
    assert main(common + ["--solution", str(dps), "--workload", "w-9"]) == 2  # a typo runs nothing and says so


FP4_MANIFEST = """
schema_version: 1
definition:
  name: fp4-copy
  axes: {n: {type: var}}
  inputs: {x: {shape: [n, 8], dtype: float4_e2m1fn_x2}}
  outputs: {y: {shape: [n, 8], dtype: float4_e2m1fn_x2}}
  reference: |
    def run(x):
        return x.clone()
workloads: [{id: n4, axes: {n: 4}}]
solutions:
  - {name: copy, language: pytorch, entry_point: copy.py::run}
  - {name: flipped, language: pytorch, entry_point: flipped.py::run, expected_status: INCORRECT_NUMERICAL}
bench: {max_time_s: 0.1, correctness_rounds: 1}
"""


def test_packed_fp4_tensors_are_made_and_compared_by_the_values_they_hold(tmp_path: Path) -> None:
    from harness.execute.dtypes import fp4_to_float
    from harness.run.runner import Runner, RunOptions
    (tmp_path / "copy.py").write_text("def run(x):\n    return x.clone()\n")
    (tmp_path / "flipped.py").write_text("import torch\n\ndef run(x):\n    return (x.view(torch.uint8) ^ 0x88).view(x.dtype)\n")
    (tmp_path / "fp4.yaml").write_text(FP4_MANIFEST)
    report = Runner(load_manifest(tmp_path / "fp4.yaml"), RunOptions(device="cpu", log_dir=tmp_path / "logs")).run()
    assert [(t.solution, str(t.status)) for t in report.traces] == [("copy", "PASSED"), ("flipped", "INCORRECT_NUMERICAL")]
    packed = torch.tensor([[0x21, 0xF7]], dtype=torch.uint8).view(torch.float4_e2m1fn_x2)
    assert fp4_to_float(packed).tolist() == [[0.5, 1.0, 6.0, -6.0]]


def test_a_sol_random_fp4_input_is_declared_in_values_and_drawn_with_its_last_dimension_halved(tmp_path: Path) -> None:
    """SOL-ExecBench declares a packed fp4 input's shape in values and packs a random draw into half
    as many bytes along the last dimension; opbench's own manifests declare the packed shape."""
    problem = tmp_path / "fp4_sum"
    problem.mkdir()
    definition = {"name": "fp4_sum", "op_type": "q", "axes": {"n": {"type": "var"}},
                  "inputs": {"x": {"shape": ["n", "16"], "dtype": "float4_e2m1"}},
                  "outputs": {"bytes": {"shape": ["n", "8"], "dtype": "int32"}},
                  "reference": "import torch\n\ndef run(x):\n    return x.view(torch.uint8).to(torch.int32)\n"}
    (problem / "definition.json").write_text(json.dumps(definition))
    (problem / "workload.jsonl").write_text(json.dumps({"uuid": "n3", "axes": {"n": 3}, "inputs": {"x": {"type": "random"}}}) + "\n")
    (tmp_path / "k.py").write_text("import torch\n\ndef run(x):\n    return x.view(torch.uint8).to(torch.int32)\n")
    sol = tmp_path / "solution.json"
    sol.write_text(json.dumps({"name": "view", "definition": "fp4_sum", "author": "t",
                               "spec": {"languages": ["pytorch"], "entry_point": "k.py::run",
                                        "destination_passing_style": False}, "sources": [{"path": "k.py"}]}))
    m = load_manifest(problem, Problem(folder=problem, solutions=(sol,)))
    assert m.workloads[0].inputs["x"].params["fp4_shape"] == "values"
    from harness.execute.inputs import generate_inputs
    x = generate_inputs(m.definition, m.workloads[0], 1, torch.device("cpu"))["x"]
    assert (tuple(x.shape), x.dtype) == ((3, 8), torch.float4_e2m1fn_x2)
    assert hpc_bench([str(problem), "--solution", str(sol), "--device", "cpu", "--max-time-s", "0.1",
                      "-o", str(tmp_path / "t.jsonl")]) == 0
    trace = json.loads((tmp_path / "t.jsonl").read_text().splitlines()[0])
    assert trace["evaluation"]["status"] == "PASSED"


def test_a_missing_toolchain_is_unsupported_with_what_to_install(tmp_path: Path) -> None:
    import yaml
    from factories import axpy_document
    from harness.run.runner import Runner, RunOptions
    (tmp_path / "k.py").write_text("def run(x, w):\n    return x * w + 1\n")
    doc = axpy_document([{"name": "cute", "language": "cute_dsl", "entry_point": "k.py::run", "devices": ["cpu"]},
                         {"name": "cutlass", "language": "cutlass", "entry_point": "k.py::run"}])
    (tmp_path / "m.yaml").write_text(yaml.safe_dump(doc))
    report = Runner(load_manifest(tmp_path / "m.yaml"), RunOptions(device="cpu", log_dir=tmp_path / "logs")).run()
    got = {t.solution: (str(t.status), t.message) for t in report.traces}
    assert got["cute"][0] == "UNSUPPORTED" and "pip install 'nvidia-cutlass-dsl[cu13]'" in got["cute"][1]
    assert got["cutlass"][0] == "SKIPPED"  # C++ languages target CUDA: on a CPU run they say so
    assert report.summary.ok  # neither says anything about the solutions


def test_the_schema_lists_the_languages_the_builders_know() -> None:
    from harness.execute.solutions import LANGUAGES
    from harness.paths import SCHEMA_DIR
    schema = json.loads((SCHEMA_DIR / "solution.schema.json").read_text())
    assert sorted(schema["properties"]["language"]["enum"]) == sorted(LANGUAGES)


def make_traceset(root: Path) -> Path:
    """A FlashInfer-Bench TraceSet: definitions/, workloads/ (trace lines), solutions/, blob/."""
    from safetensors.torch import save_file
    (root / "definitions" / "ew").mkdir(parents=True)
    (root / "definitions" / "ew" / "scale.json").write_text(json.dumps({
        "name": "scale", "op_type": "ew", "axes": {"n": {"type": "var"}},
        "inputs": {"x": {"shape": ["n"], "dtype": "float32"}, "w": {"shape": ["n"], "dtype": "float32"}},
        "outputs": {"y": {"shape": ["n"], "dtype": "float32"}},
        "reference": "def run(x, w):\n    return x * w\n"}))
    blob = root / "blob" / "workloads" / "ew" / "scale" / "scale_w1.safetensors"
    blob.parent.mkdir(parents=True)
    save_file({"w": torch.arange(16, dtype=torch.float32)}, str(blob))
    (root / "workloads" / "ew").mkdir(parents=True)
    line = {"definition": "scale", "solution": None, "evaluation": None,
            "workload": {"uuid": "w1", "axes": {"n": 16}, "inputs": {
                "x": {"type": "random"},
                "w": {"type": "safetensors", "path": "blob/workloads/ew/scale/scale_w1.safetensors", "tensor_key": "w"}}}}
    (root / "workloads" / "ew" / "scale.jsonl").write_text(json.dumps(line) + "\n")
    sols = root / "solutions" / "me" / "ew" / "scale"
    sols.mkdir(parents=True)
    for name, code, extra in (("good", "def run(x, w, y):\n    y.copy_(x * w)\n", {}),
                              ("hack", "def run(x, w, y):\n    x.mul_(w)\n    y.copy_(x)\n", {"expected_status": "REWARD_HACK"})):
        (sols / f"{name}.json").write_text(json.dumps({
            "name": name, "definition": "scale", "author": "me",
            "spec": {"language": "python", "target_hardware": ["cpu"], "entry_point": "k.py::run"},
            "sources": [{"path": "k.py", "content": code}], **extra}))
    return root


def test_a_traceset_root_runs_as_a_suite_with_its_blobs_found_from_the_root(tmp_path: Path) -> None:
    from harness.cli import main
    root = make_traceset(tmp_path / "trace")
    out = tmp_path / "o"
    assert main(["run", str(root), "--device", "cpu", "--max-time-s", "0.1", "--rounds", "1", "--quiet",
                 "--out", str(out)]) == 0  # the hack sample got REWARD_HACK (INPUT_MUTATED), as it declares
    report = json.loads(next(out.glob("*.json")).read_text())
    got = {(t["solution"], t["status"]) for t in report["traces"]}
    assert got == {("good", "PASSED"), ("hack", "INPUT_MUTATED")}


def test_blob_paths_are_found_as_both_upstreams_find_them(tmp_path: Path) -> None:
    from harness.spec.flashinfer import blob_roots, find_blob
    blob = tmp_path / "flashinfer-trace" / "blob" / "workloads" / "a.safetensors"
    blob.parent.mkdir(parents=True)
    blob.write_bytes(b"x")
    roots = blob_roots(tmp_path / "problem", None, {"FLASHINFER_TRACE_DIR": str(tmp_path / "flashinfer-trace")})
    assert find_blob("data/flashinfer-trace/blob/workloads/a.safetensors", roots) == blob.resolve()  # SOL's form
    assert find_blob("blob/workloads/a.safetensors", blob_roots(tmp_path, tmp_path / "flashinfer-trace", {})) == blob.resolve()
    assert find_blob("blob/workloads/b.safetensors", roots) is None
