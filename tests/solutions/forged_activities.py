"""Hostile: replaces the function that turns CUPTI kernel records into per-call times (and the
sampler step around the call) with versions that report a third. Every function on the path from a
sample to the reply is watched: TAMPERED at import."""
import harness.measure.timing as timing

_real = timing.call_times_us
timing.call_times_us = lambda acts: [t / 3 for t in _real(acts)]


def run(x, w):
    return x * w + 1.0
