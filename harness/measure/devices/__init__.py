"""Device kinds behind one interface; `make_device` is the only place that maps a name to a class."""
from __future__ import annotations

from harness.measure.devices.base import Device, Event, Peak

KINDS = ("cpu", "cuda", "npu")


def device_class(kind: str) -> type[Device]:
    if kind == "cpu":
        from harness.measure.devices.cpu import CpuDevice
        return CpuDevice
    if kind == "cuda":
        from harness.measure.devices.cuda import CudaDevice
        return CudaDevice
    if kind == "npu":
        from harness.measure.devices.npu import NpuDevice
        return NpuDevice
    raise ValueError(f"unknown device kind {kind!r}; expected one of {KINDS}")


def make_device(kind: str, index: int = 0) -> Device:
    return device_class(kind)(index)


def detect_kind() -> str:
    """The best device this process can use: cuda, then npu, then the CPU."""
    for kind in ("cuda", "npu"):
        ok, _ = device_class(kind).available()
        if ok:
            return kind
    return "cpu"


__all__ = ["Device", "Event", "Peak", "KINDS", "device_class", "make_device", "detect_kind"]
