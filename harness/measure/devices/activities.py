"""Device activity records (kernels, memcpys, memsets) from a profiler trace, and the bookkeeping that
turns them into per-call times and hidden-work evidence.

The CUDA device gets these from CUPTI (`devices/tracers.py`: its activity API directly, or through
torch.profiler; the same timestamps Nsight Compute's gpu__time_duration comes from). The harness
brackets every timed call with two spin kernels on its own stream (the hold before, a marker after),
so a call's work is what runs between them (on any stream: a side stream joined back before the
marker is inside), and work on any stream outside every window escaped the timed region.
"""
from __future__ import annotations

import bisect
from dataclasses import dataclass
from typing import Any, Iterable

MARKER = "spin_kernel"


@dataclass(frozen=True)
class Activity:
    name: str
    stream: int
    start_us: float
    dur_us: float

    @property
    def end_us(self) -> float:
        return self.start_us + self.dur_us

    @property
    def is_marker(self) -> bool:
        return MARKER in self.name


class AttributionError(RuntimeError):
    """The trace does not contain the bracketing the harness put there: no time is reported."""


def from_profiler_events(events: Iterable[Any]) -> list[Activity]:
    """Device activities from torch.profiler's kineto events (`prof.profiler.kineto_results.events()`,
    already filtered to the device), sorted by start. Read in memory: exporting and re-reading a
    Chrome trace per chunk cost more than the chunk itself."""
    out = [Activity(str(e.name()), int(e.device_resource_id()), e.start_ns() / 1e3, e.duration_ns() / 1e3)
           for e in events]
    return sorted(out, key=lambda a: a.start_us)


def demangled(name: str) -> str:
    """A kernel's C++ name as people read it (CUPTI gives the mangled one; anything else is kept)."""
    import torch
    return torch._C._demangle(name) if name.startswith("_Z") else name


def harness_windows(acts: Iterable[Activity]) -> tuple[int, list[tuple[float, float]]]:
    """(harness stream, [(start, end)] per call): each window runs from the end of a hold spin
    kernel to the start of the marker spin kernel that follows it on the same stream."""
    markers = [a for a in acts if a.is_marker]
    if len(markers) < 2 or len(markers) % 2:
        raise AttributionError(f"expected hold/marker spin kernel pairs in the trace, found {len(markers)} spin kernels")
    stream = markers[0].stream
    if any(m.stream != stream for m in markers):
        raise AttributionError("spin kernels on more than one stream: cannot tell the harness stream")
    return stream, [(markers[i].end_us, markers[i + 1].start_us) for i in range(0, len(markers), 2)]


class _Windows:
    """The call windows, and which of them hold or overlap an activity. The conditions are checked on
    candidate windows only: found by bisection when the windows' starts and ends both rise (as the
    harness's own stream records them) and no activity ends before it starts, else every window (a
    forged or broken trace: the same result, the slow way). Scanning every activity against every
    window cost 0.5-1 ms a sample of a 100-sample CUPTI chunk on the H100 (2026-12-07), as much as the
    sample itself."""

    def __init__(self, windows: list[tuple[float, float]], acts: list[Activity]):
        self.los, self.his = [lo for lo, _ in windows], [hi for _, hi in windows]
        self.ordered = (all(a[0] <= b[0] and a[1] <= b[1] for a, b in zip(windows, windows[1:]))
                        and all(a.dur_us >= 0 for a in acts))

    def _candidates(self, his_from: int, los_to: int) -> range:
        return range(his_from, los_to) if self.ordered else range(len(self.los))

    def holding(self, a: Activity, slack_us: float) -> list[int]:
        """Windows that hold `a` with the slack: lo - slack <= start and end <= hi + slack."""
        near = self._candidates(bisect.bisect_left(self.his, a.start_us - slack_us),
                                bisect.bisect_right(self.los, a.start_us + slack_us))
        return [w for w in near if self.los[w] - slack_us <= a.start_us and a.end_us <= self.his[w] + slack_us]

    def overlapping(self, a: Activity) -> list[int]:
        """Windows `a` overlaps: lo < end and start < hi."""
        near = self._candidates(bisect.bisect_right(self.his, a.start_us), bisect.bisect_left(self.los, a.end_us))
        return [w for w in near if self.los[w] < a.end_us and a.start_us < self.his[w]]


def call_times_us(acts: list[Activity], slack_us: float = 0.01) -> list[float]:
    """Per call: span from the first to the last activity inside its window, on any stream, so a
    call that forks work to a side stream and joins it back is timed whole (0 if it ran nothing).
    On the harness stream a kernel that overlaps its window belongs to it: a kernel launched with
    programmatic dependent launch (Hopper; cuDNN's runtime-compiled engines) may start while the hold
    kernel's last block is still exiting, before the hold's recorded end, and was then counted in no
    window (cudnn-graph's HIDDEN_WORK on the H100, 2026-12-06). Nothing else of the call's stream runs
    between the hold and the marker."""
    stream, windows = harness_windows(acts)
    found = _Windows(windows, acts)
    inside: list[list[Activity]] = [[] for _ in windows]
    for a in acts:
        if not a.is_marker:
            for w in set(found.holding(a, slack_us) + (found.overlapping(a) if a.stream == stream else [])):
                inside[w].append(a)
    return [max(a.end_us for a in win) - min(a.start_us for a in win) if win else 0.0 for win in inside]


def escaped(acts: list[Activity], slack_us: float = 1.0) -> list[Activity]:
    """Activities on other streams not contained in any call window: work the timed region missed
    (the harness stream's own flushes and holds sit outside the windows by design)."""
    stream, windows = harness_windows(acts)
    found = _Windows(windows, acts)
    return [a for a in acts if a.stream != stream and not found.holding(a, slack_us)]
