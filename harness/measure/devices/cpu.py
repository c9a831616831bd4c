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


# The cold-cache flush reads 2x the cache it must evict, and that cache is capped here. sysfs reports the
# whole L3 of the socket, and some VMs report a made-up one (480 MiB on our CI machines: a 960 MiB read,
# 2.6-5 s per sample on a loaded 2-core VM). 32 MiB is a typical server L3 per socket/CCD, the most a single
# timed call's working set competes for in practice, so a 64 MiB read evicts what matters on real hardware
# while a sample costs ~20 ms. CPU timings are a convenience (accelerators are what opbench measures), so a
# bounded sample cost beats a flush sized for a cache no core sees whole. The flush size goes in info().
FLUSH_CAP_BYTES = 32 * 1024 ** 2


class CpuDevice(Device):
    kind = "cpu"

    @classmethod
    def available(cls) -> tuple[bool, str]:
        return True, ""

    @property
    def torch_device(self) -> torch.device:
        return torch.device("cpu")

    def setup(self) -> None:
        """Pin the worker: the CPUs it may use (the same set for solution and reference) and one torch
        thread per CPU, so two runs (and the two sides of one comparison) get the same parallelism."""
        cpus = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
        if cpus:
            os.sched_setaffinity(0, cpus)
            torch.set_num_threads(len(cpus))

    def synchronize(self) -> None:
        pass

    def event(self) -> Event:
        return CpuEvent()

    def l2_bytes(self) -> int:
        """The cache the flush evicts: the last-level cache, capped at FLUSH_CAP_BYTES (the flush reads 2x)."""
        return min(_llc_bytes(), FLUSH_CAP_BYTES)

    def flush_cache(self) -> None:
        """Read 2 * l2_bytes() as float64 zeros: the same bytes as the base class's int32 buffer, but torch
        sums int32 into int64 on a scalar path (~15x slower on CPU), while a float sum streams the memory."""
        if self._flush_buffer is None:
            self._flush_buffer = torch.zeros(2 * self.l2_bytes() // 8, dtype=torch.float64)
        self._flush_buffer.sum()

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
                "cpu_affinity": sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
                "llc_bytes": _llc_bytes(), "l2_flush_bytes": 2 * self.l2_bytes()}
