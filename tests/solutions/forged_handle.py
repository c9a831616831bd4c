"""Hands its output over in device memory but tells the parent it lies a terabyte past the start of
its allocation: the parent reads only inside the allocation the driver says the handle maps."""
from harness.execute import handoff

_export = handoff.export


def _forged(t):
    wire = _export(t)
    if wire is not None:
        wire["offset"] += 1 << 40
    return wire


handoff.export = _forged


def run(x, w):
    return x * w + 1.0
