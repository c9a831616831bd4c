"""Compare a solution's outputs with the reference's: structure, shape, dtype, NaN/Inf, tolerance.

Runs in the trusted parent process on CPU copies, so a solution cannot influence its own verdict.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import torch

from harness.execute.dtypes import name_of
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
        if not out.is_floating_point():
            bad = (out != ref).sum().item()
            frac = bad / out.numel()
            worst["mismatch_fraction"] = max(worst["mismatch_fraction"], frac)
            if frac > tol.max_mismatch:
                return Verdict(Status.INCORRECT_NUMERICAL, f"{name}: {bad} of {out.numel()} elements differ", worst)
            continue
        # 16-bit floats are exact in float32 (half the memory traffic of float64 on big outputs)
        work = torch.float64 if out.dtype in (torch.float32, torch.float64) else torch.float32
        o, r = out.to(work), ref.to(work)
        r_fin = torch.isfinite(r)
        unexpected = ~torch.isfinite(o) & r_fin
        if bool(unexpected.any()):
            n_nan = torch.isnan(o[unexpected]).sum().item()
            n_inf = unexpected.sum().item() - n_nan
            return Verdict(Status.INCORRECT_NUMERICAL, f"{name}: {n_nan} NaN and {n_inf} Inf where the reference is finite", worst)
        if not bool(r_fin.all()):
            # Where the reference itself is non-finite, the solution must match it exactly (same NaN/Inf).
            both = ~r_fin
            if not torch.equal(torch.nan_to_num(o[both], nan=0.0), torch.nan_to_num(r[both], nan=0.0)):
                return Verdict(Status.INCORRECT_NUMERICAL, f"{name}: non-finite values differ from the reference", worst)
            o, r = o[r_fin], r[r_fin]  # masked copies only when there is something to mask
        r_abs = r.abs()
        diff = (o - r).abs()
        over = diff > tol.atol + tol.rtol * r_abs
        frac = over.sum().item() / max(diff.numel(), 1)
        worst["max_abs_err"] = max(worst["max_abs_err"], diff.max().item() if diff.numel() else 0.0)
        rel = diff / r_abs.clamp_min(1e-12)
        worst["max_rel_err"] = max(worst["max_rel_err"], rel.max().item() if rel.numel() else 0.0)
        worst["mismatch_fraction"] = max(worst["mismatch_fraction"], frac)
        if frac > tol.max_mismatch:
            return Verdict(Status.INCORRECT_NUMERICAL,
                           f"{name}: {over.sum().item()} of {diff.numel()} elements outside atol={tol.atol:g} rtol={tol.rtol:g} "
                           f"(max abs err {worst['max_abs_err']:.3g}, allowed mismatch {tol.max_mismatch:g})", worst)
    return Verdict(Status.PASSED, "", worst)
