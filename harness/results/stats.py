"""Statistics of a timed series, pure Python (no numpy, no torch): the stopping rule, the report's
summary and `compare`'s bootstrap all read samples through these, so they agree by construction."""
from __future__ import annotations

import math
import statistics
from typing import Sequence

from harness.results.trace import TimingStats


def quantile(sorted_xs: Sequence[float], q: float) -> float:
    """Linear-interpolated quantile of already sorted data (numpy's default method)."""
    if not sorted_xs:
        return math.nan
    pos = (len(sorted_xs) - 1) * q
    lo, hi = math.floor(pos), math.ceil(pos)
    return sorted_xs[lo] + (sorted_xs[hi] - sorted_xs[lo]) * (pos - lo)


def rse_of_median(samples: Sequence[float]) -> float:
    """Relative standard error of the median, with a robust spread (IQR/1.349) so rare outliers
    (a preempted sample) do not keep the rule from ever being met."""
    n = len(samples)
    if n < 3:
        return math.inf
    xs = sorted(samples)
    med = quantile(xs, 0.5)
    if med <= 0:
        return math.inf
    sigma = (quantile(xs, 0.75) - quantile(xs, 0.25)) / 1.349
    return 1.2533 * sigma / math.sqrt(n) / med


def median(xs: Sequence[float]) -> float:
    return quantile(sorted(xs), 0.5)


def summarize(samples: Sequence[float], rule_met: bool, reason: str, wall_s: float, mode: str, cache: str) -> TimingStats:
    xs = sorted(samples)
    q1, med, q3 = quantile(xs, 0.25), quantile(xs, 0.5), quantile(xs, 0.75)
    return TimingStats(
        median_ms=med, q1_ms=q1, q3_ms=q3, iqr_ms=q3 - q1, min_ms=xs[0], mean_ms=statistics.fmean(xs),
        std_ms=statistics.stdev(xs) if len(xs) > 1 else 0.0, n=len(xs), rse=rse_of_median(xs), rule_met=rule_met,
        stop_reason=reason, measured_ms=sum(xs), wall_s=wall_s, mode=mode, cache=cache, samples_ms=list(samples),
        iqm_ms=statistics.fmean([x for x in xs if q1 <= x <= q3] or [med]))
