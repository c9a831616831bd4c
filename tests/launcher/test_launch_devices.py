"""The docker flags and mounts each device kind gets, on fake /dev and driver trees."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from harness.launcher import devices
from harness.launcher.errors import LaunchError


def touch(root: Path, *paths: str) -> None:
    for p in paths:
        target = root / p.lstrip("/")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.touch()


def ascend_host(root: Path, chips: int = 4, optional: bool = True) -> Path:
    touch(root, *[f"/dev/davinci{i}" for i in range(chips)], *devices.NPU_CONTROL_NODES,
          "/usr/local/Ascend/driver/version.info")
    (root / "usr/local/Ascend/driver/lib64").mkdir(parents=True, exist_ok=True)
    if optional:
        touch(root, "/usr/local/bin/npu-smi", "/etc/ascend_install.info")
        (root / "usr/local/dcmi").mkdir(parents=True, exist_ok=True)
    return root


def test_cpu_gets_nothing() -> None:
    assert devices.device_spec("cpu").docker_args() == []


def test_detect_prefers_nvidia_and_ignores_control_nodes(tmp_path: Path) -> None:
    touch(tmp_path, "/dev/nvidiactl", "/dev/davinci_manager")
    assert devices.detect(tmp_path) is None
    touch(tmp_path, "/dev/davinci0")
    assert devices.detect(tmp_path) == "npu"
    touch(tmp_path, "/dev/nvidia0")
    assert devices.detect(tmp_path) == "cuda"


def test_cuda_all_gpus(tmp_path: Path) -> None:
    touch(tmp_path, "/dev/nvidia0", "/dev/nvidia1", "/dev/nvidiactl")
    spec = devices.cuda_spec(None, tmp_path)
    assert spec.docker_args() == ["--gpus", "all", "--shm-size", "8g"]
    assert spec.devices == () and spec.mounts == ()


def test_cuda_selected_gpus(tmp_path: Path) -> None:
    touch(tmp_path, "/dev/nvidia0", "/dev/nvidia1")
    assert devices.cuda_spec("1,0", tmp_path).docker_args()[:2] == ["--gpus", '"device=1,0"']
    with pytest.raises(LaunchError, match="GPU 3 not visible"):
        devices.cuda_spec("3", tmp_path)


def test_cuda_without_gpu_is_a_clear_error(tmp_path: Path) -> None:
    touch(tmp_path, "/dev/null")
    with pytest.raises(LaunchError, match="no NVIDIA GPU visible"):
        devices.device_spec("cuda", root=tmp_path)


def test_npu_devices_mounts_and_visible_ids(tmp_path: Path) -> None:
    root = ascend_host(tmp_path)
    spec = devices.npu_spec("2,3", root)
    assert [c for _, c in spec.devices] == ["/dev/davinci2", "/dev/davinci3", "/dev/davinci_manager",
                                            "/dev/devmm_svm", "/dev/hisi_hdc"]
    assert all(h == str(root / c.lstrip("/")) for h, c in spec.devices)
    assert {m.target for m in spec.mounts} == {"/usr/local/Ascend/driver/lib64", "/usr/local/Ascend/driver/version.info",
                                               "/usr/local/dcmi", "/usr/local/bin/npu-smi", "/etc/ascend_install.info"}
    assert all(m.read_only for m in spec.mounts)
    # the container only has two chips: the runtime numbers them 0 and 1
    assert spec.env == {"ASCEND_RT_VISIBLE_DEVICES": "0,1"}
    args = spec.docker_args()
    assert ["--device", f"{root}/dev/davinci2:/dev/davinci2"] == args[args.index("--device"):args.index("--device") + 2]
    assert f"{root}/usr/local/Ascend/driver/lib64:/usr/local/Ascend/driver/lib64:ro" in args
    assert "ASCEND_RT_VISIBLE_DEVICES=0,1" in args and "--gpus" not in args


def test_npu_on_real_paths_renders_plain_flags(tmp_path: Path) -> None:
    spec = devices.DeviceSpec("npu", devices=(("/dev/davinci0", "/dev/davinci0"),),
                              mounts=(devices.Mount("/usr/local/dcmi", "/usr/local/dcmi"),), group_add=("1001",))
    assert spec.docker_args() == ["--device", "/dev/davinci0", "-v", "/usr/local/dcmi:/usr/local/dcmi:ro",
                                  "--group-add", "1001"]


def test_npu_all_chips_by_default_and_optional_mounts_skipped(tmp_path: Path) -> None:
    spec = devices.npu_spec(None, ascend_host(tmp_path, chips=2, optional=False))
    assert spec.env["ASCEND_RT_VISIBLE_DEVICES"] == "0,1"
    assert {m.target for m in spec.mounts} == set(devices.NPU_REQUIRED_MOUNTS)


@pytest.mark.skipif(os.getuid() != 0, reason="needs root to chown the fake device node")
def test_npu_adds_the_device_group(tmp_path: Path) -> None:
    root = ascend_host(tmp_path, chips=1)
    for node in ("/dev/davinci0", *devices.NPU_CONTROL_NODES):
        os.chown(root / node.lstrip("/"), 0, 1234)
    assert devices.npu_spec(None, root).group_add == ("1234",)


def test_npu_errors(tmp_path: Path) -> None:
    with pytest.raises(LaunchError, match="no Ascend NPU visible"):
        devices.npu_spec(None, tmp_path)
    root = ascend_host(tmp_path, chips=2)
    with pytest.raises(LaunchError, match="NPU 7 not visible"):
        devices.npu_spec("7", root)
    (root / "dev/hisi_hdc").unlink()
    with pytest.raises(LaunchError, match="missing /dev/hisi_hdc"):
        devices.npu_spec(None, root)
