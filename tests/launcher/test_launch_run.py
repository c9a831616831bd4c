"""What a container run mounts, where the manifest appears, who it runs as, and what the report will record."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from harness.launcher import devices
from harness.launcher.errors import LaunchError
from harness.launcher.image import ImageRef
from harness.launcher.run import ContainerRun, container_path

IMAGE = ImageRef("opbench-cuda:0123456789abcdef", "sha256:" + "1" * 64, "sha256:" + "1" * 64)


def test_manifest_maps_under_workspace(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    assert str(container_path(tmp_path, tmp_path / "sub" / "m.yaml")) == "/workspace/sub/m.yaml"


def test_manifest_outside_the_mounted_tree(tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()
    with pytest.raises(LaunchError, match="outside the mounted tree"):
        container_path(tmp_path / "ws", tmp_path / "elsewhere.yaml")
    with pytest.raises(LaunchError, match="outside the mounted tree"):   # ../ tricks resolve first
        container_path(tmp_path / "ws", tmp_path / "ws" / ".." / "elsewhere.yaml")


def test_cpu_run_command_line(tmp_path: Path) -> None:
    plan = ContainerRun(IMAGE, devices.cpu_spec(), tmp_path, tmp_path / "m.yaml", tmp_path / "out",
                        ("--seed", "5"), user="1000:1000")
    args = plan.docker_args()
    assert args[:4] == ["docker", "run", "--rm", "--network"]
    # the harness is root in the container (workers get uids of their own); the caller gets the files
    assert ["--user", "0:0"] == args[args.index("--user"):args.index("--user") + 2]
    assert ["--cap-drop", "ALL"] == args[args.index("--cap-drop"):args.index("--cap-drop") + 2]
    assert "no-new-privileges" in args and "SYS_ADMIN" not in args
    assert f"{tmp_path}:/workspace:ro" in args and f"{tmp_path}/out:/out" in args
    assert f"OPBENCH_IMAGE={IMAGE.tag}" in args and f"OPBENCH_IMAGE_DIGEST={IMAGE.digest}" in args
    assert args[args.index(IMAGE.tag):] == [IMAGE.tag, "python3", "-m", "harness", "run", "/workspace/m.yaml",
                                           "--device", "cpu", "--out", "/out", "--owner", "1000:1000", "--seed", "5"]
    assert "--gpus" not in args and "--device" not in args[:args.index(IMAGE.tag)]


def test_default_user_is_the_caller(tmp_path: Path) -> None:
    plan = ContainerRun(IMAGE, devices.cpu_spec(), tmp_path, tmp_path / "m.yaml", tmp_path / "out")
    assert plan.user == f"{os.getuid()}:{os.getgid()}"


def test_sdk_kwargs_cuda(tmp_path: Path) -> None:
    pytest.importorskip("docker")
    spec = devices.DeviceSpec("cuda", gpus=("0", "2"), shm_size="8g")
    kw = ContainerRun(IMAGE, spec, tmp_path, tmp_path / "m.yaml", tmp_path / "o", user="1:1").sdk_kwargs()
    (request,) = kw["device_requests"]
    assert request["DeviceIDs"] == ["0", "2"] and request["Capabilities"] == [["gpu"]]
    assert kw["command"][-6:] == ["--device", "cuda", "--out", "/out", "--owner", "1:1"]
    assert kw["user"] == "0:0" and kw["cap_drop"] == ["ALL"] and kw["security_opt"] == ["no-new-privileges"]
    assert [(m["Target"], m["ReadOnly"]) for m in kw["mounts"]] == [("/workspace", True), ("/out", False)]
    all_gpus = ContainerRun(IMAGE, devices.DeviceSpec("cuda", gpus=()), tmp_path, tmp_path / "m.yaml",
                            tmp_path / "o").sdk_kwargs()["device_requests"][0]
    assert all_gpus["Count"] == -1


def test_sdk_kwargs_npu(tmp_path: Path) -> None:
    pytest.importorskip("docker")
    spec = devices.DeviceSpec("npu", devices=(("/dev/davinci1", "/dev/davinci1"),),
                              mounts=(devices.Mount("/usr/local/dcmi", "/usr/local/dcmi"),),
                              env={"ASCEND_RT_VISIBLE_DEVICES": "0"}, group_add=("1001",))
    kw = ContainerRun(IMAGE, spec, tmp_path, tmp_path / "m.yaml", tmp_path / "o").sdk_kwargs()
    assert kw["devices"] == ["/dev/davinci1:/dev/davinci1:rwm"] and kw["group_add"] == ["1001"]
    assert kw["environment"]["ASCEND_RT_VISIBLE_DEVICES"] == "0" and "device_requests" not in kw
    assert kw["mounts"][-1]["Target"] == "/usr/local/dcmi" and kw["command"][6] == "npu"
