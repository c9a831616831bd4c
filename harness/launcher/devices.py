"""What each device kind needs from `docker run`: device nodes, driver mounts, GPU requests, environment.

Everything is derived from the host's /dev and driver folders under `root` (the real `/` by default,
a fake tree in tests), so the flags each kind gets can be checked without the hardware.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from harness.launcher.errors import LaunchError

CONTAINER_KINDS = ("cpu", "cuda", "npu")
KINDS = ("local", *CONTAINER_KINDS)

# Ascend: the per-chip nodes plus the shared control nodes the driver needs.
NPU_CONTROL_NODES = ("/dev/davinci_manager", "/dev/devmm_svm", "/dev/hisi_hdc")
# Host driver pieces the CANN runtime loads from fixed paths; the first two are required.
NPU_REQUIRED_MOUNTS = ("/usr/local/Ascend/driver/lib64", "/usr/local/Ascend/driver/version.info")
NPU_OPTIONAL_MOUNTS = ("/usr/local/dcmi", "/usr/local/bin/npu-smi", "/etc/ascend_install.info")


@dataclass(frozen=True)
class Mount:
    source: str
    target: str
    read_only: bool = True

    def flag(self) -> str:
        return f"{self.source}:{self.target}" + (":ro" if self.read_only else "")


@dataclass(frozen=True)
class DeviceSpec:
    """The device half of a container run; `docker_args` is the same thing as `docker run` flags."""

    kind: str
    devices: tuple[tuple[str, str], ...] = ()   # (host node, container node)
    mounts: tuple[Mount, ...] = ()
    env: dict[str, str] = field(default_factory=dict)
    gpus: tuple[str, ...] | None = None          # None: no GPU request; (): all GPUs; else these ids
    group_add: tuple[str, ...] = ()
    shm_size: str | None = None

    def docker_args(self) -> list[str]:
        args: list[str] = []
        if self.gpus is not None:
            args += ["--gpus", "all" if not self.gpus else f'"device={",".join(self.gpus)}"']
        for host, container in self.devices:
            args += ["--device", host if host == container else f"{host}:{container}"]
        for m in self.mounts:
            args += ["-v", m.flag()]
        for gid in self.group_add:
            args += ["--group-add", gid]
        if self.shm_size:
            args += ["--shm-size", self.shm_size]
        for key, value in sorted(self.env.items()):
            args += ["-e", f"{key}={value}"]
        return args


def _under(root: Path, path: str) -> Path:
    return root / path.lstrip("/")


def _numbered(root: Path, pattern: str) -> list[int]:
    """Indices N of /dev/<prefix>N nodes, e.g. nvidia0, davinci3 (not nvidiactl, davinci_manager)."""
    rx = re.compile(pattern)
    dev = _under(root, "/dev")
    if not dev.is_dir():
        return []
    return sorted(int(m.group(1)) for p in dev.iterdir() if (m := rx.fullmatch(p.name)))


def nvidia_gpus(root: Path = Path("/")) -> list[int]:
    return _numbered(root, r"nvidia(\d+)")


def ascend_npus(root: Path = Path("/")) -> list[int]:
    return _numbered(root, r"davinci(\d+)")


def detect(root: Path = Path("/")) -> str | None:
    """The accelerator kind this host shows device nodes for, NVIDIA first; None when there is none."""
    if nvidia_gpus(root):
        return "cuda"
    if ascend_npus(root):
        return "npu"
    return None


def parse_visible(visible: str | None) -> list[str]:
    return [v.strip() for v in (visible or "").split(",") if v.strip()]


def cpu_spec() -> DeviceSpec:
    return DeviceSpec(kind="cpu")


def cuda_spec(visible: str | None = None, root: Path = Path("/")) -> DeviceSpec:
    """`--gpus all` or `--gpus "device=0,2"`; the NVIDIA container toolkit adds nodes and driver libraries."""
    found = nvidia_gpus(root)
    if not found:
        raise LaunchError("no NVIDIA GPU visible: no /dev/nvidia<N> device on this host (driver not loaded?); "
                          "use --device cpu or --device local")
    ids = parse_visible(visible)
    missing = [i for i in ids if i.isdigit() and int(i) not in found]
    if missing:
        raise LaunchError(f"GPU {', '.join(missing)} not visible on this host (found {', '.join(map(str, found))})")
    return DeviceSpec(kind="cuda", gpus=tuple(ids), shm_size="8g")


def npu_spec(visible: str | None = None, root: Path = Path("/")) -> DeviceSpec:
    """Ascend: device nodes and driver mounts by hand (no container toolkit needed).

    The container sees only the chosen chips, so the runtime numbers them 0..n-1: that is what
    ASCEND_RT_VISIBLE_DEVICES (logical ids) gets. The device nodes' group is added so a non-root
    container user can open them.
    """
    found = ascend_npus(root)
    if not found:
        raise LaunchError("no Ascend NPU visible: no /dev/davinci<N> device on this host (driver not installed?); "
                          "use --device cpu or --device local")
    ids = parse_visible(visible) or [str(i) for i in found]
    bad = [i for i in ids if not i.isdigit() or int(i) not in found]
    if bad:
        raise LaunchError(f"NPU {', '.join(bad)} not visible on this host (found {', '.join(map(str, found))})")
    nodes = [f"/dev/davinci{i}" for i in ids] + list(NPU_CONTROL_NODES)
    absent = [n for n in NPU_CONTROL_NODES + NPU_REQUIRED_MOUNTS if not _under(root, n).exists()]
    if absent:
        raise LaunchError(f"Ascend driver incomplete on this host: missing {', '.join(absent)}")
    mounts = [Mount(str(_under(root, p)), p) for p in NPU_REQUIRED_MOUNTS]
    mounts += [Mount(str(_under(root, p)), p) for p in NPU_OPTIONAL_MOUNTS if _under(root, p).exists()]
    gids = sorted({str(os.stat(_under(root, n)).st_gid) for n in nodes})
    return DeviceSpec(kind="npu", devices=tuple((str(_under(root, n)), n) for n in nodes), mounts=tuple(mounts),
                      env={"ASCEND_RT_VISIBLE_DEVICES": ",".join(str(i) for i in range(len(ids)))},
                      group_add=tuple(g for g in gids if g != "0"), shm_size="8g")


def device_spec(kind: str, visible: str | None = None, root: Path = Path("/")) -> DeviceSpec:
    if kind == "cpu":
        return cpu_spec()
    if kind == "cuda":
        return cuda_spec(visible, root)
    if kind == "npu":
        return npu_spec(visible, root)
    raise LaunchError(f"unknown container device kind {kind!r}; expected one of {', '.join(CONTAINER_KINDS)}")
