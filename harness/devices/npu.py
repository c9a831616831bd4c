"""Huawei Ascend NPUs through torch_npu (`torch.npu` mirrors `torch.cuda`).

NOT RUN ON REAL HARDWARE: written against torch_npu's documented API; see docs/hardware.md.
"""
from __future__ import annotations

import contextlib
import importlib
from typing import Any, Iterator

import torch

from .base import Device, Event


def _torch_npu() -> Any:
    """Import torch_npu (it registers `torch.npu`); None when not installed."""
    try:
        return importlib.import_module("torch_npu")
    except Exception:
        return None


class NpuEvent(Event):
    def __init__(self) -> None:
        self.ev = torch.npu.Event(enable_timing=True)

    def record(self) -> None:
        self.ev.record()

    def elapsed_ms(self, end: Event) -> float:
        assert isinstance(end, NpuEvent)
        return self.ev.elapsed_time(end.ev)


class NpuDevice(Device):
    kind = "npu"

    def __init__(self, index: int = 0):
        super().__init__(index)
        self._stream: Any = None

    @classmethod
    def available(cls) -> tuple[bool, str]:
        if _torch_npu() is None:
            return False, "torch_npu is not installed"
        if not torch.npu.is_available():
            return False, "no Ascend NPU is visible"
        return True, ""

    @property
    def torch_device(self) -> torch.device:
        return torch.device("npu", self.index)

    def setup(self) -> None:
        _torch_npu()
        torch.npu.set_device(self.index)
        self._stream = torch.npu.Stream()

    def synchronize(self) -> None:
        torch.npu.synchronize()

    @contextlib.contextmanager
    def stream(self) -> Iterator[None]:
        if self._stream is None:
            self.setup()
        with torch.npu.stream(self._stream):
            yield

    def event(self) -> Event:
        return NpuEvent()

    def l2_bytes(self) -> int:
        # triton-ascend's do_bench_npu flushes 192 MiB; Ascend 910B L2 is 192 MiB at most.
        return 96 * 1024 ** 2

    def info(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": "npu", "index": self.index}
        mod = _torch_npu()
        with contextlib.suppress(Exception):
            out["name"] = torch.npu.get_device_name(self.index)
        with contextlib.suppress(Exception):
            out["soc_version"] = mod.npu.get_soc_version()
        with contextlib.suppress(Exception):
            out["torch_npu"] = mod.__version__
        return out
