"""The CUDA device: the instruction-cache eviction kernel of its cold-cache flush (PTX on any machine; the
kernel itself where a GPU is), and its activity records through CUPTI and through torch.profiler."""
from __future__ import annotations

import re

import pytest
import torch

from harness.measure.devices.cuda import CODE_EVICT_INSTRUCTIONS, code_eviction_ptx


def test_the_eviction_kernel_is_straight_line_code_with_no_repeated_instruction() -> None:
    ptx = code_eviction_ptx()
    fmas = [line for line in ptx.splitlines() if line.startswith("fma.")]
    assert len(fmas) == CODE_EVICT_INSTRUCTIONS and len(set(fmas)) == len(fmas)
    assert not re.search(r"^\s*(bra|@%p\d+ bra)", ptx, re.M), "a loop would re-run the same instructions"
    assert "st.global" in ptx  # its result is used, so the compiler keeps the chain


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device here")
def test_the_flush_runs_the_eviction_kernel_and_says_so() -> None:
    from harness.measure.devices.cuda import CudaDevice
    dev = CudaDevice(0)
    dev.setup()
    with dev.stream():
        dev.flush_cache()
    dev.synchronize()
    what = dev.info()["flush"]["instruction_caches"]
    assert not what.startswith("not evicted"), what
    acts = dev.device_activities(lambda: dev.flush_cache())
    assert any("opbench_evict_code" in a.name for a in acts), [a.name for a in acts]


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device here")
def test_cupti_and_the_profiler_read_the_same_kernels_and_a_session_between_takes_nothing() -> None:
    """The same spin kernels through CUPTI directly and through torch.profiler read the same; after a
    torch.profiler session (which registers its own buffer callbacks and leaves CUPTI on the CPU's TSC)
    the direct records still all arrive, in ns (they read 2.1x on the H100 before `tracers.in_ns`)."""
    from harness.measure.devices.cuda import CudaDevice
    from harness.measure.devices.tracers import CuptiTracer, ProfilerTracer
    dev = CudaDevice(0)
    dev.setup()
    assert isinstance(dev.tracer(), CuptiTracer) and dev.info()["activity_source"].startswith("CUPTI activity API")

    def spins() -> None:
        with dev.stream():
            for _ in range(20):
                torch.cuda._sleep(20_000)
    medians = []
    for tracer in (dev.tracer(), ProfilerTracer("compared"), dev.tracer()):
        acts = tracer.trace(spins, dev.synchronize)
        assert len(acts) == 20 and all(a.is_marker for a in acts), [a.name for a in acts]
        medians.append(sorted(a.dur_us for a in acts)[10])
    assert max(medians) < 1.03 * min(medians), medians
