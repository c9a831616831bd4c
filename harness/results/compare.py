"""`harness compare BASE.json NEW.json`: did each solution get faster, slower, or stay the same?

The verdict comes from the two raw sample sets, not from two medians: a seeded bootstrap gives a
confidence interval for the ratio of medians (new / base), and

- SLOWER  when the interval lies above 1 and the ratio is beyond 1 + threshold,
- FASTER  when the interval lies below 1 and the ratio is beyond 1 / (1 + threshold),
- SAME    when the whole interval lies inside [1 / (1 + threshold), 1 + threshold],
- UNCERTAIN otherwise (too noisy, or too few samples, to call it either way); and also when a
  side was flagged NOISY or has fewer than MIN_SAMPLES samples, unless `strict` (a noisy run must
  not fail --fail-on-regression by itself).

So a real but tiny change is SAME, a large change is only called when the data support it, and
noise never turns into a verdict. The threshold is symmetric in log space: +5% slower and 1.05x
faster are the same distance. With `--normalize` the statistic is the ratio of the solution/
reference ratios, which cancels a faster or slower machine when base and new ran on different ones.
Outcomes without two timings: BROKEN (passed before, fails now), FIXED, NEW, MISSING, UNTIMED.
"""
from __future__ import annotations

import random
from dataclasses import asdict, dataclass
from enum import Enum
from typing import Any, Sequence

from tabulate import tabulate

from harness.results.render import fmt_time
from harness.results.stats import median, quantile
from harness.results.trace import NOT_RUN, Status, Trace

# rows a run did not get to or could not run here (no device, no toolchain, interrupted): never BROKEN or FIXED
UNRUN = NOT_RUN | {Status.INTERRUPTED}


class Verdict(str, Enum):
    SAME = "SAME"
    FASTER = "FASTER"
    SLOWER = "SLOWER"
    UNCERTAIN = "UNCERTAIN"
    BROKEN = "BROKEN"      # passed in base, fails in new: a correctness regression
    FIXED = "FIXED"        # failed in base, passes in new
    NEW = "NEW"            # only in new
    MISSING = "MISSING"    # only in base
    UNTIMED = "UNTIMED"    # neither side has a timing to compare (both failed or skipped)

    def __str__(self) -> str:
        return self.value


REGRESSIONS = {Verdict.SLOWER, Verdict.BROKEN}
STRICT = REGRESSIONS | {Verdict.UNCERTAIN, Verdict.MISSING}
MARK = {Verdict.SLOWER: "🔴", Verdict.BROKEN: "❌", Verdict.FASTER: "🟢", Verdict.FIXED: "✅",
        Verdict.SAME: "⚪", Verdict.UNCERTAIN: "🟡", Verdict.NEW: "🆕", Verdict.MISSING: "❔", Verdict.UNTIMED: "➖"}


@dataclass(frozen=True)
class Settings:
    threshold: float = 0.05     # relative change that matters
    confidence: float = 0.95    # of the bootstrap interval
    resamples: int = 2000
    seed: int = 0               # fixed: the same two reports always give the same verdicts
    normalize: bool = False     # compare solution/reference ratios instead of latencies
    strict: bool = False        # call FASTER/SLOWER even on NOISY or few-sample sides


MIN_SAMPLES = 10  # fewer raw samples on a side than this: a verdict only under --strict


@dataclass(frozen=True)
class Interval:
    """new/base ratio of medians (or of solution/reference ratios) and its bootstrap interval."""

    ratio: float
    lo: float
    hi: float


@dataclass
class Row:
    definition: str
    workload: str
    solution: str
    verdict: Verdict
    base_ms: float | None = None
    new_ms: float | None = None
    base_n: int = 0
    new_n: int = 0
    interval: Interval | None = None
    note: str = ""

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["verdict"] = str(self.verdict)
        return out


def _medians(samples: Sequence[float], resamples: int, rng: random.Random) -> list[float]:
    """Medians of `resamples` bootstrap resamples. Plain Python on purpose: as fast as torch here
    (C-level choices and sort), and the merge/compare CI job then needs no torch."""
    xs = list(samples)
    return [median(rng.choices(xs, k=len(xs))) for _ in range(resamples)]


def bootstrap_ratio(base: Sequence[float], new: Sequence[float], settings: Settings = Settings(),
                    base_ref: Sequence[float] | None = None, new_ref: Sequence[float] | None = None) -> Interval:
    """Percentile bootstrap interval of median(new)/median(base); with both references given, of
    (median(new)/median(new_ref)) / (median(base)/median(base_ref)). Each set is resampled on its own."""
    rng = random.Random(settings.seed)
    ratio = median(new) / median(base)
    boot = [n / b for n, b in zip(_medians(new, settings.resamples, rng), _medians(base, settings.resamples, rng))]
    if base_ref is not None and new_ref is not None:
        ratio *= median(base_ref) / median(new_ref)
        refs = zip(_medians(base_ref, settings.resamples, rng), _medians(new_ref, settings.resamples, rng))
        boot = [r * br / nr for r, (br, nr) in zip(boot, refs)]
    alpha = (1.0 - settings.confidence) / 2
    return Interval(ratio, quantile(sorted(boot), alpha), quantile(sorted(boot), 1.0 - alpha))


def decide(interval: Interval, threshold: float) -> Verdict:
    """The rule in the module docstring; `threshold` is relative (0.05 = 5%)."""
    up, down = 1.0 + threshold, 1.0 / (1.0 + threshold)
    if interval.lo > 1.0 and interval.ratio > up:
        return Verdict.SLOWER
    if interval.hi < 1.0 and interval.ratio < down:
        return Verdict.FASTER
    if down <= interval.lo and interval.hi <= up:
        return Verdict.SAME
    return Verdict.UNCERTAIN


def _timed(t: Trace) -> bool:
    return t.status == Status.PASSED and t.timing is not None and len(t.timing.samples_ms) >= 2


def compare_pair(b: Trace, n: Trace, settings: Settings) -> Row:
    row = Row(n.definition, n.workload, n.solution, Verdict.UNTIMED,
              base_ms=b.timing.median_ms if b.timing else None, new_ms=n.timing.median_ms if n.timing else None,
              base_n=b.timing.n if b.timing else 0, new_n=n.timing.n if n.timing else 0)
    b_ok, n_ok = b.status == Status.PASSED, n.status == Status.PASSED
    if b_ok and n.status in UNRUN:  # the new run has no result for it: missing, not broken
        row.verdict, row.note = Verdict.MISSING, f"now {n.status}"
        return row
    if n_ok and b.status in UNRUN:
        row.verdict, row.note = Verdict.NEW, f"was {b.status}"
        return row
    if b_ok and not n_ok:
        first_line = n.message.splitlines()[0][:80] if n.message else ""
        row.verdict, row.note = Verdict.BROKEN, f"now {n.status}" + (f": {first_line}" if first_line else "")
        return row
    if n_ok and not b_ok:
        row.verdict, row.note = Verdict.FIXED, f"was {b.status}"
        return row
    if not (b_ok and n_ok):
        row.note = f"{b.status} -> {n.status}"
        return row
    if not (_timed(b) and _timed(n)):
        row.verdict, row.note = Verdict.UNCERTAIN, "fewer than 2 raw samples on a side"
        return row
    assert b.timing is not None and n.timing is not None
    refs: tuple[Sequence[float] | None, Sequence[float] | None] = (None, None)
    if settings.normalize:
        if b.reference_timing is None or n.reference_timing is None or \
                len(b.reference_timing.samples_ms) < 2 or len(n.reference_timing.samples_ms) < 2:
            row.verdict, row.note = Verdict.UNCERTAIN, "no reference samples to normalize by"
            return row
        refs = (b.reference_timing.samples_ms, n.reference_timing.samples_ms)
    row.interval = bootstrap_ratio(b.timing.samples_ms, n.timing.samples_ms, settings, *refs)
    row.verdict = decide(row.interval, settings.threshold)
    noisy = [side for side, t in (("base", b), ("new", n)) if any(f.startswith("NOISY") for f in t.flags)]
    few = [side for side, t in (("base", b), ("new", n)) if len(t.timing.samples_ms) < MIN_SAMPLES]  # type: ignore[union-attr]
    why = [f"{' and '.join(noisy)} NOISY"] if noisy else []
    why += [f"{' and '.join(few)} under {MIN_SAMPLES} samples"] if few else []
    if why:
        row.note = "; ".join(why)
        if row.verdict in (Verdict.FASTER, Verdict.SLOWER) and not settings.strict:
            row.note += f" ({row.verdict} by the samples; --strict calls it)"
            row.verdict = Verdict.UNCERTAIN
    return row


def settings_differ(base: Any, new: Any) -> list[str]:
    """What differs between two reports' runs that changes the numbers: cache mode, timer, graphs,
    fresh inputs, the timers that produced the samples, the problems."""
    out = []  # the device is said by the caller, with what --normalize does about it
    b_bench = (base.parts[0].bench or {}) if base.parts else {}
    n_bench = (new.parts[0].bench or {}) if new.parts else {}
    for key in ("cache", "timer", "cuda_graph", "fresh_inputs", "mode"):
        if b_bench.get(key) != n_bench.get(key):
            out.append(f"{key}: {b_bench.get(key)} vs {n_bench.get(key)}")
    modes = [sorted({t.timing.mode for t in r.traces if t.timing is not None}) for r in (base, new)]
    if modes[0] and modes[1] and modes[0] != modes[1]:
        out.append(f"timers: {', '.join(modes[0])} vs {', '.join(modes[1])}")
    problems = [sorted({t.definition for t in r.traces}) for r in (base, new)]
    if problems[0] != problems[1]:
        out.append(f"problems: {', '.join(problems[0]) or '-'} vs {', '.join(problems[1]) or '-'}")
    return out


def compare_traces(base: Sequence[Trace], new: Sequence[Trace], settings: Settings = Settings()) -> list[Row]:
    """One row per (definition, workload, solution) in either run, except those skipped in both;
    new's order, then base-only rows."""
    key = lambda t: (t.definition, t.workload, t.solution)  # noqa: E731
    by_key = {key(t): t for t in base}
    rows = []
    for n in new:
        b = by_key.pop(key(n), None)
        if b is not None and b.status == n.status == Status.SKIPPED:
            continue  # not for this device in either run: nothing to say
        if b is None:
            rows.append(Row(n.definition, n.workload, n.solution, Verdict.NEW,
                            new_ms=n.timing.median_ms if n.timing else None, new_n=n.timing.n if n.timing else 0))
        else:
            rows.append(compare_pair(b, n, settings))
    for b in by_key.values():
        rows.append(Row(b.definition, b.workload, b.solution, Verdict.MISSING,
                        base_ms=b.timing.median_ms if b.timing else None, base_n=b.timing.n if b.timing else 0))
    return rows


def _pct(x: float) -> str:
    return f"{(x - 1.0) * 100:+.1f}%"


def _cells(r: Row, marks: bool) -> list[str]:
    iv = r.interval
    verdict = f"{MARK[r.verdict]} {r.verdict}" if marks else str(r.verdict)
    return [r.definition, r.workload, r.solution, fmt_time(r.base_ms), fmt_time(r.new_ms),
            _pct(iv.ratio) if iv else "-", f"[{_pct(iv.lo)}, {_pct(iv.hi)}]" if iv else "-", verdict, r.note]


def headers(settings: Settings) -> list[str]:
    what = "change (norm.)" if settings.normalize else "change"
    return ["problem", "workload", "solution", "base", "new", what, f"{settings.confidence:.0%} CI", "verdict", "note"]


def counts(rows: Sequence[Row]) -> dict[str, int]:
    out: dict[str, int] = {}
    for r in rows:
        out[str(r.verdict)] = out.get(str(r.verdict), 0) + 1
    return out


def summary_line(rows: Sequence[Row], settings: Settings, bold: bool = False) -> str:
    order = list(Verdict)
    c = counts(rows)
    parts = []
    for v in order:
        if c.get(str(v)):
            text = f"{c[str(v)]} {v.value.lower()}"
            parts.append(f"**{text}**" if bold and v in REGRESSIONS else text)
    how = f"threshold ±{settings.threshold:.1%}, {settings.confidence:.0%} bootstrap interval of the median ratio"
    return f"{', '.join(parts) or 'nothing to compare'} ({how}{', normalized by the reference' if settings.normalize else ''})"


def render_table(rows: Sequence[Row], settings: Settings, fmt: str = "simple") -> str:
    table = tabulate([_cells(r, False) for r in rows], headers=headers(settings), tablefmt=fmt, disable_numparse=True)
    return f"{table}\n\n{summary_line(rows, settings)}"


def render_markdown(rows: Sequence[Row], settings: Settings, base_name: str, new_name: str) -> str:
    """For a GitHub job summary or a PR comment: regressions first, then everything else."""
    ranked = sorted(rows, key=lambda r: (r.verdict not in REGRESSIONS, r.verdict != Verdict.FASTER))
    table = tabulate([_cells(r, True) for r in ranked], headers=headers(settings), tablefmt="github",
                     disable_numparse=True)
    return (f"### opbench: `{base_name}` → `{new_name}`\n\n{summary_line(rows, settings, bold=True)}\n\n{table}\n")


def exit_code(rows: Sequence[Row], fail_on_regression: bool, strict: bool) -> int:
    bad = STRICT if strict else REGRESSIONS if fail_on_regression else set()
    return 1 if any(r.verdict in bad for r in rows) else 0
