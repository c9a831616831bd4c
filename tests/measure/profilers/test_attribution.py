"""The kernel-name rule and splitting launches into per-call samples."""
from __future__ import annotations

import pytest

from harness.measure.profilers import AttributionError, KernelRecord, attribute, kernel_matches


def test_name_rule() -> None:
    assert kernel_matches("rmsnorm", ["rmsnorm"]) == "rmsnorm"
    assert kernel_matches("rmsnorm_kernel", ["rmsnorm"]) == "rmsnorm"
    assert kernel_matches("rmsnorm_kernel_0", ["rmsnorm"]) is None  # no prefix matching
    assert kernel_matches("fused_rmsnorm", ["rmsnorm"]) is None
    assert kernel_matches("b_kernel", ["a", "b"]) == "b"


def _call(t: float, parts: list[tuple[str, float]]) -> list[KernelRecord]:
    return [KernelRecord(name, dur, start_us=t + i) for i, (name, dur) in enumerate(parts)]


def test_two_kernels_per_call_are_summed_per_call() -> None:
    rows = []
    for c in range(4):
        rows += _call(c * 100.0, [("flush", 50.0), ("fwd_kernel", 10.0 + c), ("reduce", 2.0)])
    att = attribute(list(reversed(rows)), ["fwd", "reduce"], calls=4, skip=1)  # order restored by start time
    assert att.per_call == 2
    assert att.samples_ms == pytest.approx([0.013, 0.014, 0.015])
    assert att.kernels == {"fwd_kernel": 3, "reduce": 3} and att.missing == []
    assert "fwd_kernel x3" in att.describe()


def test_a_named_kernel_that_never_ran_is_reported_missing() -> None:
    rows = [r for c in range(3) for r in _call(c * 10.0, [("fwd", 1.0)])]
    att = attribute(rows, ["fwd", "bwd"], calls=3)
    assert att.missing == ["bwd"]


def test_errors() -> None:
    rows = _call(0.0, [("x", 1.0)])
    with pytest.raises(AttributionError, match="names no kernels"):
        attribute(rows, [], calls=1)
    with pytest.raises(AttributionError, match="more calls"):
        attribute(rows, ["x"], calls=2, skip=2)
    with pytest.raises(AttributionError, match="no kernel named y"):
        attribute(rows, ["y"], calls=1)
