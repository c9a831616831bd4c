"""Profiler-trace bookkeeping: per-call times between hold/marker spin kernels, and escaped work."""
from __future__ import annotations

import pytest

from harness.measure.devices.activities import AttributionError, call_times_us, escaped, parse_chrome_trace

HARNESS, SIDE = 7, 13


def ev(name: str, ts: float, dur: float, stream: int = HARNESS, cat: str = "kernel") -> dict:
    return {"ph": "X", "cat": cat, "name": name, "pid": 0, "tid": stream, "ts": ts, "dur": dur,
            "args": {"stream": stream, "device": 0}}


SPIN = "at::cuda::(anonymous namespace)::spin_kernel(long)"


def trace(*events: dict) -> dict:
    host = {"ph": "X", "cat": "cpu_op", "name": "aten::mul", "ts": 0.0, "dur": 500.0}
    return {"traceEvents": [host, *events]}


def test_call_time_is_span_between_hold_and_marker() -> None:
    acts = parse_chrome_trace(trace(
        ev("fill", 0, 40), ev(SPIN, 40, 30), ev("k1", 71, 3), ev("memcpy", 75, 2, cat="gpu_memcpy"), ev(SPIN, 78, 1),
        ev("fill", 80, 40), ev(SPIN, 120, 30), ev("k1", 151, 4), ev(SPIN, 156, 1)))
    assert call_times_us(acts) == pytest.approx([6.0, 4.0])
    assert escaped(acts) == []


def test_side_stream_work_outside_the_window_is_escaped() -> None:
    acts = parse_chrome_trace(trace(ev(SPIN, 0, 30), ev("side", 10, 500, SIDE), ev("tiny", 31, 1), ev(SPIN, 33, 1)))
    assert [a.name for a in escaped(acts)] == ["side"]


def test_joined_side_stream_work_inside_the_window_is_fine() -> None:
    """Forked to a side stream and joined back before the marker: not escaped, and timed whole (the
    call's span runs from the side kernel's start to the join kernel's end)."""
    acts = parse_chrome_trace(trace(ev(SPIN, 0, 30), ev("side", 31, 50, SIDE), ev("join", 82, 2), ev(SPIN, 85, 1)))
    assert escaped(acts) == [] and call_times_us(acts) == [pytest.approx(53.0)]


def test_unpaired_markers_refuse_to_attribute() -> None:
    with pytest.raises(AttributionError, match="pairs"):
        call_times_us(parse_chrome_trace(trace(ev(SPIN, 0, 30), ev("k", 31, 2))))
