"""Against a real Docker engine: build the harness image on the offline test base, run a CPU manifest in it
through the launcher, and check what comes back on the host; then reproduce that run from its report.
"""
from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from harness.cli import main
from harness.launcher import devices
from harness.launcher.errors import LaunchError
from harness.launcher.image import BuildError, ImageRecipe, ensure
from harness.launcher.run import ContainerRun, run_container

from factories import SOLUTIONS
from launch_workspace import FAKE_CANN_ENV, write_workspace

pytestmark = pytest.mark.timeout(900)


def _launch_args(cpu_build_args: dict[str, str]) -> list[str]:
    return [arg for key, value in cpu_build_args.items() for arg in ("--build-arg", f"{key}={value}")]


def _report(out: Path) -> tuple[Path, dict[str, Any]]:
    (path,) = out.glob("*.json")
    return path, json.loads(path.read_text())


def test_image_metadata(docker_client: Any, cpu_image: Any, cpu_build_args: dict[str, str]) -> None:
    attrs = docker_client.images.get(cpu_image.id).attrs
    labels = attrs["Config"]["Labels"]
    assert labels["org.opencontainers.image.revision"] == cpu_image.tag.split(":")[1]
    assert labels["org.opencontainers.image.base.name"].startswith("opbench-test-base:")
    assert "io.opbench.torch.version" in labels and attrs["Config"]["User"] == "10001"  # the image's non-root user, by uid (DL3066)
    # same source, same tag: found again, not rebuilt
    again = ensure(docker_client, ImageRecipe("cpu", cpu_build_args))
    assert again.id == cpu_image.id


def test_launch_cpu_manifest_and_reproduce(cpu_image: Any, cpu_build_args: dict[str, str], tmp_path: Path,
                                           capsys: pytest.CaptureFixture) -> None:
    manifest = write_workspace(tmp_path / "ws")
    out = tmp_path / "out"
    rc = main(["launch", str(manifest), "--device", "cpu", "--workspace", str(manifest.parent), "--out", str(out),
               "--seed", "4242", *_launch_args(cpu_build_args)])
    captured = capsys.readouterr()
    assert rc == 0, captured.err[-3000:]
    assert "torch-axpy" in captured.out                 # the container's table streamed through
    path, report = _report(out)
    assert path.stat().st_uid == os.getuid()              # written in the container, owned by the caller
    assert report["manifest"] == "/workspace/axpy.yaml" and report["device"] == "cpu"
    assert report["run_seed"] == 4242 and report["summary"]["ok"]
    env = report["environment"]
    assert env["opbench_image"] == cpu_image.tag and env["opbench_image_digest"] == cpu_image.id

    again = tmp_path / "again"
    rc = main(["reproduce", str(path), "--workspace", str(manifest.parent), "--out", str(again)])
    assert rc == 0, capsys.readouterr().err[-3000:]
    _, second = _report(again)
    assert second["run_seed"] == 4242 and second["manifest"] == report["manifest"]
    assert second["environment"]["opbench_image_digest"] == cpu_image.id
    assert second["bench"] == report["bench"]


@pytest.mark.skipif(os.getuid() != 0, reason="needs root to hand the output folder to another uid")
def test_reports_belong_to_the_run_user(docker_client: Any, cpu_image: Any, tmp_path: Path) -> None:
    manifest = write_workspace(tmp_path / "ws")
    out = tmp_path / "out"
    out.mkdir()
    os.chown(out, 4321, 4321)
    plan = ContainerRun(cpu_image, devices.cpu_spec(), manifest.parent, manifest, out, ("--quiet",), user="4321:4321")
    assert run_container(docker_client, plan, open(os.devnull, "w"), open(os.devnull, "w")) == 0
    path, _ = _report(out)
    assert (path.stat().st_uid, path.stat().st_gid) == (4321, 4321)


def test_a_trespasser_in_the_container_reaches_nothing(docker_client: Any, cpu_image: Any, tmp_path: Path) -> None:
    """The harness runs as root in the container and each worker as a uid of its own: a solution can
    write neither the workspace, nor /out, nor the harness, nor signal the parent or the reference."""
    manifest = write_workspace(tmp_path / "ws")
    shutil.copy(SOLUTIONS / "trespasser.py", manifest.parent / "trespasser.py")
    doc = yaml.safe_load(manifest.read_text())
    doc["solutions"].append({"name": "trespasser", "language": "pytorch", "entry_point": "trespasser.py::run"})
    manifest.write_text(yaml.safe_dump(doc, sort_keys=False))
    before = sorted(p.name for p in manifest.parent.iterdir())
    out = tmp_path / "out"
    plan = ContainerRun(cpu_image, devices.cpu_spec(), manifest.parent, manifest, out, ("--quiet",))
    assert run_container(docker_client, plan, open(os.devnull, "w"), open(os.devnull, "w")) == 0
    _, report = _report(out)
    assert report["environment"]["containment"]["separate_worker_uid"] is True
    tried = dict(re.findall(r"TRESPASS (.+): (allowed|denied)", (out / "logs" / "trespasser.log").read_text()))
    assert {"harness source", "site-packages", "manifest tree", "output folder", "own log by path", "parent memory",
            "signal a sibling worker", "signal the parent", "build cache listing"} <= set(tried), tried
    assert [k for k, v in tried.items() if v == "allowed"] == [], tried
    assert sorted(p.name for p in manifest.parent.iterdir()) == before
    assert {p.stat().st_uid for p in [out, *out.rglob("*")]} == {os.getuid()}  # handed to the caller


def test_failing_solution_exit_code_comes_back(docker_client: Any, cpu_image: Any, tmp_path: Path) -> None:
    manifest = write_workspace(tmp_path / "ws")
    (manifest.parent / "axpy_solution.py").write_text("def run(x, w):\n    return x * w\n")   # wrong: no + 1
    plan = ContainerRun(cpu_image, devices.cpu_spec(), manifest.parent, manifest, tmp_path / "out", ("--quiet",))
    assert run_container(docker_client, plan, open(os.devnull, "w"), open(os.devnull, "w")) == 1


def test_build_failure_shows_the_failing_step(docker_client: Any, base_image: str, tmp_path: Path) -> None:
    (tmp_path / "harness").mkdir()
    (tmp_path / "Dockerfile.cuda").write_text(f"FROM {base_image}\nRUN echo about to fail && exit 7\n")
    with pytest.raises(BuildError) as info:
        ensure(docker_client, ImageRecipe("cpu", root=tmp_path, repo="opbench-test-broken"))
    assert info.value.step == "Step 2/2 : RUN echo about to fail && exit 7"
    assert "returned a non-zero code: 7" in str(info.value) and "about to fail" in str(info.value)


def test_unknown_image_for_reproduce(docker_client: Any, tmp_path: Path) -> None:
    from harness.launcher.reproduce import recorded, resolve_image
    from harness.results.report import Report
    rec = recorded(Report.of_problem(
        definition="m", manifest="/workspace/m.yaml", device="cpu", run_seed=1, bench=None, traces=[],
        environment={"opbench_image": "opbench-cuda:0000000000000000", "opbench_image_digest": "sha256:" + "0" * 64}))
    with pytest.raises(LaunchError, match="not in this engine"):
        resolve_image(docker_client, rec)


def test_push_failure_is_clear(docker_client: Any, cpu_image: Any) -> None:
    from harness.launcher.image import push
    with pytest.raises(LaunchError, match=r"push of 127.0.0.1:9/org/opbench-cuda:\w+ failed: .*127.0.0.1:9"):
        push(docker_client, cpu_image, "127.0.0.1:9/org")
    docker_client.images.remove(f"127.0.0.1:9/org/{cpu_image.tag}")


def test_npu_image_sources_cann_env(docker_client: Any, npu_image: Any, tmp_path: Path) -> None:
    """The NPU image's entrypoint sources set_env.sh for whatever command the launcher passes."""
    manifest = write_workspace(tmp_path / "ws")
    plan = ContainerRun(npu_image, devices.cpu_spec(), manifest.parent, manifest, tmp_path / "out", ("--quiet",))
    assert run_container(docker_client, plan, open(os.devnull, "w"), open(os.devnull, "w")) == 0
    _, report = _report(tmp_path / "out")
    assert report["environment"]["ascend_rt_visible_devices"] == FAKE_CANN_ENV
    assert report["environment"]["opbench_image"].startswith("opbench-npu:")
    labels = docker_client.images.get(npu_image.id).labels
    assert labels["io.opbench.torch_npu.version"] and labels["org.opencontainers.image.title"] == "opbench-npu"
