"""The in-worker guards on their own: threads are judged by what they are doing, modes by type."""
from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import torch
from torch.overrides import TorchFunctionMode

from harness.execute.guards import TamperGuard


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
