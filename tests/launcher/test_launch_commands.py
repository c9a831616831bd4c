"""`harness launch` / `reproduce` from the command line: mode choice and the errors a user sees."""
from __future__ import annotations

import os

import json
from pathlib import Path

import pytest

from harness.cli import main


@pytest.fixture
def no_engine(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/no-such-docker.sock")


def test_explicit_container_without_engine(no_engine: None, axpy_manifest: Path, capsys: pytest.CaptureFixture) -> None:
    pytest.importorskip("docker")
    assert main(["launch", str(axpy_manifest), "--device", "cpu", "--workspace", str(axpy_manifest.parent)]) == 3
    err = capsys.readouterr().err
    assert err.startswith("error: no Docker engine reachable at unix://") and "--device local" in err


def test_auto_falls_back_to_local_in_one_line(no_engine: None, axpy_manifest: Path, tmp_path: Path,
                                              capsys: pytest.CaptureFixture) -> None:
    out = tmp_path / "out"
    assert main(["launch", str(axpy_manifest), "--out", str(out), "--seed", "11", "--args=--quiet"]) == 0
    err = capsys.readouterr().err
    notes = [line for line in err.splitlines() if line.startswith("opbench:")]
    assert len(notes) == 1 and notes[0].startswith("opbench: running locally (no container):")
    (report,) = out.glob("*.json")
    data = json.loads(report.read_text())
    assert data["run_seed"] == 11 and data["device"] == "cpu" and "opbench_image" not in data["environment"]
    # a local report reproduces locally
    assert main(["reproduce", str(report), "--out", str(tmp_path / "again")]) == 0
    (again,) = (tmp_path / "again").glob("*.json")
    assert json.loads(again.read_text())["run_seed"] == 11


def test_no_device_visible(axpy_manifest: Path, capsys: pytest.CaptureFixture) -> None:
    if Path("/dev/davinci0").exists():
        pytest.skip("this host has an Ascend NPU")
    assert main(["launch", str(axpy_manifest), "--device", "npu", "--dry-run"]) == 2
    assert "no Ascend NPU visible" in capsys.readouterr().err


def test_dry_run_shows_the_docker_command(axpy_manifest: Path, capsys: pytest.CaptureFixture) -> None:
    assert main(["launch", str(axpy_manifest), "--device", "cpu", "--dry-run", "--workspace", str(axpy_manifest.parent),
                 "--args=--warm-cache"]) == 0
    line = capsys.readouterr().out.strip()
    assert line.startswith("docker run --rm") and line.endswith(
        f"python3 -m harness run /workspace/axpy.yaml --device cpu --out /out --owner {os.getuid()}:{os.getgid()} "
        "--warm-cache")


def test_manifest_outside_workspace(axpy_manifest: Path, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    (tmp_path / "other").mkdir()
    assert main(["launch", str(axpy_manifest), "--device", "cpu", "--dry-run", "--workspace", str(tmp_path / "other")]) == 2
    assert "outside the mounted tree" in capsys.readouterr().err


def test_bad_build_arg(axpy_manifest: Path, capsys: pytest.CaptureFixture) -> None:
    assert main(["launch", "--device", "cpu", "--build-only", "--dry-run", "--build-arg", "NOEQUALS"]) == 2
    assert "KEY=VALUE" in capsys.readouterr().err


def test_auto_mode_choice(monkeypatch: pytest.MonkeyPatch) -> None:
    from harness.cli import launch as commands
    from harness.launcher import devices
    from harness.launcher import engine
    said: list[str] = []
    monkeypatch.setattr(engine, "probe", lambda: (None, "no Docker engine reachable at unix:///x"))
    assert commands._auto_kind(said.append) == ("local", None)
    client = object()
    monkeypatch.setattr(engine, "probe", lambda: (client, ""))
    monkeypatch.setattr(devices, "detect", lambda root=None: None)
    assert commands._auto_kind(said.append) == ("local", None)
    monkeypatch.setattr(devices, "detect", lambda root=None: "npu")
    assert commands._auto_kind(said.append) == ("npu", client)
    assert said == ["opbench: running locally (no container): no Docker engine reachable at unix:///x",
                    "opbench: running locally (no container): Docker engine found but no GPU/NPU device visible",
                    "opbench: npu device found; running in the npu container"]
