"""Where a CUDA worker's device activity records come from: CUPTI's activity API, called through ctypes
on the libcupti the process already has, and torch.profiler (kineto, the same CUPTI records) where CUPTI
cannot be had that way.

Why not torch.profiler always: its first session imports torch._inductor and torch._dynamo, 3.3-3.5 s
of every GPU worker's start on the H100 (2026-12-07, py-spy), against 0.01 s to register CUPTI's
buffers and enable its kernel records; and every session also records each runtime and driver API
call, which the harness never reads. The kernel durations are the same records either way (a probe
on the H100 read 1.344/1.376 us for the same spin kernels both ways).

Why ctypes and not NVIDIA's cupti-python (the twenty-second session's reader): cupti-python hands a
buffer over as one Python object per record, each a numpy record view, and reading four fields of it
goes through numpy's recarray: on the H100 that was 1.1 s of a warm make bench's reference worker
(py-spy, 2026-12-07), and 137 + 102 us a record on the 2-core dev VM, against a few microseconds to
read the same fields from the buffer with one `struct` call. The records' layout is CUPTI's public
header's (`cupti_activity.h`); the tests check it against cupti-python's own dtypes. `source` names
the reader used, and the report carries it (`device.activity_source`).
"""
from __future__ import annotations

import ctypes
import struct
import time
from pathlib import Path
from typing import Any, Callable, Iterable, Protocol

import torch

from harness.measure.devices.activities import Activity, from_profiler_events

# CUpti_ActivityKind: kernels on any stream (concurrently, as they ran), copies (peer copies too) and
# fills: the work a call can cause.
CONCURRENT_KERNEL, MEMCPY, MEMCPY2, MEMSET = 10, 1, 22, 2
KINDS = (CONCURRENT_KERNEL, MEMCPY, MEMCPY2, MEMSET)
# Where the fields the harness reads sit in CUPTI's records (CUPTI 12-13: CUpti_ActivityKernel9-10,
# Memcpy6, MemcpyPtoP4, Memset4): every record opens with its kind, and its start and end (ns) at 16 and 24.
HEAD = struct.Struct("<I12xQQ")    # kind, start, end
KERNEL = struct.Struct("<48xI52xQ")  # stream id, name (a char * CUPTI owns, shared by the kernel's records)
COPY = struct.Struct("<4xB35xI")   # copy kind, stream id
FILL = struct.Struct("<40xI")      # stream id
COPY_KINDS = ("UNKNOWN", "HTOD", "DTOH", "HTOA", "ATOH", "ATOA", "ATOD", "DTOA", "DTOD", "HTOH", "PTOP")
BUFFER_BYTES = 8 << 20  # one buffer holds a chunk's records (about 10 a sample) many times over
SUCCESS = 0

# What CUPTI may still call or write into, for as long as the process lives: its callbacks stay registered
# after their tracer is gone (a bench module's worker makes a second device), and a buffer it was handed is
# its own until it hands it back. Bounded: two callbacks a tracer, and buffers only when none is free.
HELD: list[Any] = []

REQUESTED = ctypes.CFUNCTYPE(None, ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(ctypes.c_size_t),
                             ctypes.POINTER(ctypes.c_size_t))
COMPLETED = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_uint32, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_size_t)


class Tracer(Protocol):
    source: str

    def trace(self, run: Callable[[], None], synchronize: Callable[[], None]) -> list[Activity]:
        """The activities `run` caused, sorted by start, once `synchronize` has returned."""


def read_records(buffer: memoryview, offsets: Iterable[int]) -> list[Activity]:
    """Activities from the records at `offsets` of a CUPTI activity buffer: kernels by their (mangled)
    name, copies as "Memcpy <kind>", fills as "Memset"; records of other kinds are left out."""
    names: dict[int, str] = {}
    out = []
    for at in offsets:
        kind, start, end = HEAD.unpack_from(buffer, at)
        if kind == CONCURRENT_KERNEL:
            stream, pointer = KERNEL.unpack_from(buffer, at)
            if pointer not in names:
                names[pointer] = ctypes.string_at(pointer).decode(errors="replace") if pointer else "?"
            name = names[pointer]
        elif kind in (MEMCPY, MEMCPY2):
            copy, stream = COPY.unpack_from(buffer, at)
            name = f"Memcpy {COPY_KINDS[copy] if copy < len(COPY_KINDS) else copy}"
        elif kind == MEMSET:
            (stream,) = FILL.unpack_from(buffer, at)
            name = "Memset"
        else:
            continue
        out.append(Activity(name, stream, start / 1e3, (end - start) / 1e3))
    return out


class CuptiError(RuntimeError):
    """A CUPTI call failed (the tracer cannot start: the fallback times), or a trace's records could not
    be had (no buffer for CUPTI, or one that would not read): no time is reported."""


class CuptiTracer:
    """CUPTI's activity API. CUPTI keeps one pair of buffer callbacks per process, and torch.profiler
    registers its own at each session (a bench module's, a solution's), so each trace registers these
    again first; code that registers others during a trace takes its records away, and the trace then
    holds no marker pairs (an AttributionError: a status, not a time). `lib` is libcupti (or anything
    with the calls used here: the activity API's and cuptiGetTimestamp)."""

    def __init__(self, lib: Any, source: str):
        self.source = source
        self._lib = lib
        self._buffers: dict[int, tuple[ctypes.Array[ctypes.c_uint8], int]] = {}  # address -> (buffer, its offset)
        self._free: list[ctypes.Array[ctypes.c_uint8]] = []
        self._records: list[Activity] = []
        self._failed = ""
        self._callbacks = (REQUESTED(self._requested), COMPLETED(self._completed))
        HELD.extend(self._callbacks)
        self._register()  # fails here, not in a row, where CUPTI cannot start

    def _call(self, function: str, *args: Any) -> None:
        rc = getattr(self._lib, function)(*args)
        if rc != SUCCESS:
            raise CuptiError(f"{function} returned CUPTI error {rc}")

    def _register(self) -> None:
        self._call("cuptiActivityRegisterCallbacks", *self._callbacks)

    def _requested(self, buffer: Any, size: Any, max_records: Any) -> None:
        """A buffer for CUPTI to fill, 8-byte aligned as it requires; reused once its records are read.
        With none to give (out of memory), CUPTI drops the records, and the trace says so."""
        try:
            if not self._free:
                self._free.append((ctypes.c_uint8 * (BUFFER_BYTES + 8))())
                HELD.append(self._free[-1])
            raw = self._free.pop()
        except Exception as exc:  # noqa: BLE001 - reported by trace()
            self._failed = f"a buffer for CUPTI's records: {type(exc).__name__}: {exc}"
            buffer[0], size[0], max_records[0] = None, 0, 0
            return
        offset = -ctypes.addressof(raw) % 8
        self._buffers[ctypes.addressof(raw) + offset] = (raw, offset)
        buffer[0], size[0], max_records[0] = ctypes.addressof(raw) + offset, BUFFER_BYTES, 0

    def _completed(self, context: Any, stream: int, buffer: int | None, size: int, valid: int) -> None:
        """CUPTI hands a buffer back (on a flush, or from its own thread when one fills). An exception
        cannot cross into CUPTI: it is kept, and the trace raises it."""
        held = self._buffers.pop(buffer or 0, None)
        if held is None:
            return
        raw, offset = held
        try:
            record, offsets = ctypes.c_void_p(), []
            while self._lib.cuptiActivityGetNextRecord(buffer, valid, record) == SUCCESS:
                offsets.append(record.value - buffer + offset)
            self._records.extend(read_records(memoryview(raw).cast("B"), offsets))
        except Exception as exc:  # noqa: BLE001 - reported by trace()
            self._failed = f"reading CUPTI's records: {type(exc).__name__}: {exc}"
        self._free.append(raw)

    def _clock(self) -> tuple[int, float, float]:
        """(CUPTI's timestamp, the host's at that moment, how uncertain that is in ns): CUPTI's read between
        two of the host's, the closest of three such brackets (a preemption inside one widens only that
        one). The host's clock is CLOCK_REALTIME, CUPTI's own default on Linux, so a step of the system
        clock moves both alike."""
        now, best = ctypes.c_uint64(), (0, 0.0, float("inf"))
        for _ in range(3):
            before = time.time_ns()
            self._call("cuptiGetTimestamp", ctypes.byref(now))
            after = time.time_ns()
            if after - before < best[2]:
                best = (now.value, (before + after) / 2, float(after - before))
        return best

    def trace(self, run: Callable[[], None], synchronize: Callable[[], None]) -> list[Activity]:
        self._records, self._failed = [], ""
        self._register()
        try:
            for kind in KINDS:
                self._call("cuptiActivityEnable", kind)
            began = self._clock()
            run()
            synchronize()
        finally:
            self._lib.cuptiActivityFlushAll(1)  # CUPTI_ACTIVITY_FLAG_FLUSH_FORCED: partly filled buffers too
            for kind in KINDS:
                self._lib.cuptiActivityDisable(kind)
        ended = self._clock()
        got, self._records = self._records, []
        if self._failed:
            raise CuptiError(self._failed)
        return sorted(in_ns(got, began, ended), key=lambda a: a.start_us)


def in_ns(acts: list[Activity], began: tuple[int, float, float], ended: tuple[int, float, float]) -> list[Activity]:
    """Activities on CUPTI's clock, put back in ns. CUPTI's records are in ns until someone registers a
    timestamp callback of their own, which then holds for the process: torch.profiler (kineto) registers
    the CPU's TSC, in ticks, at each session, so every direct trace after one read 2.1x on the H100
    (2026-12-07), and a solution could register a clock that runs slow. CUPTI's clock against the
    host's over the trace gives the rate, known to the two readings' uncertainty over the trace's length
    (microseconds over milliseconds); a rate off 1 by more than 1% and by more than three times what it
    is known to is divided out, so a near-empty trace on a loaded host never rescales a clock in ns."""
    span = max(ended[1] - began[1], 1.0)
    rate = (ended[0] - began[0]) / span
    if abs(rate - 1) <= max(0.01, 3 * (began[2] + ended[2]) / span) or rate <= 0:
        return acts
    return [Activity(a.name, a.stream, a.start_us / rate, a.dur_us / rate) for a in acts]


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


def mapped(name: str, maps: Path = Path("/proc/self/maps")) -> str | None:
    """The path of a shared library this process has mapped whose file name starts with `name`."""
    try:
        text = maps.read_text()
    except OSError:
        return None
    return next((p for p in (line.rpartition(" ")[2] for line in text.splitlines())
                 if Path(p).name.startswith(name)), None)


def load_libcupti() -> tuple[ctypes.CDLL, str]:
    """libcupti as this process has it: the copy torch's kineto already mapped, so that torch.profiler
    (a bench module's, a solution's) and this tracer share one CUPTI; else the one NVIDIA's
    cuda-pathfinder finds (the nvidia-cuda-cupti wheel torch's CUDA builds install, or a toolkit's)."""
    path = mapped("libcupti.so")
    if path is None:
        from cuda.pathfinder import load_nvidia_dynamic_lib  # ImportError: the fallback says so
        path = load_nvidia_dynamic_lib("cupti").abs_path
    lib = ctypes.CDLL(path)
    lib.cuptiActivityGetNextRecord.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.POINTER(ctypes.c_void_p))
    return lib, path


def make_tracer(load: Callable[[], tuple[Any, str]] = load_libcupti) -> Tracer:
    """CUPTI directly where libcupti loads and takes the callbacks, else torch.profiler, saying why."""
    try:
        lib, path = load()
        version = ctypes.c_uint32()
        lib.cuptiGetVersion(ctypes.byref(version))
        return CuptiTracer(lib, f"CUPTI activity API ({Path(path).name}, API version {version.value})")
    except ImportError as exc:
        return ProfilerTracer(f"no libcupti loaded and cuda-pathfinder is not installed ({exc})"[:160])
    except Exception as exc:  # no libcupti found, or CUPTI refused: the fallback still times
        return ProfilerTracer(f"CUPTI did not start: {type(exc).__name__}: {exc}"[:160])
