"""The package works wherever it is installed: a wheel built from the tree, installed in a fresh
venv, validates, runs, reports and compares from outside the repository (schemas and example
manifests ship inside it)."""
from __future__ import annotations

import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

from factories import ROOT


def test_the_wheel_lists_every_package_of_the_tree() -> None:
    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    tree = {".".join(p.parent.relative_to(ROOT).parts) for p in (ROOT / "harness").rglob("__init__.py")}
    assert listed == tree | {"opbench", "harness.schemas", "harness.manifests"}


def test_an_installed_wheel_runs_from_outside_the_repository(tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    for name in ("harness", "opbench", "schemas", "manifests"):
        shutil.copytree(ROOT / name, src / name, ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, src / name)
    def sh(*cmd: str | Path, cwd: Path = tmp_path) -> str:
        proc = subprocess.run([str(c) for c in cmd], cwd=cwd, capture_output=True, text=True, timeout=600)
        assert proc.returncode == 0, f"{cmd}: {proc.stdout[-2000:]}{proc.stderr[-2000:]}"
        return proc.stdout
    sh(sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w", tmp_path / "dist", ".", cwd=src)
    venv = tmp_path / "venv"
    sh(sys.executable, "-m", "venv", "--system-site-packages", venv)  # torch and the pinned deps come from here
    sh(venv / "bin" / "python", "-m", "pip", "install", "-q", "--no-deps", next((tmp_path / "dist").glob("*.whl")))
    work = tmp_path / "elsewhere"
    work.mkdir()
    opbench = venv / "bin" / "opbench"
    assert "OK rmsnorm.yaml" in sh(opbench, "validate", "rmsnorm.yaml", cwd=work)  # the shipped example, by name
    for out in ("a", "b"):
        sh(opbench, "run", "rmsnorm.yaml", "--device", "cpu", "--workload", "small-bf16", "--solution", "pytorch-fused",
           "--max-time-s", "0.2", "--quiet", "--out", out, cwd=work)
    assert "pytorch-fused" in sh(opbench, "report", "a/rmsnorm-cpu.json", cwd=work)
    assert "pytorch-fused" in sh(opbench, "compare", "a/rmsnorm-cpu.json", "b/rmsnorm-cpu.json", cwd=work)
    imported = sh(venv / "bin" / "python", "-c", "import harness, opbench; print(harness.__file__)", cwd=work)
    assert str(venv) in imported  # the installed copy, not the checkout
