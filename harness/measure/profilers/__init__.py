"""Bench modes that time a case by profiler-reported kernel durations instead of device events.

Parsers (kernel_details, msprof) are pure and CPU-tested on files in the documented formats; the
mode runners in `modes.py` need the matching device and tool at run time.
"""
from harness.measure.profilers.attribution import AttributionError, Attribution, KernelRecord, attribute, kernel_matches

__all__ = ["AttributionError", "Attribution", "KernelRecord", "attribute", "kernel_matches"]
