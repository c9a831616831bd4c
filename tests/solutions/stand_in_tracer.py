"""Hostile: swaps the CUDA device's activity tracer for one that reports each kernel a third as long.
The worker's guard holds the device's tracer by identity: TAMPERED at import."""
import gc

from harness.measure.devices.activities import Activity
from harness.measure.devices.cuda import CudaDevice


class _Third:
    def __init__(self, real):
        self.real, self.source = real, real.source

    def trace(self, run, synchronize):
        return [a if a.is_marker else Activity(a.name, a.stream, a.start_us, a.dur_us / 3)
                for a in self.real.trace(run, synchronize)]


for obj in gc.get_objects():
    if isinstance(obj, CudaDevice) and obj._tracer is not None:
        obj._tracer = _Third(obj._tracer)


def run(x, w):
    return x * w + 1.0
