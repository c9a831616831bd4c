"""NVIDIA GPUs through torch.cuda, with NVML for clocks and driver version when it is importable."""
from __future__ import annotations

import contextlib
import ctypes
from dataclasses import dataclass
from typing import Any, Callable, Iterator

import torch

from harness.measure.devices.activities import Activity
from harness.measure.devices.base import RELEASE_ABOVE, Device, Event, Peak
from harness.measure.devices.tracers import Tracer, make_tracer

# Datasheet ceilings (dense). Matched on the device name; unknown devices get no speed-of-light.
PEAKS: dict[str, Peak] = {
    "H200": Peak(4.8e12, {"bfloat16": 989e12, "float16": 989e12, "float8_e4m3fn": 1979e12, "float32": 67e12}),
    "H100": Peak(3.35e12, {"bfloat16": 989e12, "float16": 989e12, "float8_e4m3fn": 1979e12, "float32": 67e12}),
    "A100": Peak(2.0e12, {"bfloat16": 312e12, "float16": 312e12, "float32": 19.5e12}),
    "L40S": Peak(0.864e12, {"bfloat16": 362e12, "float16": 362e12, "float32": 91.6e12}),
}


# The cold-cache flush also evicts the SMs' instruction caches: every SM runs this many distinct
# straight-line FMAs (16 bytes of SASS each: 64 KiB). Reading 2x L2 evicts a kernel's data and its code
# from L2, but an SM keeps the code it last ran, so a small kernel timed after itself starts with warm
# instruction caches, which Nsight Compute's `--cache-control all` invalidates. Measured on the H200
# (CUPTI, read flush, 2026-12-03): add 1M fp32 4.22 -> 4.54 us, softmax 256x4096 4.61 -> 4.99 us,
# GEMM 1024^3 5.67 -> 6.27 us (ncu: 5.10, 5.66, 6.98); 8192 and 16384 instructions gave the same.
# 22 us per sample, outside the timed region; PTX loaded through the driver, so no compiler is needed.
CODE_EVICT_INSTRUCTIONS = 4096


def code_eviction_ptx(instructions: int = CODE_EVICT_INSTRUCTIONS) -> str:
    """A kernel of `instructions` dependent FMAs with distinct immediates (so no two instruction words
    are the same and nothing folds), seeded by the thread index and stored only if it reaches +inf (never),
    so it writes nothing and cannot be removed."""
    body = [f"fma.rn.f32 %f1, %f1, 0f{0x3F800001 + i % 4096:08X}, 0f{0x3A000000 + i:08X};" for i in range(instructions)]
    return "\n".join([
        ".version 7.0", ".target sm_52", ".address_size 64",
        ".visible .entry opbench_evict_code(.param .u64 out) {",
        ".reg .f32 %f<2>;", ".reg .u32 %r<2>;", ".reg .u64 %rd<3>;", ".reg .pred %p<2>;",
        "mov.u32 %r1, %tid.x;", "cvt.rn.f32.u32 %f1, %r1;", *body,
        "ld.param.u64 %rd1, [out];", "cvta.to.global.u64 %rd2, %rd1;",
        "setp.eq.f32 %p1, %f1, 0f7F800000;", "@%p1 st.global.f32 [%rd2], %f1;", "ret;", "}", ""])


@dataclass(frozen=True)
class CodeEvictor:
    """The loaded eviction kernel and what it launches with (its module stays loaded with it)."""

    module: ctypes.c_void_p
    function: ctypes.c_void_p
    sink: torch.Tensor
    blocks: int


class CudaEvent(Event):
    def __init__(self) -> None:
        self.ev = torch.cuda.Event(enable_timing=True)

    def record(self) -> None:
        self.ev.record()

    def elapsed_ms(self, end: Event) -> float:
        assert isinstance(end, CudaEvent)
        return self.ev.elapsed_time(end.ev)


CU_LIMIT_PERSISTING_L2_CACHE_SIZE = 0x06  # CUlimit in cuda.h


def _nvml_handle(index: int) -> Any:
    """NVML handle of torch's device `index`, found by UUID: NVML ignores CUDA_VISIBLE_DEVICES, so
    the same index would name another GPU in a process pinned to one device."""
    try:
        import pynvml
        pynvml.nvmlInit()
    except Exception:  # no NVML (no driver library, or not installed): clocks are just not reported
        return None, None
    uuid = getattr(torch.cuda.get_device_properties(index), "uuid", None)
    try:
        if uuid is not None:
            return pynvml, pynvml.nvmlDeviceGetHandleByUUID(f"GPU-{uuid}")
    except Exception:
        pass
    try:
        return pynvml, pynvml.nvmlDeviceGetHandleByIndex(index)
    except Exception:
        return None, None


class CudaDevice(Device):
    kind = "cuda"

    def __init__(self, index: int = 0):
        super().__init__(index)
        self._stream: torch.cuda.Stream | None = None
        self._stream_kind = "not set up"
        self._cycles_per_us: float | None = None
        self._nvml, self._nvml_dev = None, None
        self._cuda: ctypes.CDLL | None = None
        self._evictor: CodeEvictor | str | None = None  # the kernel, or why it could not be loaded
        self._tracer: Tracer | None = None  # made on first use (CUPTI's buffers are per process)

    @classmethod
    def available(cls) -> tuple[bool, str]:
        if not torch.cuda.is_available():
            why = "torch has no CUDA support" if torch.version.cuda is None else "no CUDA device is visible"
            return False, why
        return True, ""

    @classmethod
    def release_parent_memory(cls) -> None:
        """The parent's copies of a row's outputs (device handoff) back to the device, for the workers:
        freed tensors otherwise stay in the parent's caching allocator for the rest of the run."""
        if torch.cuda.is_initialized():
            torch.cuda.empty_cache()

    @property
    def torch_device(self) -> torch.device:
        return torch.device("cuda", self.index)

    def setup(self) -> None:
        torch.cuda.set_device(self.index)
        self._stream = self._blocking_stream()
        self._nvml, self._nvml_dev = _nvml_handle(self.index)
        self.reset_persisting_cache()  # the driver may start with some set aside (11 MiB on an H200)

    def _blocking_stream(self) -> torch.cuda.Stream:
        """The harness stream, made without cudaStreamNonBlocking (torch's own streams have that flag).
        Work a solution launches on the legacy default stream (`kernel<<<g, b>>>` with no stream, a CuTe
        DSL call with none) then starts after the hold before the call and ends before the marker after
        it, so it is timed inside the call's window, as both upstreams' all-stream timing counts it; a
        stream of the solution's own (non-blocking, as torch makes them) still escapes: HIDDEN_WORK.
        A torch stream where the driver will not make one (then such work escapes too)."""
        try:
            torch.zeros(1, device=self.torch_device)  # the primary context, current on this thread
            handle = ctypes.c_void_p()
            rc = self._driver().cuStreamCreate(ctypes.byref(handle), ctypes.c_uint(0))
            if rc == 0 and handle.value:
                self._stream_kind = "blocking (waits for the legacy default stream)"
                return torch.cuda.ExternalStream(handle.value, device=self.torch_device)
            why = f"cuStreamCreate failed with CUDA driver error {rc}"
        except (OSError, AttributeError, RuntimeError) as exc:
            why = f"{type(exc).__name__}: {exc}"
        self._stream_kind = f"torch (non-blocking): {why}"[:160]
        return torch.cuda.Stream(self.index)

    def synchronize(self) -> None:
        torch.cuda.synchronize(self.index)

    @contextlib.contextmanager
    def stream(self) -> Iterator[None]:
        if self._stream is None:
            self.setup()
        with torch.cuda.stream(self._stream):
            yield

    def event(self) -> Event:
        return CudaEvent()

    def hold(self, microseconds: float) -> None:
        if microseconds <= 0:
            return
        if self._cycles_per_us is None:
            self._cycles_per_us = self._calibrate_sleep()
        torch.cuda._sleep(int(microseconds * self._cycles_per_us))

    def _calibrate_sleep(self) -> float:
        cycles = 1_000_000
        start, end = CudaEvent(), CudaEvent()
        torch.cuda._sleep(cycles)  # first launch pays module load
        self.synchronize()
        start.record()
        torch.cuda._sleep(cycles)
        end.record()
        self.synchronize()
        return cycles / max(start.elapsed_ms(end) * 1000.0, 1e-3)

    def mark(self) -> None:
        """A minimal spin kernel after the timed call: closes the call's window in a profiler trace."""
        torch.cuda._sleep(1)

    def traces_activities(self) -> bool:
        return True

    def device_activities(self, run: Callable[[], None]) -> list[Activity]:
        """Kernels, memcpys and memsets that `run` caused, from CUPTI (`tracers.make_tracer`)."""
        return self.tracer().trace(run, self.synchronize)

    def tracer(self) -> Tracer:
        if self._tracer is None:
            self._tracer = make_tracer()
        return self._tracer

    def l2_bytes(self) -> int:
        props = torch.cuda.get_device_properties(self.index)
        return int(getattr(props, "L2_cache_size", 0) or 50 * 1024 ** 2)

    def _driver(self) -> ctypes.CDLL:
        """The CUDA driver library, which torch has already loaded (every CUDA process maps it)."""
        if self._cuda is None:
            self._cuda = ctypes.CDLL("libcuda.so.1")
        return self._cuda

    def flush_cache(self) -> None:
        """Read 2x L2 (the base class), then evict the SMs' instruction caches (`CODE_EVICT_INSTRUCTIONS`)."""
        super().flush_cache()
        self.evict_code()

    def evict_code(self) -> None:
        ev = self._loaded_evictor()
        if isinstance(ev, str):
            return
        sink = ctypes.c_uint64(ev.sink.data_ptr())
        params = (ctypes.c_void_p * 1)(ctypes.cast(ctypes.byref(sink), ctypes.c_void_p))
        stream = ctypes.c_void_p(torch.cuda.current_stream(self.index).cuda_stream)
        self._driver().cuLaunchKernel(ev.function, ev.blocks, 1, 1, 128, 1, 1, 0, stream, params, None)

    def _loaded_evictor(self) -> CodeEvictor | str:
        """The eviction kernel, loaded on first use, or why it could not be."""
        if self._evictor is None:
            self._evictor = self._load_evictor()
        return self._evictor

    def _load_evictor(self) -> CodeEvictor | str:
        lib, module, function = self._driver(), ctypes.c_void_p(), ctypes.c_void_p()
        sink = torch.zeros(1, device=self.torch_device)  # makes the context current on this thread
        rc = lib.cuModuleLoadData(ctypes.byref(module), ctypes.c_char_p(code_eviction_ptx().encode()))
        if rc != 0:
            return f"not evicted: the driver refused the eviction kernel (CUresult {rc})"
        if lib.cuModuleGetFunction(ctypes.byref(function), module, b"opbench_evict_code") != 0:
            return "not evicted: eviction kernel not found in its module"
        sms = torch.cuda.get_device_properties(self.index).multi_processor_count
        return CodeEvictor(module, function, sink, 4 * sms)  # several blocks per SM, so every SM runs it

    def code_eviction(self) -> str:
        """What the flush does to instruction caches, for the device info (loads the kernel if need be)."""
        ev = self._loaded_evictor()
        if isinstance(ev, str):
            return ev
        return f"{CODE_EVICT_INSTRUCTIONS} distinct instructions run on every SM after the L2 read"

    def release_cached_memory(self) -> None:
        if torch.cuda.is_initialized() and torch.cuda.memory_reserved(self.index) - torch.cuda.memory_allocated(self.index) > RELEASE_ABOVE:
            torch.cuda.empty_cache()

    def persisting_cache_bytes(self) -> int:
        """cudaLimitPersistingL2CacheSize of the current context, read through the driver API (torch has
        no binding). `setup` sets it to 0, so anything else was set by code the worker ran; an
        access-policy window needs it to persist lines."""
        value = ctypes.c_size_t(0)
        if self._driver().cuCtxGetLimit(ctypes.byref(value), CU_LIMIT_PERSISTING_L2_CACHE_SIZE) != 0:
            return 0
        return int(value.value)

    def reset_persisting_cache(self) -> None:
        lib = self._driver()
        lib.cuCtxSetLimit(CU_LIMIT_PERSISTING_L2_CACHE_SIZE, ctypes.c_size_t(0))
        lib.cuCtxResetPersistingL2Cache()

    def peak(self) -> Peak:
        name = torch.cuda.get_device_name(self.index)
        for key, peak in PEAKS.items():
            if key in name:
                return peak
        return Peak()

    def clocks(self) -> dict[str, float]:
        if self._nvml_dev is None:
            return {}
        nv = self._nvml
        try:
            return {"sm_mhz": float(nv.nvmlDeviceGetClockInfo(self._nvml_dev, nv.NVML_CLOCK_SM)),
                    "mem_mhz": float(nv.nvmlDeviceGetClockInfo(self._nvml_dev, nv.NVML_CLOCK_MEM)),
                    "sm_max_mhz": float(nv.nvmlDeviceGetMaxClockInfo(self._nvml_dev, nv.NVML_CLOCK_SM)),
                    "temperature_c": float(nv.nvmlDeviceGetTemperature(self._nvml_dev, nv.NVML_TEMPERATURE_GPU))}
        except Exception:
            return {}

    def supports_graphs(self) -> bool:
        return True

    def capture_graph(self, fn: Callable[[], Any], batch: int) -> Callable[[], None]:
        """One graph of `batch` back-to-back calls; replay launches it on the current (harness) stream."""
        side = torch.cuda.Stream(self.index)
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(2):
                fn()
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            for _ in range(batch):
                fn()
        return graph.replay

    def info(self) -> dict[str, Any]:
        props = torch.cuda.get_device_properties(self.index)
        out: dict[str, Any] = {
            "kind": "cuda", "index": self.index, "name": props.name,
            "compute_capability": f"{props.major}.{props.minor}", "multiprocessors": props.multi_processor_count,
            "memory_bytes": props.total_memory, "l2_bytes": self.l2_bytes(), "cuda_runtime": torch.version.cuda,
            "flush": {"l2_read_bytes": 2 * self.l2_bytes(), "instruction_caches": self.code_eviction()},
            "harness_stream": self._stream_kind,
            # the tracer in use, never made here: a bench module's worker traces nothing through it, and its
            # torch-profiler mode should not find CUPTI's callbacks taken
            "activity_source": self._tracer.source if self._tracer is not None else "none (nothing traced yet)"}
        nv, dev = self._nvml, self._nvml_dev
        if nv is None:
            nv, dev = _nvml_handle(self.index)
        if nv is not None:
            with contextlib.suppress(Exception):
                out["driver"] = nv.nvmlSystemGetDriverVersion()
                out["sm_max_mhz"] = nv.nvmlDeviceGetMaxClockInfo(dev, nv.NVML_CLOCK_SM)
        else:  # said, not silently off: the report shows the clock and throttle check did not run
            import importlib.util
            out["clock_check"] = ("off: pynvml is not installed (pip install 'opbench[nvml]')"
                                  if importlib.util.find_spec("pynvml") is None else "off: NVML did not answer")
        return out
