"""`make bench|image|push` hand the right device and options to `harness launch` (checked with make -n)."""
from __future__ import annotations

import shutil
import subprocess

import pytest

from harness.launcher.image import REPO_ROOT

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="make not installed")


def dry(*args: str) -> list[str]:
    out = subprocess.run(["make", "-n", "-s", *args], cwd=REPO_ROOT, capture_output=True, text=True)
    return [line for line in out.stdout.splitlines() if "-m harness" in line] or [out.stdout + out.stderr]


def test_bench_defaults_to_auto_and_installs_torch() -> None:
    out = subprocess.run(["make", "-n", "-s", "bench", "MANIFEST=rmsnorm.yaml"], cwd=REPO_ROOT,
                         capture_output=True, text=True).stdout
    assert "find_spec('torch')" in out   # a local fallback needs torch on the host
    assert dry("bench", "MANIFEST=rmsnorm.yaml") == ["python3 -m harness launch rmsnorm.yaml --device auto --out out "]


def test_bench_in_a_container() -> None:
    out = subprocess.run(["make", "-n", "-s", "bench", "DEVICE=npu"], cwd=REPO_ROOT, capture_output=True, text=True).stdout
    assert "find_spec('torch')" not in out   # torch lives in the image
    assert dry("bench", "MANIFEST=rmsnorm.yaml", "DEVICE=cuda", "ARGS=--warm-cache") == [
        "python3 -m harness launch rmsnorm.yaml --device cuda --out out --args='--warm-cache'"]


def test_image_and_push() -> None:
    assert dry("image", "DEVICE=npu") == ["python3 -m harness launch --device npu --build-only "]
    assert dry("push", "REGISTRY=ghcr.io/org") == ["python3 -m harness launch --device cuda --push ghcr.io/org "]
    refused = subprocess.run(["make", "-s", "push"], cwd=REPO_ROOT, capture_output=True, text=True)
    assert refused.returncode != 0 and "REGISTRY" in refused.stderr


def test_offline_with_a_package_missing_names_it_and_how_to_carry_it(tmp_path) -> None:
    """A GPU box with no registry (the H200's image has no pyyaml): the failed install names what is
    missing and how to install from carried wheels, instead of a traceback from importlib.metadata."""
    import os
    import sys
    venv = tmp_path / "venv"  # no packages, and no pip: every install fails, as with no registry
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    env = {**{k: v for k, v in os.environ.items() if k != "PIP_FIND_LINKS"}, "PIP_NO_INDEX": "1"}
    out = subprocess.run(["make", "-s", "launch-deps", f"PYTHON={venv}/bin/python"], cwd=REPO_ROOT,
                         capture_output=True, text=True, env=env)
    assert out.returncode != 0
    assert "could not install pyyaml, jsonschema" in out.stderr
    assert "PIP_FIND_LINKS=<folder> PIP_NO_INDEX=1" in out.stderr
    assert "Traceback" not in out.stderr
    assert "No module named pip" not in out.stderr  # no index and no wheels: pip is not even tried
    env["PIP_FIND_LINKS"] = str(tmp_path)  # a folder of wheels: pip may find them, so it is tried
    out = subprocess.run(["make", "-s", "launch-deps", f"PYTHON={venv}/bin/python"], cwd=REPO_ROOT,
                         capture_output=True, text=True, env=env)
    assert "No module named pip" in out.stderr and "could not install pyyaml, jsonschema" in out.stderr


def test_a_venv_python_is_used_as_it_is(tmp_path) -> None:
    """PEP 668 exempts venvs: a GPU image whose python3 is a venv (torch and numpy inside it) must run
    with that python, not get a .venv over its base interpreter that hides them (the H100's make bench
    failed so on 2026-12-05, naming numpy as missing while `python3 -c 'import numpy'` worked)."""
    import sys
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    assert dry("bench", f"SYSTEM_PYTHON={venv}/bin/python") == [
        f"{venv}/bin/python -m harness launch rmsnorm.yaml --device auto --out out "]
