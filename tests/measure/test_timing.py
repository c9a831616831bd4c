"""The timing protocol's logic: statistics, the stopping rule, hidden-work and throttle checks, and
the sampler itself on the CPU device (real events: host timestamps)."""
from __future__ import annotations

import contextlib
import math
import time
from typing import Iterator

import pytest

from harness.measure.devices.cpu import CpuDevice
from harness.spec.model import BenchConfig
from harness.measure.timing import MAX_HOLD_US, MIN_CHUNKS, Sampler, hidden_work_suspected, stopping_decision, throttled
from harness.results.stats import quantile, rse_of_median, summarize


def test_quantile_matches_linear_interpolation() -> None:
    xs = [1.0, 2.0, 3.0, 4.0]
    assert quantile(xs, 0.5) == 2.5 and quantile(xs, 0.25) == 1.75 and quantile(xs, 1.0) == 4.0


def test_rse_falls_with_more_samples_and_ignores_outliers() -> None:
    few = [1.0, 1.1, 0.9, 1.05, 0.95] * 2
    many = few * 20
    assert rse_of_median(many) < rse_of_median(few)
    assert rse_of_median(many + [1000.0]) == pytest.approx(rse_of_median(many), rel=0.1)
    assert math.isinf(rse_of_median([1.0, 2.0]))


def test_stopping_rule_needs_min_samples_and_min_time() -> None:
    cfg = BenchConfig(min_samples=10, min_time_ms=5.0, rse_threshold=0.01, max_samples=1000, max_time_s=10)
    steady = [1.0] * 9
    assert stopping_decision(steady, 0.1, cfg, 3) == (False, False, "")
    assert stopping_decision([1.0] * 10, 0.1, cfg, 3)[:2] == (True, True)
    assert stopping_decision([1.0] * 10, 0.004, cfg, 3)[0] is False  # 4 ms of sampling < min_time_ms
    # min_time_ms is wall time: tiny samples stop once they are steady and 5 ms have passed
    assert stopping_decision([0.001] * 10, 0.006, cfg, 3)[:2] == (True, True)
    noisy = [1.0, 3.0] * 50
    assert stopping_decision(noisy, 0.1, cfg, 3)[0] is False
    # one or two chunks of steady samples may share a passing state: the rule waits for a third
    assert stopping_decision([1.0] * 20, 0.1, cfg, chunks=2) == (False, False, "")
    assert stopping_decision([1.0] * 30, 0.1, cfg, chunks=3)[:2] == (True, True)
    assert stopping_decision(noisy, 11.0, cfg, 3) == (True, False, "max_time_s (10) reached")
    # a series past the cap still takes its third chunk: one sample that outlasted the cap is not a timing
    assert stopping_decision([1.0], 11.0, cfg, chunks=1) == (False, False, "")
    assert stopping_decision([1.0, 3.0] * 500, 0.1, cfg, 3) == (True, False, "max_samples (1000) reached")


def test_summarize_keeps_raw_samples() -> None:
    samples = [3.0, 1.0, 2.0, 4.0]
    s = summarize(samples, True, "rse", 0.5, "events", "cold")
    assert s.samples_ms == samples and s.median_ms == 2.5 and s.min_ms == 1.0 and s.iqr_ms == pytest.approx(1.5)
    assert s.n == 4 and s.mean_ms == 2.5 and s.measured_ms == 10.0


def test_hidden_work_rule() -> None:
    assert hidden_work_suspected({"events_ms": 0.01, "wall_ms": 2.0, "hidden_ms": 1.99})
    assert not hidden_work_suspected({"events_ms": 2.0, "wall_ms": 2.01, "hidden_ms": 0.01})
    assert not hidden_work_suspected({"events_ms": 0.001, "wall_ms": 0.01, "hidden_ms": 0.009})  # under noise floor


def test_throttle_rule() -> None:
    assert throttled([{"sm_mhz": 1980.0}, {"sm_mhz": 1200.0}])
    assert not throttled([{"sm_mhz": 1980.0}, {"sm_mhz": 1900.0}])
    assert not throttled([{}])


def test_sampler_measures_a_known_duration_on_cpu() -> None:
    cfg = BenchConfig(warmup_count=2, warmup_ms=0, cache="warm")
    sampler = Sampler(CpuDevice(), [lambda: time.sleep(0.004)], cfg)
    info = sampler.warmup()
    samples = sampler.chunk(5)
    assert info.calls >= 2 and len(samples) == 5
    assert all(3.9 <= s < 40 for s in samples)


def test_sampler_rotates_inputs_and_hooks_every_call() -> None:
    """Timed samples get (input set, sample number) before and after; warm-up and probe calls get
    (input set, None) before, so the worker refreshes inputs for every call it makes. Warm-up calls
    every input set, even past `warmup_count`: no timed sample is its set's first call, so a result
    cached by buffer address is stale in every sample a re-check can pick."""
    seen: list[int] = []
    before: list[tuple[int, int | None]] = []
    after: list[tuple[int, int]] = []
    calls = [lambda i=i: seen.append(i) for i in range(3)]
    sampler = Sampler(CpuDevice(), calls, BenchConfig(cache="warm", warmup_count=2, warmup_ms=0),
                      lambda i, k: before.append((i, k)), lambda i, k: after.append((i, k)))
    sampler.warmup()
    sampler.chunk(6)
    sampler.chunk(2)
    assert seen == [0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1]
    assert before == [(0, None), (1, None), (2, None), *[(k % 3, k) for k in range(8)]]
    assert after == [(k % 3, k) for k in range(8)]
    sampler.device = Queueing()
    sampler.hidden_work_check(reps=2)
    assert before[11:] == [(0, None)] * 2  # the call, twice (the baseline calls nothing: no redraw)


class Queueing(CpuDevice):
    """The CPU standing in for a device whose calls queue work (the check's path for CUDA and NPU)."""
    queues_work = True
    resume_ms = 0.0


def test_the_hold_covers_what_a_sample_queues_after_it() -> None:
    """Between the hold and the call a sample records its start event and enters the harness stream
    anew; on a device where switching streams costs host time, warm-up counts that time, and the hold
    is twice it plus 20 us (sized to the call alone, a hold ran out before the call was queued on the
    H100 and events read Triton's launch: 27 us for 5)."""
    class SlowStreams(Queueing):
        @contextlib.contextmanager
        def stream(self) -> Iterator[None]:
            time.sleep(0.0003)  # entering
            yield
            time.sleep(0.0003)  # leaving

    info = Sampler(SlowStreams(), [lambda: None], BenchConfig(cache="warm", warmup_count=3, warmup_ms=0)).warmup()
    assert info.host_enqueue_us >= 600  # left after the start event, entered for the call
    assert info.hold_us == pytest.approx(min(2 * info.host_enqueue_us + 20, MAX_HOLD_US))


def test_cold_cache_flushes_before_every_sample() -> None:
    class Counting(CpuDevice):
        flushes = 0

        def flush_cache(self) -> None:
            Counting.flushes += 1

    Sampler(Counting(), [lambda: None], BenchConfig(cache="cold")).chunk(4)
    assert Counting.flushes == 4


def test_a_resumed_worker_calls_untimed_before_its_chunk_and_long_calls_are_their_own_resume() -> None:
    """On a host-timed device the first calls after the worker was frozen time the resume (RMSNorm 16x512
    on a 2-core VM: 128 us, then 97, 92, 90 and 86 us from the fifth sample): `resume` calls for the device's
    `resume_ms`, each with an untimed call's fresh inputs and a flush, and not at all once a call takes
    that long. A device whose clock is not the host's has no resume."""
    class Counting(CpuDevice):
        flushes = 0

        def flush_cache(self) -> None:
            Counting.flushes += 1

    seen: list[int] = []
    before: list[tuple[int, int | None]] = []
    sampler = Sampler(Counting(), [lambda: (seen.append(0), time.sleep(0.001))], BenchConfig(cache="cold"),
                      lambda i, k: before.append((i, k)))
    started = time.perf_counter()
    sampler.resume()
    took_ms = (time.perf_counter() - started) * 1e3
    assert took_ms >= Counting.resume_ms and len(seen) >= 2 and Counting.flushes == len(seen)
    assert before == [(0, None)] * len(seen)
    assert sampler.count == 0  # no sample number used: the parent's re-checks count timed samples only
    sampler.chunk(3)
    assert sampler.call_ms >= 1.0
    seen.clear()
    sampler.call_ms = Counting.resume_ms
    sampler.resume()
    assert seen == []
    assert Queueing.resume_ms == 0
    sampler = Sampler(Queueing(), [lambda: seen.append(0)], BenchConfig(cache="warm"))
    sampler.resume()
    assert seen == []


def test_hidden_work_check_sees_no_hidden_work_in_a_plain_call() -> None:
    sampler = Sampler(Queueing(), [lambda: time.sleep(0.002)], BenchConfig(cache="warm"))
    check = sampler.hidden_work_check(reps=3)
    assert check["events_ms"] >= 1.9 and not hidden_work_suspected(check)


def test_hidden_work_check_is_skipped_where_calls_queue_nothing() -> None:
    """On the CPU an event is the host clock, so the check would compare a clock with itself: it calls
    nothing and says why, and the rule reads that as not suspected."""
    calls: list[int] = []
    check = Sampler(CpuDevice(), [lambda: calls.append(1)], BenchConfig(cache="warm")).hidden_work_check()
    assert calls == [] and "hidden_ms" not in check and "not needed" in check["activity_check"]
    assert not hidden_work_suspected(check)


class LeavesWork(Queueing):
    """A device where the first `calls` calls leave 5 ms of work that only a synchronize waits for,
    as work on a side stream does: the host clock sees it, the events around the call do not."""

    def __init__(self, calls: int) -> None:
        self.left, self.pending = calls, False

    def call(self) -> None:
        if self.left:
            self.left, self.pending = self.left - 1, True

    def synchronize(self) -> None:
        if self.pending:
            time.sleep(0.005)
            self.pending = False


@pytest.mark.parametrize("calls, suspected", [(5, False), (10**6, True)])
def test_hidden_work_check_confirms_before_it_accuses(calls: int, suspected: bool) -> None:
    """A gap in one try (5 reps), as a host shared with other runs makes, is measured again and
    cleared; a gap in every try, as hidden work makes, stays."""
    dev = LeavesWork(calls)
    check = Sampler(dev, [dev.call], BenchConfig(cache="warm")).hidden_work_check(reps=5)
    assert hidden_work_suspected(check) == suspected, check


def test_a_chunk_of_slow_samples_is_cut_to_fit_the_time_cap() -> None:
    """The stopping rule runs between chunks: ten 0.7 s samples would overshoot a 2 s cap by 5 s."""
    from harness.measure.timing import chunk_size
    cfg = BenchConfig(max_time_s=2.0, chunk=10)
    after = MIN_CHUNKS  # the first chunks split one chunk's samples between them (below)
    assert chunk_size(cfg, "events", None, after) == 10          # nothing known yet: the knob
    assert chunk_size(cfg, "events", 0.001, after) == 10         # fast samples: the knob
    assert chunk_size(cfg, "events", 0.7, after) == 1            # never fewer than one
    assert chunk_size(cfg, "events", 0.04, after) == 5           # a tenth of the cap per chunk
    assert chunk_size(cfg, "cupti", 0.0001, after) >= 30         # a CUPTI trace's own cost stays amortized


def test_the_first_chunks_share_one_chunks_samples() -> None:
    """The rule waits for MIN_CHUNKS chunks; taken whole, they tripled the samples of a row that one chunk
    had settled (300 a side with CUPTI). Split, the rule may stop after as many samples as before."""
    from harness.measure.timing import chunk_size
    cfg = BenchConfig(max_time_s=10.0, chunk=10)
    first = [chunk_size(cfg, "cupti", 0.0001, k) for k in range(MIN_CHUNKS)]
    assert sum(first) in range(30, 30 + MIN_CHUNKS) and chunk_size(cfg, "cupti", 0.0001, MIN_CHUNKS) == 30
    assert [chunk_size(cfg, "events", None, k) for k in range(MIN_CHUNKS + 1)] == [4] * MIN_CHUNKS + [10]
    assert chunk_size(cfg, "events", 0.7, 0) == 1  # the time cap still cuts a first chunk


def test_the_interquartile_mean_resolves_below_a_quantized_timers_step() -> None:
    """A kernel of 4.4 us read by a timer with 0.25 us steps: 60% of reads 4.50, 40% 4.25. The median
    snaps to a step; the mean of the middle half lands between them, nearer the truth."""
    samples = [4.50e-3] * 6 + [4.25e-3] * 4 + [9.0e-3]  # one outlier, which the middle half leaves out
    s = summarize(samples, True, "rse", 0.5, "cupti", "cold")
    assert s.median_ms == 4.50e-3
    assert 4.25e-3 < s.iqm_ms < 4.50e-3
