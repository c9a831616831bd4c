"""Anti-cheat checks that must run next to the solution (inside its worker process).

- Tamper: the timing and checking functions are the ones captured before the solution's code was
  imported (catches a monkey-patched Event.elapsed_time, perf_counter, synchronize, allclose...).
- Threads: no thread the solution started may outlive its calls (work hidden from the timer).
- Inputs: byte-identical after the call (in-place writes into inputs are a cheat and a bug).
- Outputs: exactly `torch.Tensor` (no subclass), not sharing memory with an input or with an
  earlier output still alive (a cached result handed back again).
"""
from __future__ import annotations

import threading
import time
from typing import Any, Iterable

import torch


def _watched() -> dict[str, Any]:
    out: dict[str, Any] = {
        "time.perf_counter": time.perf_counter, "time.perf_counter_ns": time.perf_counter_ns,
        "time.time": time.time, "torch.allclose": torch.allclose, "torch.equal": torch.equal,
        "torch.isclose": torch.isclose, "torch.Tensor.clone": torch.Tensor.clone,
        "torch.Tensor.copy_": torch.Tensor.copy_, "torch.save": torch.save,
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

    def add(self, name: str, obj: Any, attr: str) -> None:
        self.extra[name] = (obj, attr, getattr(obj, attr))

    def check(self) -> str | None:
        now = _watched()
        changed = [k for k, v in self.watched.items() if now.get(k) is not v]
        changed += [k for k, (obj, attr, v) in self.extra.items() if getattr(obj, attr, None) is not v]
        if changed:
            return "patched harness/timer functions: " + ", ".join(sorted(changed))
        return None

    def stray_threads(self) -> str | None:
        """Threads started since the guard was made that are still running."""
        extra = [t for t in threading.enumerate() if t.ident not in self.threads and t.is_alive()]
        extra = [t for t in extra if not _library_thread(t)]
        if extra:
            return "threads left running after the call: " + ", ".join(t.name for t in extra)
        return None


def _library_thread(t: threading.Thread) -> bool:
    target = getattr(t, "_target", None)
    module = getattr(target, "__module__", "") or ""
    return module.split(".")[0] in {"torch", "triton", "concurrent", "multiprocessing", "tilelang"}


def snapshot(values: Iterable[Any]) -> list[Any]:
    return [v.detach().clone() if isinstance(v, torch.Tensor) else v for v in values]


def mutated_inputs(names: list[str], before: list[Any], after: list[Any]) -> list[str]:
    """Names of tensor inputs whose bytes changed (bitwise, so NaN inputs compare equal to themselves)."""
    return [name for name, b, a in zip(names, before, after)
            if isinstance(a, torch.Tensor) and (a.shape != b.shape or a.dtype != b.dtype or not torch.equal(_bits(a), _bits(b)))]


def _bits(t: torch.Tensor) -> torch.Tensor:
    return t.reshape(-1).contiguous().view(torch.uint8)


def _storage_ptr(t: torch.Tensor) -> int:
    return t.untyped_storage().data_ptr()


def output_problems(outputs: list[Any], inputs: list[Any], earlier: list[torch.Tensor]) -> str | None:
    """Why the returned outputs are not fresh tensors, or None when they are."""
    in_ptrs = {_storage_ptr(t) for t in inputs if isinstance(t, torch.Tensor) and t.numel() > 0}
    old_ptrs = {_storage_ptr(t) for t in earlier if t.numel() > 0}
    seen: set[int] = set()
    for i, out in enumerate(outputs):
        if type(out) is not torch.Tensor:
            return f"output {i} is {type(out).__module__}.{type(out).__qualname__}, expected exactly torch.Tensor"
        if out.numel() == 0:
            continue
        ptr = _storage_ptr(out)
        if ptr in in_ptrs:
            return f"output {i} shares memory with an input"
        if ptr in old_ptrs:
            return f"output {i} reuses the memory of an earlier call's output (cached result)"
        if ptr in seen:
            return f"output {i} shares memory with another output"
        seen.add(ptr)
    return None
