"""The timing protocol: device events on a harness-owned stream, cache flush outside the timed region,
warmup by time and count, a noise-based stopping rule, and the statistics the report shows.

Two halves:
- `Sampler` runs inside a worker next to the solution and produces raw samples, chunk by chunk, so
  the parent can interleave solution and reference chunks (drift hits both alike).
- `summarize` / `stopping_decision` are pure functions of the samples, unit-tested on the CPU.

Per sample (events mode): [flush cache] -> [hold: device-side sleep so the host can queue the call
before the device reaches it] -> start event -> call -> end event. The hold is what nvbench's
blocking kernel does: host launch latency stays out of the number, as in Nsight Compute's
gpu__time_duration. CUDA-graph mode replays a graph of `graph_batch` calls and divides.
"""
from __future__ import annotations

import statistics
import time
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from harness.measure.devices import Device
from harness.measure.devices.activities import AttributionError, call_times_us, demangled, escaped
from harness.spec.model import BenchConfig
from harness.results.stats import rse_of_median, summarize
from harness.results.trace import TimingStats

MAX_HOLD_US = 2000.0
# Samples per chunk at least with the cupti timer: a chunk is one trace (records enabled, flushed and read). It
# was 100 while a trace was a torch.profiler session (~10 ms, and `min_time_ms` then counted device time); with
# CUPTI's buffers read directly a trace costs about 4 ms, some 9 samples' wall (H100, `bench/sample_cost.py
# --sizes`: 30 samples 18.0 ms, 100 48.8 ms, 300 140.6 ms), and 100 made every settled GPU row take about 100
# samples a side (the first three chunks share one chunk's) where the rule was met after 30: 102 against 30 a
# side took a warm 40-row run's rows from 17.8-20.9 s to 14.7-15.5 s (docs/cost.md).
CUPTI_CHUNK = 30


def samples_per_chunk(cfg: BenchConfig, mode: str) -> int:
    """Samples per chunk for timing `mode`: a CUPTI chunk is one trace, so it holds at least CUPTI_CHUNK
    samples to amortize that; other modes take the knob."""
    return max(cfg.chunk, CUPTI_CHUNK) if "cupti" in mode else cfg.chunk


def chunk_size(cfg: BenchConfig, mode: str, sample_s: float | None, chunks: int = 0) -> int:
    """Samples in the next chunk when `chunks` were taken: the mode's (`samples_per_chunk`), fewer when one
    sample costs so much wall time (flush, input redraw, call) that the chunk would outlast a tenth of
    `max_time_s`. The stopping rule is checked between chunks, so ten slow samples overshot the cap:
    measured on a 2-core VM, a 128 MiB add (0.7 s a sample, most of it redrawing the inputs) sampled 10 s
    under a 2 s cap.

    The first MIN_CHUNKS chunks share one chunk's samples, so the rule may stop as early as it could
    with one chunk: three full CUPTI chunks (300 samples a side of about 1 ms wall each) took a warm
    `make bench` on the H100 to 50.1 s, against 29.9 s the session before (2026-12-07)."""
    n = samples_per_chunk(cfg, mode)
    if chunks < MIN_CHUNKS:
        n = -(-n // MIN_CHUNKS)
    if sample_s is not None and sample_s > 0:
        n = max(1, min(n, int(cfg.max_time_s / 10 / sample_s)))
    return n


def resolve_timer(requested: str, device: Device) -> str:
    """`auto` is CUPTI kernel timestamps where the device traces activities (CUDA: the clock Nsight
    Compute and FlashInfer-Bench read, without the 2-4 us device events add), else device events."""
    if requested == "auto":
        return "cupti" if device.traces_activities() else "events"
    return requested


# Chunks a series spans before the noise rule may stop it. Samples within a chunk are taken back to back
# and share the state of that moment: on a 2-core VM, RMSNorm 16x512 (both sides the same eager PyTorch)
# read 159 us for all ten samples of the solution's first chunk, met rse 0.01 and stopped, and was
# reported at 0.53x a reference whose later chunks read 84 us. Three chunks let the spread between them
# show; the first three share one chunk's samples (`chunk_size`), so the rule costs chunk turns, not samples.
MIN_CHUNKS = 3


def stopping_decision(samples: Sequence[float], elapsed_s: float, cfg: BenchConfig,
                      chunks: int) -> tuple[bool, bool, str]:
    """(stop, rule_met, reason): stop once the median is known well enough (from at least MIN_CHUNKS
    chunks of samples), or a cap is hit. `max_time_s` stops a series only once it has MIN_CHUNKS
    chunks: on a loaded 2-core CI machine a first chunk of one sample outlasted a small cap, and the
    row's timing was that one sample (the row is NOISY either way, but has a spread to show).

    `min_time_ms` is wall time spent sampling (`elapsed_s`), not the sum of the samples: counted in
    device time, a 2 us kernel needed 2500 samples for 5 ms, about 5 s of flushes and redraws on the
    H200, so every kernel under ~10 us sampled until `max_time_s` and came out NOISY with its median
    long known (2026-12-05: add-fp32-1M, 383 CUPTI samples in 1 s, every one 4.50 us)."""
    n = len(samples)
    if (n >= cfg.min_samples and chunks >= MIN_CHUNKS and elapsed_s * 1e3 >= cfg.min_time_ms
            and rse_of_median(samples) <= cfg.rse_threshold):
        return True, True, f"rse <= {cfg.rse_threshold:g}"
    if n >= cfg.max_samples:
        return True, False, f"max_samples ({cfg.max_samples}) reached"
    if elapsed_s >= cfg.max_time_s and chunks >= MIN_CHUNKS:
        return True, False, f"max_time_s ({cfg.max_time_s:g}) reached"
    return False, False, ""


@dataclass
class WarmupInfo:
    calls: int
    ms: float
    host_enqueue_us: float  # host time to queue what follows the hold (start event, stream, call): what it must cover
    hold_us: float


class Sampler:
    """Times `calls` (one zero-argument callable per input set, used round-robin) on `device`.

    `before_sample(i, k)` and `after_sample(i, k)` run outside the timed region, on the harness stream,
    around sample k of input set i (the worker redraws inputs before, so a cache keyed on input
    contents cannot win, and keeps the outputs the parent asked for after). Every other call the
    sampler makes (warm-up, probes) gets `before_sample(i, None)` first.
    """

    def __init__(self, device: Device, calls: list[Callable[[], Any]], cfg: BenchConfig,
                 before_sample: Callable[[int, int | None], None] | None = None,
                 after_sample: Callable[[int, int], None] | None = None):
        self.device = device
        self.cfg = cfg
        self.timer = resolve_timer(cfg.timer, device)
        self.mode = self.timer
        self.divisor = 1
        self.escaped: list[Any] = []  # activities on other streams outside every call window (cupti timer)
        self.calls = calls
        self.before_sample = before_sample or (lambda i, k: None)
        self.after_sample = after_sample or (lambda i, k: None)
        self.hold_us = 0.0
        self.count = 0
        self.call_ms = 0.0  # a call's typical time, host or device: the warm-up's, then the last chunk's median

    def use_graphs_if_configured(self) -> None:
        """CUDA-graph mode when the config asks for it and the device can capture: each input set's
        call becomes the replay of a graph of `graph_batch` calls."""
        if not (self.cfg.cuda_graph and self.device.supports_graphs()):
            return
        with self.device.stream():
            self.calls = [self.device.capture_graph(call, self.cfg.graph_batch) for call in self.calls]
        self.mode = "cuda-graph" if self.timer == "events" else f"cuda-graph+{self.timer}"
        self.divisor = self.cfg.graph_batch

    def warmup(self) -> WarmupInfo:
        dev, cfg = self.device, self.cfg
        start = time.perf_counter()
        n = 0
        enqueue: list[float] = []
        marker = dev.event()
        with dev.stream():
            # every input set at least once: a timed sample is then never its set's first call, so a cache
            # keyed on buffer addresses is stale in every sample a re-check may pick, not in some of them
            while n < max(cfg.warmup_count, len(self.calls)) or (time.perf_counter() - start) * 1e3 < cfg.warmup_ms:
                self.before_sample(n % len(self.calls), None)
                dev.synchronize()
                with dev.stream():  # what a sample queues after its hold, as `_sample` queues it: its start
                    t0 = time.perf_counter()  # event, the harness stream left and entered anew, the call
                    marker.record()
                with dev.stream():
                    self.calls[n % len(self.calls)]()
                    enqueue.append((time.perf_counter() - t0) * 1e6)
                n += 1
                if n >= len(self.calls) and (time.perf_counter() - start) > cfg.max_time_s:
                    break
            dev.synchronize()
        host_us = statistics.median(enqueue[1:] or enqueue)
        # Device-side hold to cover what the host queues after it, twice over: the hold can start as soon
        # as it is queued (the flush before it takes the device ~35 us on an H100), and a hold cut short
        # puts the host's launch time inside the sample (a Triton RMSNorm's events read 27 us against 5
        # when the hold covered the call alone, 2026-12-07). Capped so a slow host-bound call is not
        # hidden behind an unbounded sleep.
        self.hold_us = min(2.0 * host_us + 20.0, MAX_HOLD_US)
        self.call_ms = host_us / 1e3
        with dev.stream():  # the first hold calibrates the spin kernel: here, not inside a traced chunk
            dev.hold(self.hold_us)
            dev.synchronize()
        if self.timer == "cupti":  # the tracer's one-time start-up stays out of the first chunk
            dev.device_activities(lambda: None)
        return WarmupInfo(n, (time.perf_counter() - start) * 1e3, host_us, self.hold_us)

    def _sample(self, after: Callable[[], None], before: Callable[[], None] = lambda: None) -> None:
        """Queue one sample: redraw inputs, flush (cold), hold, `before`, the call, `after`, keep.

        Everything but the call sits outside what `before`/`after` bracket (events or markers). Each
        step enters the harness stream anew, so a call that switches the current stream cannot move
        the bracket off it: its work on another stream then shows as escaped, not as a short call."""
        dev = self.device
        i, k = self.count % len(self.calls), self.count
        with dev.stream():
            self.before_sample(i, k)
            if self.cfg.cache == "cold":
                dev.flush_cache()
            dev.hold(self.hold_us)
            before()
        with dev.stream():
            self.calls[i]()
        with dev.stream():
            after()
            self.after_sample(i, k)
        self.count += 1

    def resume(self) -> None:
        """Untimed calls for the device's `resume_ms`, at least one, before a chunk of a worker that was
        frozen while the other side was timed (the runner's alternation): each a sample's sequence (fresh
        inputs, flush), untimed."""
        dev = self.device
        if dev.resume_ms <= 0 or self.call_ms >= dev.resume_ms:  # a call that long is its own resume
            return
        start = time.perf_counter()
        with dev.stream():
            while True:
                i = self.count % len(self.calls)
                self.before_sample(i, None)
                if self.cfg.cache == "cold":
                    dev.flush_cache()
                with dev.stream():
                    self.calls[i]()
                dev.synchronize()
                if (time.perf_counter() - start) * 1e3 >= dev.resume_ms:
                    return

    def chunk(self, n: int) -> list[float]:
        """`n` samples in milliseconds per call."""
        samples = self._chunk_cupti(n) if self.timer == "cupti" else self._chunk_events(n)
        if samples:
            self.call_ms = statistics.median(samples) * self.divisor
        return samples

    def _chunk_events(self, n: int) -> list[float]:
        """Each call between two device events; one synchronize at the end, none inside."""
        dev = self.device
        pairs = [(dev.event(), dev.event()) for _ in range(n)]
        with dev.stream():
            for start, end in pairs:
                self._sample(end.record, start.record)
            dev.synchronize()
        return [s.elapsed_ms(e) / self.divisor for s, e in pairs]

    def _chunk_cupti(self, n: int) -> list[float]:
        """Same sequence as events mode, but each call bracketed by spin kernels and timed from the
        profiler's kernel timestamps: no event overhead, which matters for kernels of a few us."""
        dev = self.device

        def run() -> None:
            with dev.stream():
                for _ in range(n):
                    self._sample(dev.mark)
        acts = dev.device_activities(run)
        if acts is None:
            raise RuntimeError(f"timer 'cupti' needs a device with activity tracing; {dev.kind} has none")
        times = call_times_us(acts)
        if len(times) != n:
            raise AttributionError(f"attributed {len(times)} calls in the trace, expected {n}")
        self.escaped.extend(escaped(acts))  # every cupti sample doubles as a hidden-work probe
        return [t / 1e3 / self.divisor for t in times]

    def hidden_work_check(self, reps: int = 5, tries: int = 3) -> dict[str, float]:
        """Compare device events with the host clock over the same call, synchronizing the whole
        device after it: work queued on another stream or thread shows up only in the host clock.

        A host clock well above the events is measured again, up to `tries` times in all, and the
        try with the least gap is reported: hidden work widens every try, while a host shared with
        other runs (a census of 12 problems at once on one GPU read honest references 1.5-3.5x slow
        by the host clock) widens some."""
        dev = self.device
        if not dev.queues_work:  # measured on a 2-core VM: 0.55 s a worker per row of 2048x8192 on the CPU, for nothing
            return {"activity_check": f"not needed: {dev.kind} calls queue no work, their time is the host's"}

        def measure(call: Callable[[], Any], fresh: bool = True) -> tuple[float, float]:
            ev, wall = [], []
            with dev.stream():
                for _ in range(reps):
                    if fresh:  # the baseline calls nothing: a redraw there (0.7 s for 2x128 MiB on a CPU) buys nothing
                        self.before_sample(0, None)
                    dev.synchronize()
                    start, end = dev.event(), dev.event()
                    t0 = time.perf_counter()
                    start.record()
                    call()
                    with dev.stream():  # the call may have switched the current stream
                        end.record()
                    dev.synchronize()
                    wall.append((time.perf_counter() - t0) * 1e3)
                    ev.append(start.elapsed_ms(end))
            return statistics.median(ev), statistics.median(wall)

        out: dict[str, Any] = {}
        for _ in range(max(tries, 1)):
            _, base_wall = measure(lambda: None, fresh=False)
            events_ms, wall_ms = measure(self.calls[0])
            events_ms /= self.divisor
            wall_ms = (wall_ms - base_wall) / self.divisor
            got = {"events_ms": events_ms, "wall_ms": wall_ms, "baseline_ms": base_wall,
                   "hidden_ms": max(wall_ms - events_ms, 0.0)}
            if not out or got["hidden_ms"] < out["hidden_ms"]:
                out = got
            if not hidden_work_suspected(out):
                break
        out.update(self._escaped_work())
        return out

    def _escaped_work(self) -> dict[str, Any]:
        """Where the device can trace activities: work on other streams outside the call's window
        (the host clock alone misses it when the host is slower to launch than the device to run)."""
        dev = self.device

        def run() -> None:
            with dev.stream():
                self.before_sample(0, None)
                dev.hold(max(self.hold_us, 50.0))
            with dev.stream():
                self.calls[0]()
            with dev.stream():  # re-entered: a call that switched the current stream cannot move the marker
                dev.mark()
        try:
            acts = dev.device_activities(run)
        except Exception as exc:  # a profiler that cannot start must not fail the solution
            return {"activity_check": f"unavailable: {type(exc).__name__}: {exc}"[:200], **self._escaped_in_chunks()}
        if acts is None:
            return {}
        try:
            outside = escaped(acts) + self.escaped
        except AttributionError as exc:
            return {"activity_check": f"unavailable: {exc}", **self._escaped_in_chunks()}
        probes = 1 + (self.count if self.timer == "cupti" else 0)  # calls whose every activity was accounted for
        return self._escaped_summary(outside, probes)

    def _escaped_in_chunks(self) -> dict[str, Any]:
        """What the timed chunks' traces saw escape, when the final probe could not be read."""
        return self._escaped_summary(self.escaped, self.count) if self.escaped else {}

    def _escaped_summary(self, outside: list[Any], probes: int) -> dict[str, Any]:
        return {"escaped_ms": sum(a.dur_us for a in outside) / 1e3 / self.divisor,
                "escaped_kernels": sorted({demangled(a.name)[:80] for a in outside})[:5], "probed_calls": probes}


def hidden_work_suspected(check: dict[str, Any], min_hidden_ms: float = 0.02, fraction: float = 0.3) -> bool:
    """Device work outside the timed window (from the profiler trace, where there is one), or wall
    time well above event time by more than noise: the call did work the timer missed."""
    if "hidden_ms" not in check:  # not measured: a device whose calls queue nothing
        return False
    if check.get("escaped_ms", 0.0) > max(0.002, 0.1 * check["events_ms"]):  # measured: all four are there
        return True
    return check["hidden_ms"] > min_hidden_ms and check["hidden_ms"] > fraction * max(check["wall_ms"], 1e-9)


def throttled(clock_readings: Sequence[dict[str, float]], ratio: float = 0.75) -> bool:
    """nvbench's rule: an SM clock under 75% of the highest seen during the run means throttling."""
    sm = [c["sm_mhz"] for c in clock_readings if "sm_mhz" in c]
    return bool(sm) and min(sm) < ratio * max(sm)


def measure(device: Device, calls: list[Callable[[], Any]], cfg: BenchConfig,
            before_sample: Callable[[int], None] | None = None) -> TimingStats:
    """One series on its own (no interleaved reference): warmup, then chunks until the stopping rule.

    The runner interleaves two Samplers itself; this is for callers that time one thing, such as
    bench modules and the accuracy benchmark.
    """
    sampler = Sampler(device, calls, cfg, before_sample)
    sampler.use_graphs_if_configured()
    return sample_until_stopped(sampler)


def sample_until_stopped(sampler: Sampler) -> TimingStats:
    """Warm `sampler` up, then take chunks until its config's stopping rule says stop."""
    cfg = sampler.cfg
    began = time.monotonic()
    sampler.warmup()
    samples: list[float] = []
    chunks = 0
    while True:
        samples.extend(sampler.chunk(chunk_size(cfg, sampler.mode, None, chunks)))
        chunks += 1
        stop, met, reason = stopping_decision(samples, time.monotonic() - began, cfg, chunks)
        if stop:
            return summarize(samples, met, reason, time.monotonic() - began, sampler.mode, cfg.cache)
