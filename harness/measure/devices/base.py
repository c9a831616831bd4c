"""The one interface every device kind implements, so timing and correctness never branch on the kind.

A Device owns a stream for the harness, makes timing events on it, flushes the last-level cache
outside the timed region, and says what it is (for the report) and how fast it could possibly be
(for the speed-of-light and "faster than physics" checks).
"""
from __future__ import annotations

import contextlib
import platform
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator

import torch

# cached, unused device memory a worker gives back after each command: above this, a large workload's
# other worker may need it; below it, keeping the cache saves re-allocating on every call
RELEASE_ABOVE = 1 << 30


@dataclass(frozen=True)
class Peak:
    """Physical ceilings; None where unknown, in which case no speed-of-light number is reported."""

    bytes_per_s: float | None = None
    flops_per_s: dict[str, float] = field(default_factory=dict)  # by dtype name

    def flops_for(self, dtype: str) -> float | None:
        return self.flops_per_s.get(dtype) or self.flops_per_s.get("float32")


class Event(ABC):
    """A point on the device timeline; `elapsed_ms(end)` is valid after `Device.synchronize()`."""

    @abstractmethod
    def record(self) -> None: ...

    @abstractmethod
    def elapsed_ms(self, end: "Event") -> float: ...


class Device(ABC):
    kind: str = "abstract"
    # Calls queue work that runs after they return (a stream): host clock and device events can then
    # disagree, which is what the hidden-work check compares. False where a call's work is done on return.
    queues_work: bool = True
    # Untimed calls at the start of each chunk, for at least this long: where the host's clock times the call,
    # its first calls after the worker was frozen (while the other side ran) time the resume, not the call.
    resume_ms: float = 0.0

    def __init__(self, index: int = 0):
        self.index = index
        self._flush_buffer: torch.Tensor | None = None

    # -- availability and identity ------------------------------------------------------------
    @classmethod
    @abstractmethod
    def available(cls) -> tuple[bool, str]:
        """(usable, reason-if-not): the reason is what a SKIPPED row in the report says."""

    # -- the parent's memory (the trusted process, which holds each row's outputs to compare) ----------
    @classmethod
    def keep_parent_memory(cls) -> None:
        """Once, before the run's rows: how the parent holds the outputs it compares (nothing by default)."""

    @classmethod
    def release_parent_memory(cls) -> None:
        """After each row: the parent's copies of its outputs given back (nothing by default)."""

    @property
    @abstractmethod
    def torch_device(self) -> torch.device: ...

    @abstractmethod
    def info(self) -> dict[str, Any]:
        """Name, driver and toolkit versions: what a reader needs to reproduce the numbers."""

    def setup(self) -> None:
        """Bind this process to the device (set_device); called once in each worker."""

    # -- execution ----------------------------------------------------------------------------
    @abstractmethod
    def synchronize(self) -> None:
        """Wait for all work on the device, on every stream (so hidden side-stream work is included)."""

    @contextlib.contextmanager
    def stream(self) -> Iterator[None]:
        """Make the harness-owned stream current for the block."""
        yield

    @abstractmethod
    def event(self) -> Event: ...

    def hold(self, microseconds: float) -> None:
        """Enqueue device-side busy time so the host can queue the timed call before it starts.

        This hides launch latency from the measurement (nvbench's blocking kernel); a no-op where
        the device runs work synchronously with the host.
        """

    # -- cache --------------------------------------------------------------------------------
    @abstractmethod
    def l2_bytes(self) -> int:
        """Size of the last-level cache the flush must evict."""

    def flush_cache(self) -> None:
        """Evict the cache by reading a buffer twice its size; called outside the timed region.

        A read, not a write (do_bench zeroes a buffer): a write leaves the cache full of dirty lines
        whose write-back then lands inside the timed call, charging the solution for the flush. Floats:
        torch sums an int32 tensor by first copying it to int64 (a write of twice the bytes, then a
        second read: three passes where one is meant, found on the H100 on 2026-12-07)."""
        if self._flush_buffer is None:
            self._flush_buffer = torch.zeros(2 * self.l2_bytes() // 4, dtype=torch.float32, device=self.torch_device)
        self._flush_buffer.sum()

    def fit_to(self, footprint_bytes: int) -> None:
        """Prepare timing for a call that touches `footprint_bytes` (its inputs and outputs), before its
        warm-up. An accelerator's flush reads twice its L2 whatever the call, which costs microseconds;
        the CPU sizes its flush and reserves heap pages."""

    def persisting_cache_bytes(self) -> int:
        """Cache set aside for lines that persist (CUDA's persisting L2): what survives `flush_cache`.
        `setup` and the worker's timing start reset it to 0, and a call that sets it is TAMPERED."""
        return 0

    def reset_persisting_cache(self) -> None:
        """No cache set aside for persisting lines, and none persisting now."""

    # -- limits and health --------------------------------------------------------------------
    def peak(self) -> Peak:
        return Peak()

    def clocks(self) -> dict[str, float]:
        """Current clocks in MHz (sm, memory) where readable, for the throttling check."""
        return {}

    def mark(self) -> None:
        """Enqueue a marker after a timed call (devices with activity tracing; else nothing)."""

    def traces_activities(self) -> bool:
        """Whether `device_activities` works here: the `auto` timer then times from kernel timestamps."""
        return False

    def device_activities(self, run: Callable[[], None]) -> list[Any] | None:
        """Per-kernel device activities `run` caused (profiler timestamps), or None where the device
        has no activity tracing; used for the cupti timer and the hidden-work attribution check."""
        return None

    def supports_graphs(self) -> bool:
        return False

    def capture_graph(self, fn: Callable[[], Any], batch: int) -> Callable[[], None]:
        raise NotImplementedError(f"{self.kind} has no graph capture")

    def release_cached_memory(self) -> None:
        """Give the allocator's cached, unused memory back to the device when there is much of it. A
        row's two workers share the device and the idle one keeps its memory while it is frozen, so a
        workload near the device's size needs the other's cache back. Host memory is the OS's to manage."""

    def memory_error(self, exc: BaseException) -> bool:
        """Whether `exc` means the device ran out of memory (reported as OUT_OF_MEMORY)."""
        if isinstance(exc, (torch.OutOfMemoryError, MemoryError)):
            return True
        return isinstance(exc, RuntimeError) and "can't allocate memory" in str(exc)


def host_info() -> dict[str, Any]:
    return {"host": platform.node(), "platform": platform.platform(), "python": platform.python_version(),
            "machine": platform.machine(), "processor": platform.processor()}
