"""Where a CUDA worker's device activity records come from: CUPTI's activity API through NVIDIA's
cupti-python where it is installed, torch.profiler (kineto, the same CUPTI records) where it is not.

Why not torch.profiler always: its first session imports torch._inductor and torch._dynamo, 3.3-3.5 s
of every GPU worker's start on the H100 (2026-12-07, py-spy), against 0.01 s to register CUPTI's
buffers and enable its kernel records; and every session also records each runtime and driver API
call, which the harness never reads. The kernel durations are the same records either way (a probe
on the H100 read 1.344/1.376 us for the same spin kernels both ways). `source` names the one used,
and the report carries it (`device.activity_source`).
"""
from __future__ import annotations

import importlib.metadata
from typing import Any, Callable, Protocol

import torch

from harness.measure.devices.activities import Activity, from_cupti_records, from_profiler_events

# Kernels on any stream (concurrently, as they ran), copies and fills: the work a call can cause.
KINDS = ("CONCURRENT_KERNEL", "MEMCPY", "MEMCPY2", "MEMSET")
BUFFER_BYTES = 8 << 20  # one buffer holds a 100-sample chunk's ~1,000 records many times over


class Tracer(Protocol):
    source: str

    def trace(self, run: Callable[[], None], synchronize: Callable[[], None]) -> list[Activity]:
        """The activities `run` caused, sorted by start, once `synchronize` has returned."""


class CuptiTracer:
    """CUPTI's activity API. CUPTI keeps one pair of buffer callbacks per process, and torch.profiler
    registers its own at each session (a bench module's, a solution's), so each trace registers these
    again first; code that registers others during a trace takes its records away, and the trace then
    holds no marker pairs (an AttributionError: a status, not a time)."""

    def __init__(self, cupti: Any, version: str):
        self.source = f"CUPTI activity API (cupti-python {version})"
        self._cupti = cupti
        self._kinds = [getattr(cupti.ActivityKind, k) for k in KINDS if hasattr(cupti.ActivityKind, k)]
        self._records: list[Activity] = []
        self._register()  # fails here, not in a row, where CUPTI cannot start

    def _register(self) -> None:
        self._cupti.activity_register_callbacks(self._requested, self._completed)

    @staticmethod
    def _requested() -> tuple[int, int]:
        return BUFFER_BYTES, 0

    def _completed(self, records: list[Any]) -> None:
        """CUPTI hands a buffer's records over (on a flush, or from its own thread when one fills); they
        are views into the buffer, so they are read here."""
        self._records.extend(from_cupti_records(records, self._cupti))

    def trace(self, run: Callable[[], None], synchronize: Callable[[], None]) -> list[Activity]:
        self._records = []
        self._register()
        for kind in self._kinds:
            self._cupti.activity_enable(kind)
        try:
            run()
            synchronize()
        finally:
            self._cupti.activity_flush_all(1)  # CUPTI_ACTIVITY_FLAG_FLUSH_FORCED: partly filled buffers too
            for kind in self._kinds:
                self._cupti.activity_disable(kind)
        got, self._records = self._records, []
        return sorted(got, key=lambda a: a.start_us)


class ProfilerTracer:
    """torch.profiler's CUDA activities: the same CUPTI records through kineto."""

    def __init__(self, why: str):
        self.source = f"torch.profiler (kineto): {why}"

    def trace(self, run: Callable[[], None], synchronize: Callable[[], None]) -> list[Activity]:
        from torch.profiler import ProfilerActivity, profile
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            run()
            synchronize()
        cuda = torch.autograd.DeviceType.CUDA
        return from_profiler_events(e for e in prof.profiler.kineto_results.events() if e.device_type() == cuda)


def make_tracer() -> Tracer:
    """CUPTI directly where cupti-python imports and takes the callbacks, else torch.profiler, saying why."""
    try:
        from cupti import cupti
        return CuptiTracer(cupti, importlib.metadata.version("cupti-python"))
    except ImportError as exc:
        return ProfilerTracer(f"cupti-python is not installed ({exc})"[:160])
    except Exception as exc:  # no libcupti of its version, or CUPTI refused: the fallback still times
        return ProfilerTracer(f"cupti-python did not start: {type(exc).__name__}: {exc}"[:160])
