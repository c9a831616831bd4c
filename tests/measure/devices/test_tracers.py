"""Where CUDA activity records come from (`devices/tracers.py`). CUPTI needs a GPU: here a stand-in with
libcupti's activity calls writes records into the tracer's own buffers, laid out by NVIDIA's cupti-python
dtypes (its copy of CUPTI's header), and calls the tracer's ctypes callbacks as CUPTI does, so the buffer
handling and the reading run for real; on a GPU the real CUPTI and torch.profiler read the same kernels
(`test_cuda.py`)."""
from __future__ import annotations

import ctypes
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pytest

from harness.measure.devices.activities import Activity
from harness.measure.devices.tracers import (CONCURRENT_KERNEL, MEMCPY, MEMCPY2, MEMSET, CuptiTracer, in_ns,
                                             mapped, make_tracer)

cupti = pytest.importorskip("cupti.cupti", reason="cupti-python (requirements-test.txt) holds CUPTI's record layouts")
DRIVER = 5  # CUPTI_ACTIVITY_KIND_DRIVER: a kind the harness does not read
MAX_LIMIT_REACHED = 12  # CUPTI_ERROR_MAX_LIMIT_REACHED: no record after this one
DTYPES = {CONCURRENT_KERNEL: "activity_kernel10_dtype", MEMCPY: "activity_memcpy6_dtype",
          MEMCPY2: "activity_memcpy_pto_p4_dtype", MEMSET: "activity_memset4_dtype", DRIVER: "activity_api_dtype"}


@dataclass(frozen=True)
class Record:
    """The part of a CUPTI activity record the harness reads (times in ns)."""

    kind: int
    start: int
    end: int
    stream: int = 7
    name: str = ""
    copy_kind: int = 0

    def pack(self, keep: list[Any]) -> bytes:
        """The record as CUPTI writes it (cupti-python's dtype of its kind); a kernel's name lives in
        memory of its own, as CUPTI's does (`keep` holds it alive)."""
        row = np.zeros(1, dtype=getattr(cupti, DTYPES[self.kind]))
        values = {"kind": self.kind, "start": self.start, "end": self.end, "stream_id": self.stream,
                  "copy_kind": self.copy_kind}
        if self.name:
            keep.append(ctypes.create_string_buffer(self.name.encode()))
            values["name"] = ctypes.addressof(keep[-1])
        for key, value in values.items():
            if key in row.dtype.names:
                row[key] = value
        return row.tobytes()


@dataclass
class FakeLibcupti:
    """libcupti's activity calls: records a run "launches" go, at the flush, into a buffer the callbacks'
    holder gives, walked by cuptiActivityGetNextRecord as CUPTI walks it."""

    callbacks: tuple[Callable[..., None], Callable[..., None]] | None = None
    enabled: set[int] = field(default_factory=set)
    pending: list[Record] = field(default_factory=list)
    walks: dict[int, list[int]] = field(default_factory=dict)  # buffer -> its records' addresses
    buffers: list[int] = field(default_factory=list)
    keep: list[Any] = field(default_factory=list)
    refuse: int = 0  # what cuptiActivityRegisterCallbacks returns: CUPTI's error, or 0
    ticks_per_ns: float = 1.0  # CUPTI's clock: ns, unless a timestamp callback (kineto's TSC) replaced it

    def cuptiGetVersion(self, out: Any) -> int:
        out._obj.value = 130000
        return 0

    def cuptiGetTimestamp(self, out: Any) -> int:
        out._obj.value = int(time.time_ns() * self.ticks_per_ns)
        return 0

    def cuptiActivityRegisterCallbacks(self, requested: Any, completed: Any) -> int:
        if not self.refuse:
            self.callbacks = (requested, completed)
        return self.refuse

    def cuptiActivityEnable(self, kind: int) -> int:
        self.enabled.add(kind)
        return 0

    def cuptiActivityDisable(self, kind: int) -> int:
        self.enabled.discard(kind)
        return 0

    def launch(self, *records: Record) -> None:
        self.pending += [r for r in records if r.kind in self.enabled]

    def cuptiActivityFlushAll(self, flag: int) -> int:
        assert flag == 1, "a forced flush: a partly filled buffer too"
        assert self.callbacks is not None
        requested, completed = self.callbacks
        at, size, most = ctypes.c_void_p(), ctypes.c_size_t(), ctypes.c_size_t()
        requested(ctypes.byref(at), ctypes.byref(size), ctypes.byref(most))
        assert at.value and at.value % 8 == 0 and size.value > 0, "CUPTI takes 8-byte aligned buffers"
        self.buffers.append(at.value)
        used, self.walks[at.value] = 0, []
        for record in self.pending:
            data = record.pack(self.keep)
            ctypes.memmove(at.value + used, data, len(data))
            self.walks[at.value].append(at.value + used)
            used += -(-len(data) // 8) * 8
        self.pending = []
        completed(None, 0, at.value, size.value, used)
        return 0

    def cuptiActivityGetNextRecord(self, buffer: int, valid: int, record: ctypes.c_void_p) -> int:
        walk = self.walks[buffer]
        i = 0 if record.value is None else walk.index(record.value) + 1
        if i == len(walk):
            return MAX_LIMIT_REACHED
        record.value = walk[i]
        return 0


SPIN = "_ZN2at4cuda40_GLOBAL__N__b7a0dd2e_10_Sleep_cu_spin_kernelEl"  # torch's hold and marker, as CUPTI names it


def tracer_of(lib: FakeLibcupti) -> CuptiTracer:
    tracer = make_tracer(lambda: (lib, "/opt/x/libcupti.so.13"))
    assert isinstance(tracer, CuptiTracer), tracer.source
    return tracer


def test_records_become_activities_by_kind_and_sorted_by_start() -> None:
    lib = FakeLibcupti()
    tracer = tracer_of(lib)
    acts = tracer.trace(lambda: lib.launch(
        Record(CONCURRENT_KERNEL, 5_000, 6_500, 9, "_Z6kernelPf"),
        Record(CONCURRENT_KERNEL, 1_000, 4_000, 7, SPIN),
        Record(MEMCPY, 7_000, 7_250, 9, copy_kind=8),
        Record(MEMSET, 8_000, 8_100, 9),
        Record(CONCURRENT_KERNEL, 9_000, 9_900, 9, "_Z6kernelPf")), lambda: None)
    assert acts == [Activity(SPIN, 7, 1.0, 3.0), Activity("_Z6kernelPf", 9, 5.0, 1.5),
                    Activity("Memcpy DTOD", 9, 7.0, 0.25), Activity("Memset", 9, 8.0, 0.1),
                    Activity("_Z6kernelPf", 9, 9.0, 0.9)]
    assert acts[0].is_marker, "the mangled name still names the spin kernel"
    assert tracer.source == "CUPTI activity API (libcupti.so.13, API version 130000)"


def test_other_kinds_and_unknown_copy_kinds_are_read_without_failing() -> None:
    lib = FakeLibcupti()
    tracer = tracer_of(lib)
    lib.enabled.add(DRIVER)  # as if another CUPTI client had enabled it
    acts = tracer.trace(lambda: lib.launch(Record(DRIVER, 0, 10), Record(MEMCPY2, 0, 2_000, copy_kind=99)),
                        lambda: None)
    assert acts == [Activity("Memcpy 99", 7, 0.0, 2.0)]


def test_each_trace_takes_the_callbacks_back_from_a_profiler_session_before_it() -> None:
    """torch.profiler registers its own callbacks at each session (a bench module's, a solution's)."""
    lib = FakeLibcupti()
    tracer = tracer_of(lib)
    lib.cuptiActivityRegisterCallbacks(lambda *a: None, lambda *a: None)
    acts = tracer.trace(lambda: lib.launch(Record(CONCURRENT_KERNEL, 0, 1_000, name=SPIN)), lambda: None)
    assert len(acts) == 1


def test_records_are_only_collected_inside_a_trace_and_kinds_end_disabled_when_the_call_raises() -> None:
    lib = FakeLibcupti()
    tracer = tracer_of(lib)
    lib.launch(Record(CONCURRENT_KERNEL, 0, 1_000, name="before"))
    assert lib.pending == [], "nothing is enabled between traces"

    def crash() -> None:
        lib.launch(Record(CONCURRENT_KERNEL, 0, 1_000, name="half"))
        raise RuntimeError("the call failed")
    with pytest.raises(RuntimeError):
        tracer.trace(crash, lambda: None)
    assert lib.enabled == set() and lib.pending == []
    acts = tracer.trace(lambda: lib.launch(Record(CONCURRENT_KERNEL, 0, 1_000, name="next")), lambda: None)
    assert [a.name for a in acts] == ["next"], "the failed trace's records are not the next one's"


def test_records_on_a_clock_someone_else_registered_are_put_back_in_ns() -> None:
    """torch.profiler leaves CUPTI on the CPU's TSC (ticks, 2.1 a ns on the H100) after its session;
    a solution could leave it on a clock that runs slow."""
    for rate in (2.1, 0.5):
        lib = FakeLibcupti(ticks_per_ns=rate)
        tracer = tracer_of(lib)

        def run() -> None:
            lib.launch(Record(CONCURRENT_KERNEL, int(1_000 * rate), int(4_000 * rate), 7, SPIN))
            time.sleep(0.02)  # the rate is read over the trace: long enough to read it to a part in 10^4
        (act,) = tracer.trace(run, lambda: None)
        assert act.start_us == pytest.approx(1.0, rel=2e-3) and act.dur_us == pytest.approx(3.0, rel=2e-3), (rate, act)


def test_a_rate_is_divided_out_only_where_the_clock_readings_can_tell_it() -> None:
    """A 1.5% rate over 1 ms read to 0.1 us is a clock not in ns; the same over readings a loaded host
    blurred by 50 us each is noise, and a clock in ns is left as it is."""
    acts = [Activity(SPIN, 7, 100.0, 3.0)]
    sharp = in_ns(acts, (0, 0.0, 100.0), (1_015_000, 1_000_000.0, 100.0))
    assert sharp[0].dur_us == pytest.approx(3.0 / 1.015)
    assert in_ns(acts, (0, 0.0, 50_000.0), (1_015_000, 1_000_000.0, 50_000.0)) == acts
    assert in_ns(acts, (0, 0.0, 100.0), (1_000_900, 1_000_000.0, 100.0)) == acts


def test_a_buffer_is_handed_out_again_once_read_rather_than_made_per_chunk() -> None:
    lib = FakeLibcupti()
    tracer = tracer_of(lib)
    for _ in range(3):
        tracer.trace(lambda: lib.launch(Record(CONCURRENT_KERNEL, 0, 1_000, name=SPIN)), lambda: None)
    assert len(set(lib.buffers)) == 1, lib.buffers


def test_a_buffer_that_cannot_be_read_fails_the_trace_instead_of_losing_its_records() -> None:
    """An exception cannot cross back into CUPTI's callback: the trace raises it (a status for the row)."""
    lib = FakeLibcupti()
    tracer = tracer_of(lib)

    def broken(*_: Any) -> int:
        raise ValueError("bad record")
    lib.cuptiActivityGetNextRecord = broken  # type: ignore[method-assign]
    with pytest.raises(RuntimeError, match="reading CUPTI's records: ValueError: bad record"):
        tracer.trace(lambda: lib.launch(Record(CONCURRENT_KERNEL, 0, 1_000, name=SPIN)), lambda: None)


@pytest.mark.parametrize(("load", "why"), [
    (ImportError("No module named 'cuda.pathfinder'"),
     "no libcupti loaded and cuda-pathfinder is not installed (No module named 'cuda.pathfinder')"),
    (OSError("libcupti.so.13: cannot open shared object file"),
     "CUPTI did not start: OSError: libcupti.so.13: cannot open shared object file"),
    (FakeLibcupti(refuse=999), "CUPTI did not start: CuptiError: cuptiActivityRegisterCallbacks returned CUPTI error 999"),
])
def test_a_cupti_that_cannot_be_had_falls_back_to_the_profiler_and_says_why(load: Any, why: str) -> None:
    def loader() -> tuple[Any, str]:
        if isinstance(load, Exception):
            raise load
        return load, "libcupti.so.13"
    assert make_tracer(loader).source == f"torch.profiler (kineto): {why}"


def test_the_libcupti_already_mapped_is_the_one_used(tmp_path: Path) -> None:
    maps = tmp_path / "maps"
    maps.write_text("7f00-7f10 r-xp 00000000 08:01 1 /usr/lib/libc.so.6\n"
                    "7f20-7f30 r-xp 00000000 08:01 2 /site/nvidia/cu13/lib/libcupti.so.13\n"
                    "7ffd-7ffe rw-p 00000000 00:00 0 [stack]\n")
    assert mapped("libcupti.so", maps) == "/site/nvidia/cu13/lib/libcupti.so.13"
    assert mapped("libnvperf", maps) is None
    assert mapped("libcupti.so", tmp_path / "none") is None


@pytest.mark.parametrize("patch", ["CuptiTracer._call", "tracers.HEAD", "tracers.time", "time.time_ns"])
def test_the_workers_guard_holds_every_step_the_records_and_their_clock_go_through(
        patch: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A solution in the worker's process that made the clock reading or the record layout lie (a slow
    `time.time_ns` halved every duration through `in_ns`) is TAMPERED, as a stand-in tracer is."""
    import time as time_module
    from types import SimpleNamespace

    from harness.execute.guards import TamperGuard
    from harness.execute.worker import WorkerState
    from harness.measure.devices import tracers
    lib = FakeLibcupti()
    device = SimpleNamespace(_tracer=tracer_of(lib))
    device.tracer = lambda: device._tracer
    state = WorkerState()
    state.device = device
    guard = TamperGuard()
    for name, owner, attr in state._tracer_path():
        guard.add(name, owner, attr)
    assert guard.check() is None
    owner, attr = {"CuptiTracer._call": (CuptiTracer, "_call"), "tracers.HEAD": (tracers, "HEAD"),
                   "tracers.time": (tracers, "time"), "time.time_ns": (time_module, "time_ns")}[patch]
    monkeypatch.setattr(owner, attr, lambda *a: None)
    assert patch in (guard.check() or ""), guard.check()
