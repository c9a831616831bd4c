"""The CI workflow files: a strict schema (tests/fixtures/github-workflow.schema.json), references
that must resolve (needs, matrix, steps, inputs, env), shell syntax of every `run:`, what each
workflow must do, and actionlint when it is on PATH (the tests workflow installs it)."""
from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any, Iterator

import pytest
import yaml
from jsonschema import Draft202012Validator

from factories import FIXTURES, ROOT
WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.yml"))
SCHEMA = json.loads((FIXTURES / "github-workflow.schema.json").read_text())
EXPR = re.compile(r"\$\{\{(.*?)\}\}", re.S)
CONTEXTS = {"github", "env", "vars", "job", "jobs", "steps", "runner", "secrets", "strategy", "matrix", "needs", "inputs"}
FUNCTIONS = {"contains", "startsWith", "endsWith", "format", "join", "toJSON", "fromJSON", "hashFiles", "success",
             "always", "cancelled", "failure"}
DEFAULT_ENV = {"GITHUB_OUTPUT", "GITHUB_STEP_SUMMARY", "GITHUB_PATH", "GITHUB_ENV", "RUNNER_TEMP"}


def load(path: Path) -> dict[str, Any]:
    doc = yaml.safe_load(path.read_text())
    if True in doc:  # YAML 1.1 reads the key `on` as a boolean
        doc["on"] = doc.pop(True)
    return doc


def strings(node: Any) -> Iterator[str]:
    if isinstance(node, str):
        yield node
    elif isinstance(node, dict):
        for k, v in node.items():
            yield from strings(k)
            yield from strings(v)
    elif isinstance(node, list):
        for v in node:
            yield from strings(v)


def expressions(node: Any) -> list[str]:
    return [m.group(1) for s in strings(node) for m in EXPR.finditer(s)]


def unquoted(expr: str) -> str:
    return re.sub(r"'(?:[^']|'')*'", "''", expr)


def all_ifs(job: dict[str, Any]) -> list[str]:
    """`if:` values written without ${{ }} (they are expressions all the same)."""
    out = [job["if"]] if isinstance(job.get("if"), str) else []
    out += [s["if"] for s in job.get("steps", []) if isinstance(s.get("if"), str)]
    return [e for e in out if "${{" not in e]


@pytest.fixture(params=WORKFLOWS, ids=lambda p: p.name)
def workflow(request) -> tuple[Path, dict[str, Any]]:
    return request.param, load(request.param)


def test_the_four_workflows_exist() -> None:
    assert {p.name for p in WORKFLOWS} >= {"tests.yml", "bench-npu.yml", "bench-gpu.yml", "images.yml"}


def test_schema(workflow) -> None:
    path, doc = workflow
    errors = sorted(Draft202012Validator(SCHEMA).iter_errors(doc), key=lambda e: list(e.absolute_path))
    assert not errors, "\n".join(f"{path.name}: {'/'.join(map(str, e.absolute_path))}: {e.message}" for e in errors)


def test_expressions_use_known_contexts_and_functions(workflow) -> None:
    path, doc = workflow
    exprs = [m.group(1) for s in strings(doc) for m in EXPR.finditer(s)]
    exprs += [e for job in doc["jobs"].values() for e in all_ifs(job)]
    for s in strings(doc):
        assert len(EXPR.findall(s)) == s.count("${{"), f"{path.name}: unclosed ${{{{ in {s!r}"
    for e in exprs:
        text = unquoted(e)
        for name in re.findall(r"(?<![\w.-])([A-Za-z_][\w-]*)\s*\(", text):
            assert name in FUNCTIONS, f"{path.name}: unknown function {name}() in {e!r}"
        for name in re.findall(r"(?<![\w.-])([A-Za-z_][\w-]*)\s*[.\[]", text):
            assert name in CONTEXTS, f"{path.name}: unknown context {name!r} in {e!r}"


def test_references_resolve(workflow) -> None:
    path, doc = workflow
    jobs = doc["jobs"]
    inputs = set(((doc["on"].get("workflow_dispatch") or {}).get("inputs") or {}))
    wf_env = set(doc.get("env", {}))
    for name, job in jobs.items():
        needs = job.get("needs", [])
        needs = [needs] if isinstance(needs, str) else needs
        assert set(needs) <= set(jobs), f"{path.name}: {name} needs unknown job(s) {set(needs) - set(jobs)}"
        matrix = (job.get("strategy") or {}).get("matrix") or {}
        mkeys = set(matrix) - {"include", "exclude"} if isinstance(matrix, dict) else set()
        for item in (matrix.get("include", []) if isinstance(matrix, dict) else []):
            mkeys |= set(item)
        step_ids = {s["id"] for s in job["steps"] if "id" in s}
        env = wf_env | set(job.get("env", {}))
        exprs = [unquoted(e) for e in expressions(job)] + [unquoted(e) for e in all_ifs(job)]
        for e in exprs:
            for key in re.findall(r"\bmatrix\.([\w-]+)", e):
                assert key in mkeys, f"{path.name}: {name} uses matrix.{key}; its matrix has {sorted(mkeys)}"
            for dep, out in re.findall(r"\bneeds\.([\w-]+)\.outputs\.([\w-]+)", e):
                assert dep in needs, f"{path.name}: {name} reads needs.{dep} without needing it"
                assert out in jobs[dep].get("outputs", {}), f"{path.name}: job {dep} has no output {out}"
            for sid in re.findall(r"\bsteps\.([\w-]+)\.", e):
                assert sid in step_ids, f"{path.name}: {name} reads steps.{sid}; no step has that id"
            for key in re.findall(r"\binputs\.([\w-]+)", e):
                assert key in inputs, f"{path.name}: inputs.{key} is not a workflow_dispatch input"
            for key in re.findall(r"\benv\.([\w-]+)", e):
                assert key in env, f"{path.name}: {name} reads env.{key}, which is not set"
        for out in job.get("outputs", {}).values():
            for sid in re.findall(r"\bsteps\.([\w-]+)\.", out):
                assert sid in step_ids


def test_run_scripts_are_valid_bash(workflow) -> None:
    path, doc = workflow
    for name, job in doc["jobs"].items():
        for i, step in enumerate(job["steps"]):
            if "run" not in step:
                continue
            script = EXPR.sub("EXPR", step["run"])
            proc = subprocess.run(["bash", "-n"], input=script, capture_output=True, text=True)
            assert proc.returncode == 0, f"{path.name}: {name} step {i} ({step.get('name', '')}): {proc.stderr}"


def test_actions_are_pinned_to_a_version(workflow) -> None:
    path, doc = workflow
    for job in doc["jobs"].values():
        for step in job["steps"]:
            if "uses" in step:
                assert re.search(r"@v\d+$|@[0-9a-f]{40}$", step["uses"]), f"{path.name}: unpinned {step['uses']}"


def _runs(doc: dict[str, Any]) -> str:
    return "\n".join(s.get("run", "") for j in doc["jobs"].values() for s in j["steps"])


def _uses(doc: dict[str, Any]) -> list[dict[str, Any]]:
    return [s for j in doc["jobs"].values() for s in j["steps"] if "uses" in s]


def test_unit_test_workflow_runs_the_tests_on_github_hosted_runners() -> None:
    doc = load(ROOT / ".github" / "workflows" / "tests.yml")
    assert {"push", "pull_request"} <= set(doc["on"])
    assert all(str(j["runs-on"]).startswith("ubuntu-") for j in doc["jobs"].values())
    assert "python -m pytest" in _runs(doc) and "download.pytorch.org/whl/cpu" in _runs(doc)
    assert "GITHUB_STEP_SUMMARY" in _runs(doc)


@pytest.mark.parametrize("file, kind, labels_var", [("bench-npu.yml", "npu", "NPU_RUNNER_LABELS"),
                                                    ("bench-gpu.yml", "cuda", "GPU_RUNNER_LABELS")])
def test_bench_workflows(file: str, kind: str, labels_var: str) -> None:
    doc = load(ROOT / ".github" / "workflows" / file)
    text = (ROOT / ".github" / "workflows" / file).read_text()
    bench = doc["jobs"]["bench"]
    assert "fromJSON(needs.plan.outputs.labels)" in bench["runs-on"]  # self-hosted, labels configurable
    assert f"vars.{labels_var}" in text and "inputs.runner_labels" in text and '"self-hosted"' in text
    runs = _runs(doc)
    assert re.search(rf"make -s bench .*DEVICE={kind}", runs)
    assert "--shard ${{ matrix.shard }}/" in runs and "--table-format github" in runs
    assert "python -m harness merge" in runs
    assert runs.count('>> "$GITHUB_STEP_SUMMARY"') >= 2  # per shard and merged
    uploads = [s for s in _uses(doc) if s["uses"].startswith("actions/upload-artifact@")]
    assert len(uploads) >= 2 and all(".json" in s["with"]["path"] or "merged" in s["with"]["path"] for s in uploads)
    assert any(s["uses"].startswith("actions/download-artifact@") for s in _uses(doc))


def test_npu_workflow_times_the_bench_module_in_every_npu_mode() -> None:
    runs = _runs(load(ROOT / ".github" / "workflows" / "bench-npu.yml"))
    assert "for mode in events torch-npu-profiler msprof" in runs and "npu-smi info" in runs


def test_images_workflow_pushes_on_tags() -> None:
    doc = load(ROOT / ".github" / "workflows" / "images.yml")
    assert doc["on"]["push"]["tags"] and doc["permissions"]["packages"] == "write"
    matrix = doc["jobs"]["image"]["strategy"]["matrix"]["include"]
    assert {m["device"] for m in matrix} == {"cuda", "npu"}
    assert "make push DEVICE=" in _runs(doc) and "make image DEVICE=" in _runs(doc)


@pytest.mark.skipif(shutil.which("actionlint") is None, reason="actionlint is not installed here (CI installs it)")
def test_actionlint() -> None:
    proc = subprocess.run(["actionlint", "-no-color", *map(str, WORKFLOWS)], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
