"""Where a GPU worker's first CUPTI session spends its seconds: torch.profiler (kineto) against CUPTI's
activity API called directly, through ctypes or NVIDIA's cupti-python, on the main thread or in a thread
beside torch's import. One fresh process a mode; prints its marks (seconds since start) and the
durations it read for five spin kernels of 1,000 cycles, as one JSON line.

On the H100 (2026-12-07, `bench/h200_issues12_16.sh s29`): kineto's first session 3.3-3.5 s (py-spy:
`prepare_trace` importing torch._inductor and torch._dynamo), the direct paths 0.01-0.02 s, the same
kernel durations every way. The harness now reads CUPTI directly (`harness/measure/devices/tracers.py`);
`bench/startup_cost.py --tracers auto,profiler` measures what that changes in a worker's start.

    python bench/cupti_probe.py kineto|ctypes|cuptipy|ctypes-thread|cuptipy-thread
"""
from __future__ import annotations

import ctypes
import glob
import json
import os
import sys
import threading
import time

T0 = time.perf_counter()
mode = sys.argv[1]
marks: dict[str, float] = {}


def mark(name: str) -> None:
    marks[name] = round(time.perf_counter() - T0, 3)


def libcupti_path() -> str:
    import importlib.util
    spec = importlib.util.find_spec("torch")
    base = os.path.dirname(os.path.dirname(spec.origin))
    found = sorted(glob.glob(os.path.join(base, "nvidia", "**", "libcupti.so*"), recursive=True))
    found += sorted(glob.glob("/usr/local/cuda*/extras/CUPTI/lib64/libcupti.so*"))
    return found[0] if found else "libcupti.so"


def direct_enable(records: list) -> None:
    """cuptiActivityRegisterCallbacks + cuptiActivityEnable(CONCURRENT_KERNEL) through ctypes."""
    lib = ctypes.CDLL(libcupti_path())
    mark("ct_loaded")
    REQ = ctypes.CFUNCTYPE(None, ctypes.POINTER(ctypes.POINTER(ctypes.c_uint8)), ctypes.POINTER(ctypes.c_size_t),
                           ctypes.POINTER(ctypes.c_size_t))
    DONE = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_uint32, ctypes.POINTER(ctypes.c_uint8), ctypes.c_size_t,
                            ctypes.c_size_t)
    bufs: list = []

    def req(buf, size, maxrec):
        b = (ctypes.c_uint8 * ((8 << 20) + 8))()
        bufs.append(b)
        addr = (ctypes.addressof(b) + 7) & ~7
        buf[0] = ctypes.cast(addr, ctypes.POINTER(ctypes.c_uint8))
        size[0] = 8 << 20
        maxrec[0] = 0

    def done(ctx, stream, buf, size, valid):
        rec = ctypes.c_void_p()
        while lib.cuptiActivityGetNextRecord(buf, ctypes.c_size_t(valid), ctypes.byref(rec)) == 0:
            kind = ctypes.c_uint32.from_address(rec.value).value
            start = ctypes.c_uint64.from_address(rec.value + 16).value
            end = ctypes.c_uint64.from_address(rec.value + 24).value
            records.append((kind, (end - start) / 1e3))

    cbs = (REQ(req), DONE(done))
    records.append(cbs)  # keep alive
    rc1 = lib.cuptiActivityRegisterCallbacks(cbs[0], cbs[1])
    mark("ct_registered")
    rc2 = lib.cuptiActivityEnable(10)
    mark("ct_enabled")
    marks["rc"] = (rc1, rc2)
    records.append(lib)


def cuptipy_enable(records: list) -> None:
    from cupti import cupti
    mark("py_imported")

    def done(acts):
        for a in acts:
            if a.kind == cupti.ActivityKind.CONCURRENT_KERNEL:
                records.append((a.name, (a.end - a.start) / 1e3, a.stream_id))

    cupti.activity_register_callbacks(lambda: (8 << 20, 0), done)
    mark("py_registered")
    cupti.activity_enable(cupti.ActivityKind.CONCURRENT_KERNEL)
    mark("py_enabled")
    records.append(cupti)


records: list = []
thread = None
if mode in ("ctypes-thread", "cuptipy-thread"):
    thread = threading.Thread(target=direct_enable if mode == "ctypes-thread" else cuptipy_enable, args=(records,))
    thread.start()
import torch  # noqa: E402

mark("torch")
torch.zeros(1, device="cuda")
torch.cuda.synchronize()
mark("context")
if thread is not None:
    thread.join()
    mark("joined")
elif mode == "ctypes":
    direct_enable(records)
elif mode == "cuptipy":
    cuptipy_enable(records)

if mode == "kineto":
    from torch.profiler import ProfilerActivity, profile
    p = profile(activities=[ProfilerActivity.CUDA])
    p.__enter__()
    mark("kineto_enter")
    for _ in range(5):
        torch.cuda._sleep(1000)
    torch.cuda.synchronize()
    p.__exit__(None, None, None)
    mark("kineto_exit")
    evs = [e for e in p.profiler.kineto_results.events() if e.device_type() == torch.autograd.DeviceType.CUDA]
    marks["kernels"] = [round(e.duration_ns() / 1e3, 3) for e in evs]
else:
    for _ in range(5):
        torch.cuda._sleep(1000)
    torch.cuda.synchronize()
    mark("ran")
    if mode.startswith("ctypes"):
        lib = records[-1]
        lib.cuptiActivityFlushAll(1)
        marks["kernels"] = [r[1] for r in records if isinstance(r, tuple) and len(r) == 2 and isinstance(r[0], int)]
    else:
        cupti = records[-1]
        cupti.activity_flush_all(1)
        marks["kernels"] = [(r[0][:30], r[1], r[2]) for r in records if isinstance(r, tuple)]
    mark("flushed")
print(json.dumps({"mode": mode, **marks}))
