"""FlashInfer-Bench directories (definition.json + workload.jsonl + solution JSON) load and run."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.spec.manifest import load_manifest
from harness.run.runner import Runner, RunOptions
from harness.spec.schema import ManifestError
from harness.results.trace import Status

DEFINITION = {
    "name": "rmsnorm_h128", "type": "norm", "tags": ["status:verified"],
    "axes": {"batch_size": {"type": "var"}, "hidden_size": {"type": "const", "value": 128}},
    "inputs": {"input": {"shape": ["batch_size", "hidden_size"], "dtype": "float32"},
               "weight": {"shape": ["hidden_size"], "dtype": "float32"}, "eps": {"shape": [], "dtype": "float32"}},
    "outputs": {"output": {"shape": ["batch_size", "hidden_size"], "dtype": "float32"}},
    "reference": "import torch\n\ndef run(input, weight, eps):\n    v = input.pow(2).mean(-1, keepdim=True)\n"
                 "    return {'output': input * torch.rsqrt(v + eps) * weight}\n",
}
MAIN = "import torch\n\ndef run(input, weight, eps):\n    return {'output': input / (input.pow(2).mean(-1, keepdim=True) + eps).sqrt() * weight}\n"


def make_dir(root: Path) -> Path:
    root.mkdir()
    (root / "definition.json").write_text(json.dumps(DEFINITION))
    lines = [{"definition": "rmsnorm_h128", "solution": None,
              "workload": {"uuid": f"wl-{b}", "axes": {"batch_size": b},
                           "inputs": {"input": {"type": "random"}, "weight": {"type": "random"}, "eps": {"type": "scalar", "value": 1e-6}}},
              "evaluation": None} for b in (3, 17)]
    (root / "workload.jsonl").write_text("\n".join(json.dumps(l) for l in lines) + "\n")
    (root / "solutions").mkdir()
    (root / "solutions" / "py.json").write_text(json.dumps({
        "name": "rmsnorm_py", "definition": "rmsnorm_h128", "author": "test",
        "spec": {"language": "Python", "target_hardware": ["cpu"], "entry_point": "main.py::run", "dependencies": [],
                 "destination_passing_style": False},
        "sources": [{"path": "main.py", "content": MAIN}]}))
    return root


def test_import_and_run(tmp_path: Path) -> None:
    m = load_manifest(make_dir(tmp_path / "fib"))
    assert [w.id for w in m.workloads] == ["wl-3", "wl-17"]
    assert m.definition.inputs["eps"].shape is None  # FlashInfer scalar -> Python number
    assert m.solutions[0].language == "pytorch"
    m = type(m)(m.path, m.definition, m.workloads, m.solutions,
                type(m.bench)(max_time_s=0.2, min_samples=3, rse_threshold=0.5, correctness_rounds=1, warmup_ms=0))
    result = Runner(m, RunOptions(device="cpu", log_dir=tmp_path / "logs")).run()
    assert [t.status for t in result.traces] == [Status.PASSED, Status.PASSED]


def test_bad_workload_line_names_file_and_line(tmp_path: Path) -> None:
    root = make_dir(tmp_path / "fib")
    with (root / "workload.jsonl").open("a") as fh:
        fh.write('{"workload": {"uuid": "bad", "axes": {"batch_size": "many"}}}\n')
    with pytest.raises(ManifestError) as info:
        load_manifest(root)
    assert any(e.file.endswith("workload.jsonl:3") and e.path == ("workloads", 2, "axes", "batch_size")
               for e in info.value.errors), info.value


def test_not_a_flashinfer_directory(tmp_path: Path) -> None:
    with pytest.raises(ManifestError, match="definition.json"):
        load_manifest(tmp_path)
