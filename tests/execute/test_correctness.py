"""Output comparison: structure, shape, dtype, NaN/Inf and tolerance with an allowed mismatch fraction."""
from __future__ import annotations

import torch

from harness.execute.correctness import as_output_list, compare
from harness.spec.model import Tolerance
from harness.results.trace import Status

TOL = Tolerance(atol=1e-3, rtol=1e-3)


def test_passes_within_tolerance() -> None:
    ref = torch.randn(100)
    v = compare(["y"], [ref + 1e-4], [ref], TOL)
    assert v.status == Status.PASSED and v.stats["max_abs_err"] <= 1.1e-4


def test_shape_dtype_and_values() -> None:
    ref = torch.zeros(4)
    assert compare(["y"], [torch.zeros(5)], [ref], TOL).status == Status.INCORRECT_SHAPE
    assert compare(["y"], [torch.zeros(4, dtype=torch.float16)], [ref], TOL).status == Status.INCORRECT_DTYPE
    assert compare(["y"], [torch.ones(4)], [ref], TOL).status == Status.INCORRECT_NUMERICAL


def test_nan_and_inf_are_caught_but_matching_nan_is_fine() -> None:
    ref = torch.tensor([1.0, float("nan"), 3.0])
    out = torch.tensor([1.0, float("nan"), float("inf")])
    v = compare(["y"], [out], [ref], TOL)
    assert v.status == Status.INCORRECT_NUMERICAL and "1 Inf" in v.message
    assert compare(["y"], [ref.clone()], [ref], TOL).status == Status.PASSED


def test_mismatch_fraction_allows_a_few_outliers() -> None:
    ref = torch.zeros(1000)
    out = ref.clone()
    out[:5] = 1.0
    assert compare(["y"], [out], [ref], TOL).status == Status.INCORRECT_NUMERICAL
    assert compare(["y"], [out], [ref], Tolerance(1e-3, 1e-3, max_mismatch=0.01)).status == Status.PASSED


def test_integer_outputs_compare_exactly() -> None:
    ref = torch.arange(10)
    assert compare(["i"], [ref.clone()], [ref], TOL).status == Status.PASSED
    assert compare(["i"], [ref + 1], [ref], TOL).status == Status.INCORRECT_NUMERICAL


def test_output_structures() -> None:
    t = torch.zeros(1)
    assert as_output_list(t, ["y"]) == [t]
    assert as_output_list({"y": t}, ["y"]) == [t]
    assert as_output_list((t, t), ["a", "b"]) == [t, t]
    assert "expected 2" in as_output_list(t, ["a", "b"])
    assert "lacks" in as_output_list({"z": t}, ["y"])
