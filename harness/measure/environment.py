"""Versions and host facts recorded in every report, so a reader can tell what produced the numbers."""
from __future__ import annotations

import importlib.metadata
import os
from typing import Any

from harness.measure.devices.base import host_info

PACKAGES = ("torch", "triton", "torch_npu", "triton-ascend", "tilelang", "numpy")


def versions() -> dict[str, Any]:
    out: dict[str, Any] = {}
    for pkg in PACKAGES:
        try:
            out[pkg] = importlib.metadata.version(pkg)
        except importlib.metadata.PackageNotFoundError:
            continue
    try:
        import torch
        out["torch_cuda"] = torch.version.cuda
    except Exception:
        pass
    return out


def environment(device_info: dict[str, Any] | None = None) -> dict[str, Any]:
    env = {**host_info(), "versions": versions(), "device": device_info or {}}
    for var in ("OPBENCH_IMAGE", "OPBENCH_IMAGE_DIGEST", "CUDA_VISIBLE_DEVICES", "ASCEND_RT_VISIBLE_DEVICES",
                "GITHUB_RUN_ID", "RUNNER_NAME"):
        if os.environ.get(var):
            env[var.lower()] = os.environ[var]
    return env
