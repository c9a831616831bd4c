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


def test_a_large_output_is_compared_in_chunks_with_the_same_verdicts() -> None:
    """Counts and maxima add up across chunks (CHUNK elements at a time): NaNs two chunks apart are
    both counted, the worst error is found in the last chunk, the fraction is over the whole tensor."""
    from harness.execute.correctness import CHUNK
    ref = torch.zeros(3 * CHUNK + 5)
    out = ref.clone()
    out[10], out[2 * CHUNK + 1] = float("nan"), float("inf")
    v = compare(["y"], [out], [ref], Tolerance(atol=1e-3, rtol=0.0))
    assert v.status == Status.INCORRECT_NUMERICAL and "1 NaN and 1 Inf" in v.message
    out = ref.clone()
    out[-1] = 0.5  # one bad element, in the last (partial) chunk
    v = compare(["y"], [out], [ref], Tolerance(atol=1e-3, rtol=0.0, max_mismatch=0.0))
    assert v.status == Status.INCORRECT_NUMERICAL and f"1 of {ref.numel()} elements" in v.message
    assert v.stats["max_abs_err"] == 0.5
    assert compare(["y"], [out], [ref], Tolerance(atol=1e-3, rtol=0.0, max_mismatch=1e-6)).status == Status.PASSED
    ref[CHUNK + 3] = float("nan")  # the reference's own NaN must be matched exactly, in any chunk
    out = ref.clone()
    assert compare(["y"], [out], [ref], Tolerance(atol=1e-3, rtol=0.0)).status == Status.PASSED
    out[CHUNK + 3] = 0.0
    v = compare(["y"], [out], [ref], Tolerance(atol=1e-3, rtol=0.0))
    assert v.status == Status.INCORRECT_NUMERICAL and "non-finite values differ" in v.message
