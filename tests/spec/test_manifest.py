"""Schema and cross-checks: every shipped manifest loads; bad ones name file, field path and expectation."""
from __future__ import annotations

import copy
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable

import pytest
import yaml

from harness.spec.manifest import load_manifest
from harness.spec.schema import ManifestError

from factories import ROOT, axpy_document, solution


def shipped_manifests() -> list[Path]:
    """Problem manifests in manifests/ (suites and bench-module manifests have their own tests)."""
    out = []
    for path in sorted((ROOT / "manifests").glob("*.yaml")):
        doc = yaml.safe_load(path.read_text())
        if isinstance(doc, dict) and "definition" in doc:
            out.append(path)
    return out


@pytest.mark.parametrize("path", shipped_manifests(), ids=lambda p: p.name)
def test_shipped_manifest_is_valid(path: Path) -> None:
    m = load_manifest(path)
    assert m.workloads and m.solutions


def test_rmsnorm_manifest_has_what_issue_asks() -> None:
    m = load_manifest(ROOT / "manifests" / "rmsnorm.yaml")
    assert len(m.workloads) >= 3
    assert {s.language for s in m.solutions} >= {"pytorch", "triton", "cuda_cpp"}
    assert any(s.expected_status == "INCORRECT_NUMERICAL" for s in m.solutions)
    assert {w.dtypes["x"] for w in m.workloads} == {"bfloat16", "float32"}
    hidden = sorted(w.axes["hidden"] for w in m.workloads)
    assert hidden[0] < hidden[-1]


def mutate(edit: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    doc = copy.deepcopy(axpy_document([solution("good", "good.py")]))
    edit(doc)
    return doc


BAD: list[tuple[str, Callable[[dict[str, Any]], None], str, str]] = [
    ("bad dtype", lambda d: d["definition"]["inputs"]["x"].update(dtype="bf17"), "definition.inputs.x.dtype", "expected one of"),
    ("missing axes", lambda d: d["workloads"][0].pop("axes"), "workloads[0]", "missing required field 'axes'"),
    ("unknown field", lambda d: d["definition"].update(colour="red"), "definition", "unknown field"),
    ("axis not integer", lambda d: d["workloads"][0]["axes"].update(n="big"), "workloads[0].axes.n", "expected integer"),
    ("const without value", lambda d: d["definition"]["axes"].update(k={"type": "const"}), "definition.axes.k", "'value'"),
    ("bad language", lambda d: d["solutions"][0].update(language="fortran"), "solutions[0].language", "expected one of"),
    ("bad entry point", lambda d: d["solutions"][0].update(entry_point="good.py"), "solutions[0].entry_point", "matching"),
    ("negative atol", lambda d: d["workloads"][0].update(tolerance={"atol": -1}), "workloads[0].tolerance.atol", "minimum"),
    ("bad generator", lambda d: d["workloads"][0].update(inputs={"x": {"type": "random", "std": 1, "colour": 1}}),
     "workloads[0].inputs.x", "unknown field"),
    ("randint needs bounds", lambda d: d["workloads"][0].update(inputs={"x": {"type": "randint"}}), "workloads[0].inputs.x", "'low'"),
    ("unknown shape axis", lambda d: d["definition"]["inputs"]["x"].update(shape=["m"]), "definition.inputs.x.shape[0]", "unknown axis 'm'"),
    ("var axis not given", lambda d: d["workloads"][0].update(axes={}), "workloads[0].axes", "missing value for var axis 'n'"),
    ("unknown workload input", lambda d: d["workloads"][0].update(inputs={"z": {"type": "zeros"}}), "workloads[0].inputs.z", "unknown input"),
    ("missing entry file", lambda d: d["solutions"][0].update(entry_point="nowhere.py::run"), "solutions[0].entry_point", "does not exist"),
    ("bad flops formula", lambda d: d["definition"].update(flops="n * __import__('os')"), "definition.flops", "arithmetic expression"),
    ("duplicate solution", lambda d: d["solutions"].append(dict(d["solutions"][0])), "solutions[1].name", "duplicate"),
    ("bad bench option", lambda d: d["bench"].update(cache="lukewarm"), "bench.cache", "expected one of"),
]


@pytest.mark.parametrize("label,edit,field,words", BAD, ids=[b[0] for b in BAD])
def test_bad_manifest_names_file_field_and_expectation(write_manifest, label: str, edit: Callable, field: str, words: str) -> None:
    path = write_manifest(mutate(edit))
    with pytest.raises(ManifestError) as info:
        load_manifest(path)
    rendered = [str(e) for e in info.value.errors]
    assert any(f"manifest.yaml: {field}: " in r and words in r for r in rendered), rendered


def test_all_errors_reported_at_once(write_manifest) -> None:
    def edit(d: dict[str, Any]) -> None:
        d["definition"]["inputs"]["x"]["dtype"] = "bf17"
        d["solutions"][0]["language"] = "fortran"
        d["workloads"][0]["axes"]["n"] = -3
    with pytest.raises(ManifestError) as info:
        load_manifest(write_manifest(mutate(edit)))
    paths = {e.path for e in info.value.errors}
    assert {("definition", "inputs", "x", "dtype"), ("solutions", 0, "language"), ("workloads", 0, "axes", "n")} <= paths


def test_schema_errors_do_not_hide_cross_check_errors(write_manifest) -> None:
    def edit(d: dict[str, Any]) -> None:
        d["definition"]["inputs"]["x"]["dtype"] = "bf17"            # the schema's
        d["definition"]["inputs"]["w"]["shape"] = ["m"]             # a cross-check's: no axis m
    with pytest.raises(ManifestError) as info:
        load_manifest(write_manifest(mutate(edit)))
    paths = {e.path for e in info.value.errors}
    assert {("definition", "inputs", "x", "dtype"), ("definition", "inputs", "w", "shape", 0)} <= paths


def test_a_misspelled_entry_symbol_is_found_without_running_the_solution(write_manifest, tmp_path: Path) -> None:
    (tmp_path / "k.cu").write_text('#include <torch/extension.h>\nPYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("axpy", &axpy); }\n')
    (tmp_path / "k.py").write_text("import sys\nif sys.platform:\n    def axpy(x, w):\n        return x\n")
    def edit(d: dict[str, Any]) -> None:
        d["solutions"] = [solution("py", "good.py", entry_point=f"{ROOT / 'tests/solutions/good.py'}::rnu"),
                          {"name": "cu", "language": "cuda_cpp", "entry_point": f"{tmp_path / 'k.cu'}::axpyy"},
                          {"name": "cond", "language": "pytorch", "entry_point": f"{tmp_path / 'k.py'}::axpy"}]
    with pytest.raises(ManifestError) as info:
        load_manifest(write_manifest(mutate(edit)))
    text = str(info.value)
    assert "good.py defines no top-level 'rnu' (did you mean 'run'?)" in text
    assert "no 'axpyy' in k.cu or its sources" in text and "did you mean 'axpy'?" in text
    assert "solutions[2]" not in text  # defined inside a top-level if: it may exist


def test_error_in_included_file_names_that_file(tmp_path: Path) -> None:
    (tmp_path / "sols").mkdir()
    (tmp_path / "sols" / "a.yaml").write_text(yaml.safe_dump({"name": "a", "language": "cobol", "entry_point": "x.py::run"}))
    doc = axpy_document([])
    doc["solutions"] = [{"$include": "sols/*.yaml"}]
    (tmp_path / "m.yaml").write_text(yaml.safe_dump(doc))
    with pytest.raises(ManifestError) as info:
        load_manifest(tmp_path / "m.yaml")
    assert any(e.file.endswith("sols/a.yaml") and e.path == ("solutions", 0, "language") for e in info.value.errors)


def test_yaml_syntax_error_names_line(tmp_path: Path) -> None:
    path = tmp_path / "broken.yaml"
    path.write_text("definition:\n  name: [unclosed\n")
    with pytest.raises(ManifestError, match=r"broken.yaml: <top level>: invalid YAML at line \d+"):
        load_manifest(path)


def test_validate_command_exits_nonzero_on_bad_manifest(write_manifest) -> None:
    bad = write_manifest(mutate(lambda d: d["definition"]["inputs"]["x"].update(dtype="bf17")), "bad.yaml")
    good = write_manifest(mutate(lambda d: None), "good.yaml")
    run = lambda p: subprocess.run([sys.executable, "-m", "harness", "validate", str(p)], capture_output=True, text=True, cwd=ROOT)
    r_bad, r_good = run(bad), run(good)
    assert r_bad.returncode != 0 and "definition.inputs.x.dtype" in r_bad.stderr and "bf17" in r_bad.stderr
    assert r_good.returncode == 0 and r_good.stdout.startswith("OK")


def test_workload_dtype_override_and_default_tolerance(write_manifest) -> None:
    doc = mutate(lambda d: d["workloads"].append({"id": "half", "axes": {"n": 8}, "dtypes": {"x": "float16", "w": "float16", "y": "float16"}}))
    m = load_manifest(write_manifest(doc))
    half = m.workloads[1]
    assert half.dtypes["y"] == "float16" and half.tolerance.atol == pytest.approx(1e-2)
    assert m.workloads[0].tolerance.atol == pytest.approx(1e-4)
