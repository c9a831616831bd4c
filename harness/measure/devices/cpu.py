"""The host CPU as a device: the embedded default, so opbench can be tried with no accelerator at all."""
from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import torch

from harness.measure.devices.base import Device, Event


class CpuEvent(Event):
    """CPU work is synchronous with the host, so a host timestamp at record time is the event."""

    def __init__(self) -> None:
        self.t_ns: int | None = None

    def record(self) -> None:
        self.t_ns = time.perf_counter_ns()

    def elapsed_ms(self, end: Event) -> float:
        assert isinstance(end, CpuEvent) and self.t_ns is not None and end.t_ns is not None
        return (end.t_ns - self.t_ns) / 1e6


def _llc_bytes() -> int:
    """Largest cache level from sysfs; 32 MiB when it cannot be read (a typical server L3)."""
    best = 0
    for size in Path("/sys/devices/system/cpu/cpu0/cache").glob("index*/size"):
        text = size.read_text().strip()
        mult = {"K": 1024, "M": 1024 ** 2, "G": 1024 ** 3}.get(text[-1:], 1)
        try:
            best = max(best, int(text.rstrip("KMG")) * mult)
        except ValueError:
            continue
    return best or 32 * 1024 ** 2


class CpuDevice(Device):
    kind = "cpu"

    @classmethod
    def available(cls) -> tuple[bool, str]:
        return True, ""

    @property
    def torch_device(self) -> torch.device:
        return torch.device("cpu")

    def synchronize(self) -> None:
        pass

    def event(self) -> Event:
        return CpuEvent()

    def l2_bytes(self) -> int:
        return _llc_bytes()

    def info(self) -> dict[str, Any]:
        name = ""
        try:
            for line in Path("/proc/cpuinfo").read_text().splitlines():
                if line.startswith("model name"):
                    name = line.split(":", 1)[1].strip()
                    break
        except OSError:
            pass
        return {"kind": "cpu", "name": name or "cpu", "cores": os.cpu_count(), "torch_threads": torch.get_num_threads(),
                "llc_bytes": self.l2_bytes()}
