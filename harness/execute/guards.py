"""Anti-cheat checks that must run next to the solution (inside its worker process).

- Tamper: the timing and checking functions are the ones captured before the solution's code was
  imported (catches a monkey-patched Event.elapsed_time, perf_counter, synchronize, allclose...).
- Threads: no thread started since the solution was imported may outlive its calls (work hidden
  from the timer); however it is named, whatever its target claims to be.
- Modes: no torch function or dispatch mode may be active around a call (it would run code on every
  torch call, where an output can be computed only when the harness reads it).
- Inputs: byte-identical after the call (in-place writes into inputs are a cheat and a bug).
- Outputs: exactly `torch.Tensor` (no subclass), not sharing memory with an input or with an
  earlier output still alive (a cached result handed back again).
"""
from __future__ import annotations

import math
import os
import sys
import sysconfig
import threading
import time
from typing import Any, Iterable

import torch
from torch.utils._device import DeviceContext


def _watched() -> dict[str, Any]:
    out: dict[str, Any] = {
        "time.perf_counter": time.perf_counter, "time.perf_counter_ns": time.perf_counter_ns,
        "time.time": time.time, "time.time_ns": time.time_ns, "torch.allclose": torch.allclose, "torch.equal": torch.equal,
        "torch.isclose": torch.isclose, "torch.Tensor.clone": torch.Tensor.clone,
        "torch.Tensor.copy_": torch.Tensor.copy_, "torch.save": torch.save,
        "torch.utils._device.DeviceContext.__torch_function__": DeviceContext.__torch_function__,
    }
    if hasattr(torch, "cuda"):
        out.update({"torch.cuda.synchronize": torch.cuda.synchronize,
                    "torch.cuda.Event.record": torch.cuda.Event.record,
                    "torch.cuda.Event.elapsed_time": torch.cuda.Event.elapsed_time,
                    "torch.cuda.Event.synchronize": torch.cuda.Event.synchronize,
                    "torch.cuda.stream": torch.cuda.stream, "torch.cuda.current_stream": torch.cuda.current_stream})
    npu = getattr(torch, "npu", None)
    if npu is not None:
        out.update({"torch.npu.synchronize": npu.synchronize, "torch.npu.Event.elapsed_time": npu.Event.elapsed_time})
    return out


class TamperGuard:
    """Captures the identities of timing/checking functions; `check()` names any that changed."""

    def __init__(self, extra: dict[str, Any] | None = None):
        self.watched = _watched()
        self.extra = dict(extra or {})
        self.threads = {t.ident for t in threading.enumerate()}
        self.library = _library_dirs()  # where an idle thread's code may be (captured before the solution ran)

    def add(self, name: str, obj: Any, attr: str) -> None:
        self.extra[name] = (obj, attr, getattr(obj, attr))

    def check(self) -> str | None:
        now = _watched()
        changed = [k for k, v in self.watched.items() if now.get(k) is not v]
        changed += [k for k, (obj, attr, v) in self.extra.items() if getattr(obj, attr, None) is not v]
        if changed:
            return "patched harness/timer functions: " + ", ".join(sorted(changed))
        return None

    def after_call(self) -> str | None:
        """Every check that follows solution code: patched functions, threads at work, active modes."""
        return self.check() or self.stray_threads() or self.modes()

    def stray_threads(self, settle_s: float = 0.05, cpu_ms: float = 5.0) -> str | None:
        """Threads started since the guard was made (before the solution's import) that are at work
        after a call: judged by what they do over `settle_s`, never by their name or their target's
        module, which a solution can set. A thread is idle (torch.compile's pools, tqdm's monitor) when
        every frame on its stack is library code (the standard library, site-packages) and it uses
        under `cpu_ms` of CPU; one anywhere in the solution's own code (a pool's work item waiting
        on an event included), or burning CPU, is at work."""
        threads = [t for t in threading.enumerate() if t.ident not in self.threads and t.is_alive()]
        if not threads:
            return None
        before = {t.ident: _cpu_ns(t) for t in threads}
        time.sleep(settle_s)
        frames = sys._current_frames()
        busy = []
        for t in threading.enumerate():
            if t.ident in self.threads or not t.is_alive():
                continue
            frame, used = frames.get(t.ident), _cpu_ns(t)
            start = before.get(t.ident)
            burning = start is None or (used is not None and used - start > cpu_ms * 1e6)
            if burning or frame is None or not self._library_stack(frame):
                busy.append(t)
        if busy:
            return "threads left running after the call: " + ", ".join(t.name for t in busy)
        return None

    def _library_stack(self, frame: Any) -> bool:
        while frame is not None:
            if not frame.f_code.co_filename.startswith(self.library):
                return False
            frame = frame.f_back
        return True

    def modes(self) -> str | None:
        """Torch function or dispatch modes active now (the harness calls this around every call).
        Only the default-device mode (`torch.set_default_device`) is allowed, by exact type."""
        from torch.overrides import _get_current_function_mode_stack
        from torch.utils._python_dispatch import _get_current_dispatch_mode_stack
        active = [m for m in _get_current_function_mode_stack() if type(m) is not DeviceContext]
        active += list(_get_current_dispatch_mode_stack())
        if active:
            return "torch modes active around the call: " + ", ".join(type(m).__qualname__ for m in active)
        return None


def _library_dirs() -> tuple[str, ...]:
    """The standard library and site-packages: code a worker's own uid cannot write."""
    paths = sysconfig.get_paths()
    return tuple(sorted({os.path.join(paths[k], "") for k in ("stdlib", "platstdlib", "purelib", "platlib")}))


def _cpu_ns(t: threading.Thread) -> int | None:
    """CPU time a thread has used, in ns (Linux schedstat), or None where it cannot be read."""
    try:
        return int(open(f"/proc/self/task/{t.native_id}/schedstat").read().split()[0])
    except (OSError, ValueError, IndexError, TypeError):
        return None


def snapshot(values: Iterable[Any]) -> list[Any]:
    return [v.detach().clone() if isinstance(v, torch.Tensor) else v for v in values]


def mutated_inputs(names: list[str], before: list[Any], after: list[Any]) -> list[str]:
    """Names of tensor inputs whose bytes changed (bitwise, so NaN inputs compare equal to themselves)."""
    return [name for name, b, a in zip(names, before, after)
            if isinstance(a, torch.Tensor) and (a.shape != b.shape or a.dtype != b.dtype or not torch.equal(_bits(a), _bits(b)))]


def _bits(t: torch.Tensor) -> torch.Tensor:
    return t.reshape(-1).contiguous().view(torch.uint8)


def output_problems(outputs: list[Any], inputs: list[Any], earlier: list[torch.Tensor],
                    device: torch.device) -> str | None:
    """Why the returned outputs are not fresh tensors on `device`, or None when they are (disjoint views
    of one new tensor are fresh). Judged by the device addresses each output reaches, not by which
    storage object it claims: a tensor rebuilt inside another's memory (`torch.from_dlpack` of a
    slice, `torch::from_blob`) has a storage of its own that starts there."""
    held = [t for t in inputs if isinstance(t, torch.Tensor) and t.numel() > 0 and t.device == device]
    in_memory = [_allocation(t) for t in held]
    old_memory = [_allocation(t) for t in earlier if t.numel() > 0 and t.device == device]
    seen: list[torch.Tensor] = []
    for i, out in enumerate(outputs):
        if type(out) is not torch.Tensor:
            return f"output {i} is {type(out).__module__}.{type(out).__qualname__}, expected exactly torch.Tensor"
        if out.device.type != device.type:
            return f"output {i} is on {out.device.type}, expected {device.type} (the harness times the device)"
        if out.numel() == 0:
            continue
        lo, hi = _reach(out)
        if any(a < hi and lo < b for a, b in in_memory):
            return f"output {i} shares memory with an input"
        if any(a < hi and lo < b for a, b in old_memory):
            return f"output {i} reuses the memory of an earlier call's output (cached result)"
        # disjoint views of one result are a result (SOL-ExecBench's L2/030 splits one matmul in two);
        # two outputs on the same bytes are not two results
        near = [t for t in seen if _reach(t)[0] < hi and lo < _reach(t)[1]]
        if near and _shares_bytes(out, near):
            return f"output {i} overlaps another output's memory"
        seen.append(out)
    return None


def _allocation(t: torch.Tensor) -> tuple[int, int]:
    """The device addresses of `t`'s whole storage, [first, past the last)."""
    storage = t.untyped_storage()
    return storage.data_ptr(), storage.data_ptr() + storage.nbytes()


def _reach(t: torch.Tensor) -> tuple[int, int]:
    """The device addresses a view of `t`'s shape and strides can reach, [first, past the last)."""
    lo, hi = _extent(t)
    base = t.untyped_storage().data_ptr()
    return base + lo, base + hi


MAX_RUNS = 1 << 22  # contiguous runs listed on the host before the element-marking fallback is used
MAX_MARKS = 1 << 30  # elements the fallback marks (one byte each, on the outputs' device)


def _shares_bytes(t: torch.Tensor, others: list[torch.Tensor]) -> bool:
    """Whether `t` touches a byte of `others` (views of its storage whose spans meet its own), exactly:
    chunks along an inner dimension (L1/035's six, L2/030's two halves of a batched result) interleave
    their spans without sharing a byte. From the views' shapes and strides alone: each is a list of
    contiguous byte runs, and sorted runs of two views meet or not. A view of too many runs (a transposed
    one) has its elements marked in a scratch instead; past that, too large to tell, it counts as shared."""
    views = [*others, t]
    runs = [_runs(v) + v.untyped_storage().data_ptr() for v in views]  # device addresses
    if sum(len(r) for r in runs) <= MAX_RUNS:
        starts = torch.cat([r[:, 0] for r in runs])
        ends = torch.cat([r[:, 1] for r in runs])
        owner = torch.cat([torch.full((len(r),), k) for k, r in enumerate(runs)])
        order = torch.argsort(starts, stable=True)
        starts, ends, owner = starts[order], ends[order], owner[order]
        # a run that starts before the furthest end of the runs before it, where that end is another
        # view's: they share bytes (the first such pair in start order is always caught this way)
        top, at = torch.cummax(ends, dim=0)
        shared = (starts[1:] < top[:-1]) & (owner[1:] != owner[at[:-1]])
        return bool(shared.any())
    unit = math.gcd(*(v.element_size() for v in views))
    spans = [_reach(v) for v in views]
    base, top = min(a for a, _ in spans), max(b for _, b in spans)
    if (top - base) // unit > MAX_MARKS or any((a - base) % unit for a, _ in spans):
        return True
    marks = torch.zeros((top - base) // unit, dtype=torch.uint8, device=t.device)
    for k, (v, (a, b)) in enumerate(zip(views, spans)):
        per = v.element_size() // unit
        region = marks.as_strided((*v.shape, per), (*(st * per for st in v.stride()), 1), (a - base) // unit)
        if k == len(views) - 1:
            return bool(region.any())
        if torch._debug_has_internal_overlap(region) != 1:  # 0: none, 2: too costly to tell (strided)
            region.fill_(1)
        else:  # a view that repeats its own elements (expand): its whole span, which can only over-report
            marks[(a - base) // unit:(b - base) // unit] = 1
    return False


def _runs(t: torch.Tensor) -> torch.Tensor:
    """[start, end) byte offsets in its storage of the contiguous runs `t` covers, one row each (on the
    host, from shape and strides: no data is read). Empty when there are more than MAX_RUNS."""
    size = t.element_size()
    dims = [(n, st) for n, st in zip(t.shape, t.stride()) if n != 1]
    block = 1  # elements in one run: the innermost dimensions that follow each other in memory
    while dims and dims[-1][1] == block:
        block *= dims.pop()[0]
    count = math.prod(n for n, _ in dims)
    if count > MAX_RUNS:
        return torch.empty(MAX_RUNS + 1, 2, dtype=torch.int64)
    starts = torch.tensor([t.storage_offset()], dtype=torch.int64)
    for n, st in dims:
        starts = (starts[:, None] + torch.arange(n, dtype=torch.int64) * st).reshape(-1)
    return torch.stack([starts * size, (starts + block) * size], dim=1)


def _extent(t: torch.Tensor) -> tuple[int, int]:
    """The bytes of its storage `t` can reach, [first, past the last): a strided view's whole span."""
    first = t.storage_offset() * t.element_size()
    last = t.storage_offset() + sum((n - 1) * abs(st) for n, st in zip(t.shape, t.stride()))
    return first, (last + 1) * t.element_size()
