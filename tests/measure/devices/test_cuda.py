"""The CUDA device's cold-cache flush: the instruction-cache eviction kernel (PTX on any machine; the
kernel itself where a GPU is)."""
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
