"""The CPU device: freed memory stays in the heap (no page faults in steady-state calls) and the flush
is sized by the call's bytes (real torch, in a subprocess so the test process's heap is untouched)."""
from __future__ import annotations

import subprocess
import sys

from harness.measure.devices.cpu import CpuDevice, _private_bytes
from harness.paths import child_env

FAULTS = """
import resource, sys, torch
from harness.measure.devices.cpu import CpuDevice
dev = CpuDevice()
if sys.argv[1] in ("kept", "reserved"):
    dev.setup()
x = torch.randn(2048, 8192).bfloat16()
if sys.argv[1] == "reserved":  # what a worker does before warm-up: the heap reserve for this footprint
    dev.fit_to(2 * x.numel() * x.element_size())
kept = []
def call():  # an RMSNorm: fp32 temporaries of 64 MiB, freed and allocated again every call
    xf = x.float()
    return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-6)).to(x.dtype)
faults = []
for _ in range(25):
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    out = call()
    faults.append(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
    if len(faults) % 6 == 0:
        kept.append(out.clone())  # outputs kept for a re-check stay alive and fragment the heap
print(max(faults) if sys.argv[1] == "reserved" else sorted(faults[5:])[10])  # every call / the median once grown
"""


def _faults(mode: str) -> int:
    out = subprocess.run([sys.executable, "-c", FAULTS, mode], capture_output=True, text=True, env=child_env(), check=True)
    return int(out.stdout.split()[-1])


def test_a_worker_keeps_freed_memory_so_calls_do_not_page_fault() -> None:
    """Temporaries of 64 MiB are above glibc's largest dynamic mmap threshold (32 MiB), so by default
    every call maps and unmaps them and faults each page in again (about 16000 faults per temporary
    with 4 KiB pages, 32 with transparent huge pages); once a worker's heap has settled, it serves them
    from pages it has. (Temporaries of 4 MiB fault or not by default depending on where glibc's dynamic
    threshold happens to sit, so they cannot show the difference on every machine.) The median call is
    compared: a kept heap still grows now and then when fragmentation leaves no free chunk big enough
    (one call in ten faulted 64 MiB in on one machine), which is rare, not steady."""
    default, kept = _faults("default"), _faults("kept")
    assert kept < 100
    assert default > 10 * max(kept, 10)


def test_with_the_heap_reserve_no_call_page_faults_not_even_the_first() -> None:
    """Without the reserve the first calls grow the heap, and fragmentation (outputs kept alive between
    calls) grows it again now and then: such a call read 5-10x its time on a 2-core VM. With the
    reserve, the worst of 25 calls faults no more than a few pages."""
    assert _faults("reserved") < 100


def test_the_device_info_says_how_memory_is_kept() -> None:
    dev = CpuDevice()
    assert dev.info()["malloc"].startswith("default")  # before setup nothing was changed


def test_the_flush_is_sized_by_what_the_call_touches() -> None:
    dev = CpuDevice()
    lo, hi = 2 * _private_bytes(), 2 * dev.l2_bytes()
    dev.fit_to(16)
    assert dev._flush_bytes == lo
    dev.fit_to(1 << 40)
    assert dev._flush_bytes == hi
    info = dev.info()["flush"]
    assert (info["min_bytes"], info["max_bytes"]) == (lo, hi)


def test_the_accelerators_flush_only_reads_its_buffer() -> None:
    """The base class's flush (CUDA's, the NPU's), run on the CPU: one reduction and no copy. An int32
    buffer had torch copy it to int64 first, which wrote twice the bytes the flush meant to read."""
    from torch.profiler import profile

    from harness.measure.devices.base import Device

    dev = CpuDevice()
    Device.flush_cache(dev)  # makes the buffer
    assert dev._flush_buffer is not None
    whole = [dev._flush_buffer.numel()]
    with profile(record_shapes=True) as prof:
        Device.flush_cache(dev)
    on_it = {e.key for e in prof.key_averages(group_by_input_shape=True) if whole in e.input_shapes}
    assert on_it == {"aten::sum"}, on_it  # no copy of the buffer (a scalar's copy inside sum is no pass)
