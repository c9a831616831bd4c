"""The in-worker guards on their own: threads are judged by what they are doing, modes by type."""
from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
import torch
from torch.overrides import TorchFunctionMode

from harness.execute import guards
from harness.execute.guards import TamperGuard, output_problems


def test_an_idle_pool_thread_is_left_alone_and_a_busy_one_is_not() -> None:
    guard = TamperGuard()
    pool = ThreadPoolExecutor(1)
    release = threading.Event()
    try:
        pool.submit(int).result()  # the pool's thread now waits for work, as torch.compile's does
        assert guard.stray_threads() is None
        pool.submit(lambda: release.wait(30))  # a work item of the solution's, waiting: at work
        assert "ThreadPoolExecutor" in (guard.stray_threads() or "")
    finally:
        release.set()
        pool.shutdown(wait=True)


def test_a_library_thread_burning_cpu_is_at_work() -> None:
    guard = TamperGuard()
    stop = threading.Event()
    t = threading.Thread(target=sum, args=(iter(stop.is_set, True),), name="spinner")  # sums False until set
    t.start()  # all its frames are the standard library's; its CPU time gives it away
    try:
        assert "spinner" in (guard.stray_threads() or "")
    finally:
        stop.set()
        t.join()


def test_a_thread_claiming_a_library_module_is_still_a_stray() -> None:
    guard = TamperGuard()
    stop = threading.Event()

    def work() -> None:
        stop.wait(30)
    work.__module__ = "torch.utils.data"
    t = threading.Thread(target=work, name="pin_memory")
    t.start()
    try:
        assert "pin_memory" in (guard.stray_threads() or "")
    finally:
        stop.set()
        t.join()
    assert guard.stray_threads() is None


def test_modes_around_a_call_are_named_except_the_default_device() -> None:
    guard = TamperGuard()
    assert guard.modes() is None
    with torch.device("cpu"):  # torch.set_default_device's mode, by exact type
        assert guard.modes() is None

    class Lazy(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            return func(*args, **(kwargs or {}))
    with Lazy():
        assert "Lazy" in (guard.modes() or "")
    assert guard.modes() is None


def test_outputs_may_be_interleaved_views_of_one_result_but_not_share_a_byte() -> None:
    """Chunks along an inner dimension interleave their spans without sharing a byte (SOL-ExecBench's
    L1/035 returns six such chunks, L2/030 two halves of a batched result: both were REWARD_HACK on the
    H100, 2026-12-06, from a span test); views that share a byte are one result handed out twice."""
    cpu = torch.device("cpu")
    y = torch.arange(4 * 12, dtype=torch.float32).reshape(4, 12)
    assert output_problems(list(y.chunk(6, dim=1)), [], [], cpu) is None
    batched = torch.zeros(2, 5, 3)
    assert output_problems([batched[:, :2], batched[:, 2:]], [], [], cpu) is None
    assert output_problems([y.view(torch.int16)[:, :5], y[:, 3:]], [], [], cpu) is None  # other item sizes
    assert "overlaps another output" in output_problems([y[:, :3], y[:, 2:]], [], [], cpu)
    assert "overlaps another output" in output_problems([y, y.t()], [], [], cpu)
    assert "overlaps another output" in output_problems([y[:, 0], y[0].expand(4, 12)], [], [], cpu)
    assert output_problems([y.t()[:, :2], y.t()[:, 2:]], [], [], cpu) is None  # transposed: one run per element


def test_views_of_too_many_runs_have_their_elements_marked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(guards, "MAX_RUNS", 2)
    cpu = torch.device("cpu")
    y = torch.zeros(4, 12)
    assert output_problems(list(y.chunk(6, dim=1)), [], [], cpu) is None
    assert "overlaps another output" in output_problems([y[:, :3], y[:, 2:]], [], [], cpu)
    monkeypatch.setattr(guards, "MAX_MARKS", 8)  # and past that, too large to tell: counted as shared
    assert "overlaps another output" in output_problems(list(y.chunk(6, dim=1)), [], [], cpu)


def test_a_tensor_rebuilt_inside_another_ones_memory_is_judged_by_its_addresses() -> None:
    """`torch.from_dlpack` of a slice (or C++'s `torch::from_blob`) makes a storage of its own that starts
    inside another tensor's memory: compared by storage object, it shared nothing with anything."""
    cpu = torch.device("cpu")
    buf, x, old = torch.zeros(17), torch.zeros(17), torch.zeros(17)
    assert "overlaps another output" in output_problems([buf[1:], torch.from_dlpack(buf[1:])], [], [], cpu)
    assert "shares memory with an input" in output_problems([torch.from_dlpack(x[1:])], [x], [], cpu)
    assert "earlier call's output" in output_problems([torch.from_dlpack(old[1:])], [], [old], cpu)
    assert output_problems([torch.from_dlpack(buf[:8]), torch.from_dlpack(buf[8:])], [], [], cpu) is None
