"""Where CUDA activity records come from (`devices/tracers.py`). CUPTI needs a GPU: here a stand-in with
cupti-python's call surface and CUPTI's real kind numbers drives the tracer's bookkeeping; on a GPU the
real CUPTI and torch.profiler read the same kernels (`test_cuda.py`)."""
from __future__ import annotations

import enum
import importlib.util
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any, Callable

import pytest

from harness.measure.devices.activities import Activity, from_cupti_records
from harness.measure.devices.tracers import CuptiTracer, make_tracer


class ActivityKind(enum.IntEnum):  # cupti.h's CUpti_ActivityKind values
    MEMCPY = 1
    MEMSET = 2
    DRIVER = 5
    CONCURRENT_KERNEL = 10
    MEMCPY2 = 22


class ActivityMemcpyKind(enum.IntEnum):
    HTOD = 1
    DTOH = 2
    DTOD = 8


@dataclass(frozen=True)
class Record:
    """The part of a cupti-python activity record the harness reads (times in ns)."""

    kind: int
    start: int
    end: int
    stream_id: int = 7
    name: str = ""
    copy_kind: int = 0


@dataclass
class FakeCupti:
    """cupti-python's activity calls: records a run "launches" reach whoever holds the callbacks at the flush."""

    ActivityKind: Any = ActivityKind
    ActivityMemcpyKind: Any = ActivityMemcpyKind
    callbacks: tuple[Callable[..., Any], Callable[..., Any]] | None = None
    enabled: set[int] = field(default_factory=set)
    pending: list[Record] = field(default_factory=list)

    def activity_register_callbacks(self, requested: Callable[..., Any], completed: Callable[..., Any]) -> None:
        self.callbacks = (requested, completed)

    def activity_enable(self, kind: int) -> None:
        self.enabled.add(kind)

    def activity_disable(self, kind: int) -> None:
        self.enabled.discard(kind)

    def launch(self, *records: Record) -> None:
        self.pending += [r for r in records if r.kind in self.enabled]

    def activity_flush_all(self, flag: int) -> None:
        assert flag == 1, "a forced flush: a partly filled buffer too"
        assert self.callbacks is not None
        size, _ = self.callbacks[0]()
        assert size > 0
        got, self.pending = self.pending, []
        self.callbacks[1](got)


SPIN = "_ZN2at4cuda40_GLOBAL__N__b7a0dd2e_10_Sleep_cu_spin_kernelEl"  # torch's hold and marker, as CUPTI names it


def test_records_become_activities_by_kind_and_sorted_by_start() -> None:
    cupti = FakeCupti()
    tracer = CuptiTracer(cupti, "13.0.1")
    acts = tracer.trace(lambda: cupti.launch(
        Record(ActivityKind.CONCURRENT_KERNEL, 5_000, 6_500, 9, "_Z6kernelPf"),
        Record(ActivityKind.CONCURRENT_KERNEL, 1_000, 4_000, 7, SPIN),
        Record(ActivityKind.MEMCPY, 7_000, 7_250, 9, copy_kind=ActivityMemcpyKind.DTOD),
        Record(ActivityKind.MEMSET, 8_000, 8_100, 9)), lambda: None)
    assert acts == [Activity(SPIN, 7, 1.0, 3.0), Activity("_Z6kernelPf", 9, 5.0, 1.5),
                    Activity("Memcpy DTOD", 9, 7.0, 0.25), Activity("Memset", 9, 8.0, 0.1)]
    assert acts[0].is_marker, "the mangled name still names the spin kernel"
    assert tracer.source == "CUPTI activity API (cupti-python 13.0.1)"


def test_other_kinds_and_unknown_copy_kinds_are_read_without_failing() -> None:
    acts = from_cupti_records([Record(ActivityKind.DRIVER, 0, 10),
                               Record(ActivityKind.MEMCPY2, 0, 2_000, copy_kind=99)], FakeCupti())
    assert acts == [Activity("Memcpy 99", 7, 0.0, 2.0)]


def test_each_trace_takes_the_callbacks_back_from_a_profiler_session_before_it() -> None:
    """torch.profiler registers its own callbacks at each session (a bench module's, a solution's)."""
    cupti = FakeCupti()
    tracer = CuptiTracer(cupti, "13.0.1")
    cupti.activity_register_callbacks(lambda: (1024, 0), lambda records: None)
    acts = tracer.trace(lambda: cupti.launch(Record(ActivityKind.CONCURRENT_KERNEL, 0, 1_000, name=SPIN)), lambda: None)
    assert len(acts) == 1


def test_records_are_only_collected_inside_a_trace_and_kinds_end_disabled_when_the_call_raises() -> None:
    cupti = FakeCupti()
    tracer = CuptiTracer(cupti, "13.0.1")
    cupti.launch(Record(ActivityKind.CONCURRENT_KERNEL, 0, 1_000, name="before"))
    assert cupti.pending == [], "nothing is enabled between traces"

    def crash() -> None:
        cupti.launch(Record(ActivityKind.CONCURRENT_KERNEL, 0, 1_000, name="half"))
        raise RuntimeError("the call failed")
    with pytest.raises(RuntimeError):
        tracer.trace(crash, lambda: None)
    assert cupti.enabled == set() and cupti.pending == []
    acts = tracer.trace(lambda: cupti.launch(Record(ActivityKind.CONCURRENT_KERNEL, 0, 1_000, name="next")), lambda: None)
    assert [a.name for a in acts] == ["next"], "the failed trace's records are not the next one's"


@pytest.mark.skipif(importlib.util.find_spec("cupti") is not None, reason="cupti-python is installed here")
def test_without_cupti_python_the_profiler_times_and_the_source_says_why() -> None:
    tracer = make_tracer()
    assert tracer.source.startswith("torch.profiler (kineto): cupti-python is not installed"), tracer.source


def test_a_cupti_that_cannot_start_falls_back_to_the_profiler(monkeypatch: pytest.MonkeyPatch) -> None:
    """cupti-python imports but CUPTI refuses (no libcupti of its version, another tool holding it)."""
    def refuse(*_: Any) -> None:
        raise RuntimeError("CUPTI_ERROR_NOT_INITIALIZED")
    fake = SimpleNamespace(cupti=SimpleNamespace(ActivityKind=ActivityKind, activity_register_callbacks=refuse))
    monkeypatch.setitem(__import__("sys").modules, "cupti", fake)
    monkeypatch.setattr("importlib.metadata.version", lambda name: "13.0.1")
    tracer = make_tracer()
    assert tracer.source == "torch.profiler (kineto): cupti-python did not start: RuntimeError: CUPTI_ERROR_NOT_INITIALIZED"
