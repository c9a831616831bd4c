"""The host CPU as a device: the embedded default, so opbench can be tried with no accelerator at all."""
from __future__ import annotations

import ctypes
import ctypes.util
import functools
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


def _cache_bytes() -> dict[int, int]:
    """Size of each cache level of cpu0 from sysfs (level -> bytes; the largest of a level's caches)."""
    sizes: dict[int, int] = {}
    for index in Path("/sys/devices/system/cpu/cpu0/cache").glob("index*"):
        try:
            level, text = int((index / "level").read_text()), (index / "size").read_text().strip()
            size = int(text.rstrip("KMG")) * {"K": 1024, "M": 1024 ** 2, "G": 1024 ** 3}.get(text[-1:], 1)
        except (OSError, ValueError):
            continue
        sizes[level] = max(sizes.get(level, 0), size)
    return sizes


def _llc_bytes() -> int:
    """Largest cache level from sysfs; 32 MiB when it cannot be read (a typical server L3)."""
    return max(_cache_bytes().values(), default=0) or 32 * 1024 ** 2


def _private_bytes() -> int:
    """The core's own caches a call's data must leave: L2 (1 MiB when sysfs does not say)."""
    return _cache_bytes().get(2, 0) or 1024 ** 2


# The cold-cache flush reads 2x the cache it must evict, and that cache is capped here. sysfs reports the
# whole L3 of the socket, and some VMs report a made-up one (480 MiB on our CI machines: a 960 MiB read,
# 2.6-5 s per sample on a loaded 2-core VM). 32 MiB is a typical server L3 per socket/CCD, the most a single
# timed call's working set competes for in practice, so a 64 MiB read evicts what matters on real hardware.
# Within the cap the flush is sized by the call (`fit_to`): twice the bytes it touches, at least twice
# the core's L2. A full 64 MiB read before a 16x512 RMSNorm (a 40 us call) also evicts the interpreter's
# and torch's code, which a real caller keeps warm: the call then read 200-400 us, 20-30% apart, and
# each sample cost 4 ms (measured on a 2-core VM). The flush size goes in info().
FLUSH_CAP_BYTES = 32 * 1024 ** 2


# glibc's mallopt parameters (malloc.h). By default a tensor above the dynamic mmap threshold gets fresh
# pages from the kernel and gives them back when freed, so each call pays a page fault per 4 KiB of its
# outputs and temporaries, some calls and not others. Measured on a 2-core VM (torch 2.13, RMSNorm of a
# 256x4096 bf16 tensor, 2 threads): median 8.3 ms with faults, 0.99 ms without; 2048x8192: 184 -> 47 ms.
# That is the kernel's page-zeroing, not the operator: both workers keep freed memory in their heap, and the
# parent of a CPU run keeps it within each row (outputs arrive whole there) and trims it after (`trim_heap`).
M_TRIM_THRESHOLD, M_MMAP_MAX = -1, -4


@functools.cache
def _libc_function(name: str) -> Any:
    """`name` from the C library, or None where there is none (not glibc): looked up once a process, since
    `find_library` runs `ldconfig` and `trim_heap` is called after every row."""
    path = ctypes.util.find_library("c")
    try:
        return getattr(ctypes.CDLL(path), name) if path else None
    except (OSError, AttributeError):
        return None


def keep_heap() -> tuple[bool, str]:
    """Serve every allocation from the heap and never return it to the kernel (glibc), so steady-state
    calls reuse warm pages; whether it was done, and what was done, for the device info."""
    mallopt = _libc_function("mallopt")
    if mallopt is None:
        return False, "default (no glibc mallopt)"
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    ok = mallopt(M_MMAP_MAX, 0) == 1 and mallopt(M_TRIM_THRESHOLD, 2 ** 31 - 1) == 1
    return (True, "heap kept (glibc: no mmap, no trim)") if ok else (False, "default (mallopt refused)")


def trim_heap() -> None:
    """Give the kernel back the free pages of a kept heap (glibc `malloc_trim`, which also releases free
    pages inside it): the parent keeps its heap within a row and trims it after, so rows of changing
    sizes cannot grow it by fragmentation (simulated in review: 2.3 GB resident trimmed, 11 GB after ten
    solutions kept)."""
    malloc_trim = _libc_function("malloc_trim")
    if malloc_trim is not None:
        malloc_trim(0)


# A kept heap still grows when fragmentation leaves no free chunk big enough for a call's temporaries, and
# the sample that grows it pays the page faults. Measured on a 2-core VM (RMSNorm 2048x8192 bf16, 64 MiB
# of inputs and outputs, 21 ms a call): over the first 15 samples, one in three faulted in 32-128 MiB and
# read 105-310 ms, so a 3 s budget ended NOISY (rse 0.3-1.2) and could order two solutions either way.
# Before timing, each worker touches a block of this many times the call's footprint and frees it: the
# heap keeps those pages, and later growth is served from them. 8x still faulted now and then; 32x
# never did in that run; 16x is the middle (it costs a page fault per 4 KiB once per worker).
HEAP_RESERVE_FACTOR = 16


def reserve_heap(nbytes: int) -> int:
    """Fault `nbytes` into the heap and free them (kept by `keep_heap`), at most an eighth of the
    memory the host has free; returns the bytes reserved."""
    try:
        free = os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError):
        free = 0
    nbytes = min(nbytes, free // 8)
    if nbytes > 0:
        block = torch.empty(nbytes, dtype=torch.uint8)
        block.fill_(1)  # a write per page: every page is faulted in now, not inside a sample
        del block
    return max(nbytes, 0)


class CpuDevice(Device):
    kind = "cpu"
    queues_work = False  # an event is the host clock: the hidden-work check would compare a clock with itself
    # Measured on a 2-core VM (make bench at 659e076, 10-sample chunks, the median of each position in a chunk):
    # RMSNorm 16x512 read 128, 97, 92, 90 us, then 86-87 us; 256x4096 2.70, 2.11, 2.01, 1.97 ms, then 1.78-1.88 ms.
    # The first samples timed the worker's resume after it was frozen while the other side ran, and 1-2 of 4 rows
    # ended NOISY. With this resume the positions read 79-96 us and 1.48-1.99 ms (the third and fourth highest),
    # and no row was NOISY in four runs. 10 ms is five or more calls of both; a call that long has none
    # (2048x8192, 27 ms, showed no slow first samples).
    resume_ms = 10.0
    _malloc = "default (setup not run)"
    _heap_kept = False
    _flush_bytes = 2 * FLUSH_CAP_BYTES  # until `fit_to`: the most it can read
    _heap_reserved = 0

    @classmethod
    def available(cls) -> tuple[bool, str]:
        return True, ""

    @classmethod
    def keep_parent_memory(cls) -> None:
        """CPU outputs reach the parent whole: a row's frames and copies reuse warm heap pages (2-core VM, a
        2048x8192 bf16 row: correctness + re-checks 4.4 -> 3.2 s), trimmed after each row."""
        keep_heap()

    @classmethod
    def release_parent_memory(cls) -> None:
        trim_heap()

    @property
    def torch_device(self) -> torch.device:
        return torch.device("cpu")

    def setup(self) -> None:
        """Pin the worker: the CPUs it may use (the same set for solution and reference) and one torch
        thread per CPU, so two runs (and the two sides of one comparison) get the same parallelism; and
        freed memory kept in the heap (`keep_heap`)."""
        self._heap_kept, self._malloc = keep_heap()
        cpus = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
        if cpus:
            os.sched_setaffinity(0, cpus)
            torch.set_num_threads(len(cpus))

    def synchronize(self) -> None:
        pass

    def event(self) -> Event:
        return CpuEvent()

    def l2_bytes(self) -> int:
        """The most the flush evicts: the last-level cache, capped at FLUSH_CAP_BYTES (the flush reads 2x)."""
        return min(_llc_bytes(), FLUSH_CAP_BYTES)

    def fit_to(self, footprint_bytes: int) -> None:
        """Evict what the call touches (read twice its footprint, at least twice the core's L2, at most
        twice `l2_bytes()`), and, where the heap is kept, reserve `HEAP_RESERVE_FACTOR` times the
        footprint in it."""
        self._flush_bytes = min(2 * self.l2_bytes(), max(2 * footprint_bytes, 2 * _private_bytes()))
        want = HEAP_RESERVE_FACTOR * footprint_bytes
        if self._heap_kept and want > self._heap_reserved:
            self._heap_reserved = max(self._heap_reserved, reserve_heap(want))

    def flush_cache(self) -> None:
        """Read the first `_flush_bytes` of the buffer (float64 zeros: a float sum streams, with no copy),
        sized by `fit_to` where the base class reads the whole of it."""
        if self._flush_buffer is None:
            self._flush_buffer = torch.zeros(2 * self.l2_bytes() // 8, dtype=torch.float64)
        self._flush_buffer[: self._flush_bytes // 8].sum()

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
                "llc_bytes": _llc_bytes(),
                "flush": {"rule": "2x the call's input and output bytes, within these bounds",
                          "min_bytes": 2 * _private_bytes(), "max_bytes": 2 * self.l2_bytes()},
                "malloc": self._malloc, "heap_reserve": f"{HEAP_RESERVE_FACTOR}x the call's input and output bytes, "
                                                        "at most an eighth of the free memory, faulted in before warm-up",
                "omp_wait_policy": os.environ.get("OMP_WAIT_POLICY", "default (libgomp: spin a while, then sleep)"),
                "resume_ms": self.resume_ms}
