"""Hostile: replaces the hidden-work probe in its own worker with one that reports nothing hidden (or
only part of a measurement, which the parent could not read). The probe is on the watched timing path:
TAMPERED, and a partial report would be a malformed reply, never a crash of the parent."""
import sys

sys.modules["harness.measure.timing"].Sampler.hidden_work_check = lambda self, *a, **k: {"hidden_ms": 0.0}


def run(x, w):
    return x * w + 1.0
