"""Profiler-trace bookkeeping: per-call times between hold/marker spin kernels, and escaped work."""
from __future__ import annotations

import random
from dataclasses import dataclass

import pytest

from harness.measure.devices.activities import Activity, AttributionError, call_times_us, escaped, from_profiler_events

HARNESS, SIDE = 7, 13


@dataclass(frozen=True)
class KinetoEvent:
    """The part of torch.profiler's `_KinetoEvent` the harness reads (times in ns there, us here)."""

    label: str
    ts: float
    dur: float
    stream: int

    def name(self) -> str:
        return self.label

    def device_resource_id(self) -> int:
        return self.stream

    def start_ns(self) -> int:
        return int(self.ts * 1000)

    def duration_ns(self) -> int:
        return int(self.dur * 1000)


def ev(name: str, ts: float, dur: float, stream: int = HARNESS) -> KinetoEvent:
    return KinetoEvent(name, ts, dur, stream)


SPIN = "at::cuda::(anonymous namespace)::spin_kernel(long)"


def trace(*events: KinetoEvent) -> list[KinetoEvent]:
    return list(reversed(events))  # in any order: sorted by start on the way in


def test_call_time_is_span_between_hold_and_marker() -> None:
    acts = from_profiler_events(trace(
        ev("fill", 0, 40), ev(SPIN, 40, 30), ev("k1", 71, 3), ev("Memcpy DtoD (Device -> Device)", 75, 2), ev(SPIN, 78, 1),
        ev("fill", 80, 40), ev(SPIN, 120, 30), ev("k1", 151, 4), ev(SPIN, 156, 1)))
    assert call_times_us(acts) == pytest.approx([6.0, 4.0])
    assert escaped(acts) == []


def test_a_kernel_that_starts_before_the_hold_ends_is_its_calls() -> None:
    """Programmatic dependent launch lets a kernel start while the hold's last block exits (cuDNN's
    runtime-compiled rmsnorm on the H100: 1183 of 2036 calls read as having run nothing)."""
    acts = from_profiler_events(trace(
        ev(SPIN, 40, 30), ev("pdl", 69.6, 3.4), ev(SPIN, 73.2, 1),
        ev("fill", 80, 40), ev(SPIN, 120, 30), ev("pdl", 150.2, 3.0), ev(SPIN, 153.5, 1)))
    assert call_times_us(acts) == pytest.approx([3.4, 3.0])
    assert escaped(acts) == []


def test_side_stream_work_outside_the_window_is_escaped() -> None:
    acts = from_profiler_events(trace(ev(SPIN, 0, 30), ev("side", 10, 500, SIDE), ev("tiny", 31, 1), ev(SPIN, 33, 1)))
    assert [a.name for a in escaped(acts)] == ["side"]


def test_joined_side_stream_work_inside_the_window_is_fine() -> None:
    """Forked to a side stream and joined back before the marker: not escaped, and timed whole (the
    call's span runs from the side kernel's start to the join kernel's end)."""
    acts = from_profiler_events(trace(ev(SPIN, 0, 30), ev("side", 31, 50, SIDE), ev("join", 82, 2), ev(SPIN, 85, 1)))
    assert escaped(acts) == [] and call_times_us(acts) == [pytest.approx(53.0)]


def test_unpaired_markers_refuse_to_attribute() -> None:
    with pytest.raises(AttributionError, match="pairs"):
        call_times_us(from_profiler_events(trace(ev(SPIN, 0, 30), ev("k", 31, 2))))


def _scanned(acts: list[Activity], slack_us: float, escaped_slack_us: float) -> tuple[list[float], list[Activity]]:
    """Every activity checked against every window: the definition the bisection must agree with."""
    markers = [a for a in acts if a.is_marker]
    stream, windows = markers[0].stream, [(markers[i].end_us, markers[i + 1].start_us) for i in range(0, len(markers), 2)]
    times = []
    for lo, hi in windows:
        inside = [a for a in acts if not a.is_marker and (lo - slack_us <= a.start_us and a.end_us <= hi + slack_us
                                                           or a.stream == stream and a.start_us < hi and a.end_us > lo)]
        times.append(max(a.end_us for a in inside) - min(a.start_us for a in inside) if inside else 0.0)
    out = [a for a in acts if a.stream != stream and not any(lo - escaped_slack_us <= a.start_us
                                                             and a.end_us <= hi + escaped_slack_us for lo, hi in windows)]
    return times, out


@pytest.mark.parametrize("seed", range(40))
def test_bisection_finds_what_a_scan_of_every_window_finds(seed: int) -> None:
    """Random traces in the harness's shape (its stream's flush, hold, call, marker in turn; PDL kernels
    starting inside the hold; side-stream work inside, across and outside windows; kernels that touch a
    window's edge within the slack) and a few with windows out of order: the same times and escaped work
    either way."""
    rng = random.Random(seed)
    events, t = [], 0.0
    for _ in range(rng.randint(1, 60)):
        events.append(ev("flush", t, rng.uniform(0.5, 20)))
        t = events[-1].ts + events[-1].dur + rng.choice([0.0, 0.005, 1.0])
        hold = ev(SPIN, t, rng.uniform(1, 30))
        events.append(hold)
        end = t + hold.dur
        for _ in range(rng.randint(0, 4)):
            start = end + rng.choice([-0.4, -0.005, 0.0, 0.005, rng.uniform(0, 30)])
            events.append(ev(rng.choice(["k", "pdl"]), start, rng.uniform(0, 10)))
        for _ in range(rng.randint(0, 2)):
            events.append(ev("side", end + rng.uniform(-40, 60), rng.uniform(0, 40), SIDE))
        t = max([end] + [e.ts + e.dur for e in events if e.stream == HARNESS]) + rng.choice([0.0, 0.005, 0.5])
        events.append(ev(SPIN, t, 1.0))
        t += 1.0 + rng.choice([0.0, 0.005, 2.0])
    if seed % 8 == 7:  # a long spin pair first: the windows out of order (a forged or broken trace) are scanned
        events += [ev(SPIN, 0.1, 10_000.0), ev(SPIN, 0.2, 1.0)]
    acts = from_profiler_events(trace(*events))
    want_times, want_escaped = _scanned(acts, 0.01, 1.0)
    assert call_times_us(acts) == want_times
    assert escaped(acts) == want_escaped
