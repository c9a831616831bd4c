"""Compare a solution's outputs with the reference's: structure, shape, dtype, NaN/Inf, tolerance.

Runs in the trusted parent process on CPU copies, so a solution cannot influence its own verdict.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import torch

from harness.execute.dtypes import fp4_to_float, is_packed_fp4, name_of
from harness.spec.model import Tolerance
from harness.results.trace import Status


@dataclass
class Verdict:
    status: Status
    message: str = ""
    stats: dict[str, float] = field(default_factory=dict)


def as_output_list(result: Any, names: list[str]) -> list[Any] | str:
    """A solution may return one tensor, a tuple/list in declaration order, or a dict by name."""
    if isinstance(result, dict):
        missing = [n for n in names if n not in result]
        if missing:
            return f"returned dict lacks output(s) {missing}"
        return [result[n] for n in names]
    if isinstance(result, (tuple, list)):
        if len(result) != len(names):
            return f"returned {len(result)} outputs, expected {len(names)} ({', '.join(names)})"
        return list(result)
    if len(names) != 1:
        return f"returned a single value, expected {len(names)} outputs ({', '.join(names)})"
    return [result]


# Elements compared at a time: on the host the float64 temporaries of a chunk take 8 MiB each, so
# comparing a 1 GiB output needs no more host memory than a small one (and reuses the same heap
# pages); on a device (outputs handed over in device memory) 128 MiB each, a few launches per chunk.
CHUNK = 1 << 20
DEVICE_CHUNK = 1 << 24


@dataclass
class _Errors:
    """What a floating-point comparison found, summed over chunks."""

    nan: int = 0               # NaN where the reference is finite
    inf: int = 0               # Inf where the reference is finite
    nonfinite_differ: bool = False  # where the reference is NaN/Inf, the solution is not the same
    finite: int = 0            # elements where the reference is finite: the tolerance's denominator
    over: int = 0              # of those, outside atol + rtol * |ref|
    max_abs: float = 0.0
    max_rel: float = 0.0


def _float_errors(out: torch.Tensor, ref: torch.Tensor, tol: Tolerance) -> _Errors:
    """Compare in CHUNK-sized slices, in float64 for 32/64-bit floats and float32 for 16-bit and
    smaller ones (exact there, half the memory traffic)."""
    work = torch.float64 if out.dtype in (torch.float32, torch.float64) else torch.float32
    o_all, r_all, e = out.reshape(-1), ref.reshape(-1), _Errors()
    step = CHUNK if out.device.type == "cpu" else DEVICE_CHUNK
    for i in range(0, o_all.numel(), step):
        o, r = o_all[i:i + step].to(work), r_all[i:i + step].to(work)
        r_fin = torch.isfinite(r)
        unexpected = ~torch.isfinite(o) & r_fin
        if bool(unexpected.any()):
            n_nan = int(torch.isnan(o[unexpected]).sum().item())
            e.nan, e.inf = e.nan + n_nan, e.inf + int(unexpected.sum().item()) - n_nan
            continue
        if not bool(r_fin.all()):
            both = ~r_fin  # where the reference itself is non-finite, the solution must match it exactly
            o_nf, r_nf = o[both], r[both]
            r_nan = torch.isnan(r_nf)  # NaN for NaN (a 0 there once passed: NaN was mapped to 0 on both sides)
            if not torch.equal(torch.isnan(o_nf), r_nan) or not torch.equal(o_nf[~r_nan], r_nf[~r_nan]):
                e.nonfinite_differ = True
            o, r = o[r_fin], r[r_fin]  # masked copies only when there is something to mask
        if not o.numel():
            continue
        r_abs = r.abs()
        diff = (o - r).abs()
        e.finite += diff.numel()
        e.over += int((diff > tol.atol + tol.rtol * r_abs).sum().item())
        e.max_abs = max(e.max_abs, diff.max().item())
        e.max_rel = max(e.max_rel, (diff / r_abs.clamp_min(1e-12)).max().item())
    return e


def compare(names: list[str], outputs: list[torch.Tensor], expected: list[torch.Tensor], tol: Tolerance) -> Verdict:
    worst: dict[str, float] = {"max_abs_err": 0.0, "max_rel_err": 0.0, "mismatch_fraction": 0.0}
    for name, out, ref in zip(names, outputs, expected):
        if not isinstance(out, torch.Tensor):
            return Verdict(Status.INVALID_OUTPUT, f"{name}: expected a tensor, got {type(out).__name__}")
        if tuple(out.shape) != tuple(ref.shape):
            return Verdict(Status.INCORRECT_SHAPE, f"{name}: shape {tuple(out.shape)}, expected {tuple(ref.shape)}")
        if out.dtype != ref.dtype:
            return Verdict(Status.INCORRECT_DTYPE, f"{name}: dtype {name_of(out.dtype)}, expected {name_of(ref.dtype)}")
        if out.numel() == 0:
            continue
        if out.device != ref.device:  # one side came through the pipe (a worker without IPC)
            out = out.to(ref.device)
        if is_packed_fp4(out.dtype):  # torch cannot compare or convert these: the values they encode
            out, ref = fp4_to_float(out), fp4_to_float(ref)
        if not out.is_floating_point():
            bad = (out != ref).sum().item()
            frac = bad / out.numel()
            worst["mismatch_fraction"] = max(worst["mismatch_fraction"], frac)
            if frac > tol.max_mismatch:
                return Verdict(Status.INCORRECT_NUMERICAL, f"{name}: {bad} of {out.numel()} elements differ", worst)
            continue
        err = _float_errors(out, ref, tol)
        if err.nan or err.inf:
            return Verdict(Status.INCORRECT_NUMERICAL,
                           f"{name}: {err.nan} NaN and {err.inf} Inf where the reference is finite", worst)
        if err.nonfinite_differ:
            return Verdict(Status.INCORRECT_NUMERICAL, f"{name}: non-finite values differ from the reference", worst)
        frac = err.over / max(err.finite, 1)
        worst["max_abs_err"] = max(worst["max_abs_err"], err.max_abs)
        worst["max_rel_err"] = max(worst["max_rel_err"], err.max_rel)
        worst["mismatch_fraction"] = max(worst["mismatch_fraction"], frac)
        if tol.max_error_cap is not None and err.max_abs > tol.max_error_cap:
            return Verdict(Status.INCORRECT_NUMERICAL, f"{name}: max abs err {err.max_abs:.3g} is over the cap "
                           f"{tol.max_error_cap:g}", worst)
        if frac > tol.max_mismatch:
            return Verdict(Status.INCORRECT_NUMERICAL,
                           f"{name}: {err.over} of {err.finite} elements outside atol={tol.atol:g} rtol={tol.rtol:g} "
                           f"(max abs err {worst['max_abs_err']:.3g}, allowed mismatch {tol.max_mismatch:g})", worst)
    return Verdict(Status.PASSED, "", worst)
