"""The Device interface contract as plain checks, so they run under pytest here and as a script on
a machine without pytest (`python tests/measure/devices/device_contract.py cuda` on the H200).

Each check takes a set-up device and raises AssertionError with a message when the contract is broken.
"""
from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Callable

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from harness.measure.devices import Device, Peak, device_class, make_device  # noqa: E402
from harness.spec.model import BenchConfig  # noqa: E402
from harness.measure.timing import Sampler  # noqa: E402


def _busy(device: Device) -> Callable[[], torch.Tensor]:
    """Work whose device time is clearly non-zero: a 1024^2 matmul (a few ms on a CPU core)."""
    a = torch.randn(1024, 1024, device=device.torch_device)
    return lambda: a @ a


def check_identity(device: Device) -> None:
    ok, why = type(device).available()
    assert ok is True and why == "", (ok, why)
    info = device.info()
    assert info.get("kind") == device.kind, info
    assert isinstance(info.get("name"), str) and info["name"], f"info() has no name: {info}"
    assert device.torch_device.type == device.kind, device.torch_device


def check_events(device: Device) -> None:
    fn = _busy(device)
    with device.stream():
        fn()
        device.synchronize()
        start, end = device.event(), device.event()
        start.record()
        for _ in range(3):
            fn()
        end.record()
        device.synchronize()
    ms = start.elapsed_ms(end)
    assert isinstance(ms, float) and ms > 0.0, f"elapsed {ms!r} ms for 3 matmuls"


def check_events_see_device_time(device: Device) -> None:
    """An event pair around more work measures more time (events time the device, not the host call)."""
    fn = _busy(device)

    def measure(n: int) -> float:
        with device.stream():
            device.synchronize()
            s, e = device.event(), device.event()
            s.record()
            for _ in range(n):
                fn()
            e.record()
            device.synchronize()
        return s.elapsed_ms(e)

    measure(1)
    one, eight = min(measure(1) for _ in range(3)), min(measure(8) for _ in range(3))
    assert eight > 3 * one, f"8 calls took {eight:.3f} ms, 1 call {one:.3f} ms"


def check_cache_and_hold(device: Device) -> None:
    l2 = device.l2_bytes()
    assert isinstance(l2, int) and l2 >= 1024 * 1024, l2
    with device.stream():
        device.flush_cache()
        device.hold(50.0)
        device.synchronize()


def check_limits_and_clocks(device: Device) -> None:
    peak = device.peak()
    assert isinstance(peak, Peak)
    assert peak.bytes_per_s is None or peak.bytes_per_s > 1e9
    clocks = device.clocks()
    assert isinstance(clocks, dict) and all(isinstance(v, float) for v in clocks.values()), clocks


def check_graphs(device: Device) -> None:
    assert isinstance(device.supports_graphs(), bool)
    if not device.supports_graphs():
        return
    x = torch.ones(1024, device=device.torch_device)
    with device.stream():
        replay = device.capture_graph(lambda: x.mul_(1.0), 4)
        replay()
        device.synchronize()


def check_activities(device: Device) -> None:
    """Optional activity tracing: None where the device has none, else records of the work it ran."""
    if not hasattr(device, "device_activities"):
        return
    fn = _busy(device)
    with device.stream():
        acts = device.device_activities(lambda: (fn(), device.mark()))
    assert acts is None or (isinstance(acts, list) and acts), f"device_activities returned {acts!r}"


def check_memory_error(device: Device) -> None:
    assert device.memory_error(torch.OutOfMemoryError("out of memory"))
    assert not device.memory_error(ValueError("bad shape"))


def check_sampler(device: Device) -> None:
    """The harness timing protocol runs on this device and yields positive samples."""
    cfg = BenchConfig(warmup_ms=0, warmup_count=1, cache="cold")
    sampler = Sampler(device, [_busy(device)], cfg)
    sampler.warmup()
    samples = sampler.chunk(3)
    assert len(samples) == 3 and all(s > 0 for s in samples), samples
    check = sampler.hidden_work_check(reps=2, tries=1)  # a device that queues work is measured: else TAMPERED
    assert ("hidden_ms" in check) == device.queues_work, check


CHECKS = [check_identity, check_events, check_events_see_device_time, check_cache_and_hold,
          check_limits_and_clocks, check_graphs, check_activities, check_memory_error, check_sampler]


def main(kinds: list[str]) -> int:
    failed = 0
    for kind in kinds:
        ok, why = device_class(kind).available()
        if not ok:
            print(f"{kind}: SKIPPED ({why})")
            continue
        device = make_device(kind)
        device.setup()
        print(f"{kind}: {device.info()}")
        for check in CHECKS:
            t0 = time.perf_counter()
            try:
                check(device)
                print(f"  PASS {check.__name__} ({(time.perf_counter() - t0) * 1e3:.0f} ms)")
            except Exception as exc:
                failed += 1
                print(f"  FAIL {check.__name__}: {type(exc).__name__}: {exc}")
        print(f"  clocks: {device.clocks()}  peak: {device.peak()}")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:] or ["cpu", "cuda", "npu"]))
