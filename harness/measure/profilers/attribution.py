"""Turn a profiler's kernel list into per-call times for the kernels a bench module names.

The rule (from the bench-module contract): a profiled kernel counts when its name equals a name in
`# kernels:` or that name plus `_kernel`. Everything else (cache flushes, copies, other ops) is
left out and listed, so a reader can see what was not counted. When nothing matches, or the
matches do not split evenly over the calls, attribution fails instead of reporting a wrong time.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Iterable, Sequence

from harness.measure.devices.activities import AttributionError  # one error for "cannot attribute", timer and bench modes alike


@dataclass(frozen=True)
class KernelRecord:
    """One device task from a profiler: name, duration and (where the format has it) start time."""

    name: str
    duration_us: float
    start_us: float | None = None
    type: str = ""
    core: str = ""
    nested: bool = False  # inside another profiled op (CPU ops): matched by name, not added to total-op again


@dataclass
class Attribution:
    samples_ms: list[float]                     # one per active call, named kernels summed
    kernels: dict[str, int]                     # matched kernel name -> rows counted (active calls)
    per_call: int                               # matched kernel launches per call
    missing: list[str] = field(default_factory=list)      # named kernels never seen
    unmatched: dict[str, int] = field(default_factory=dict)  # other kernels in the profile
    ops_us: dict[str, float] = field(default_factory=dict)   # every profiled op/kernel: its time per call
    total_op_us: float = 0.0                                 # all device work in the window, per call

    def describe(self) -> str:
        counted = ", ".join(f"{k} x{v}" for k, v in sorted(self.kernels.items()))
        return f"{counted} ({self.per_call}/call)"


def kernel_matches(name: str, kernels: Sequence[str]) -> str | None:
    """The `# kernels:` entry `name` counts for, or None."""
    for k in kernels:
        if name == k or name == f"{k}_kernel":
            return k
    return None


def attribute_totals(totals: Sequence[tuple[str, int, float]], kernels: Sequence[str], calls: int,
                     source: str, required: Sequence[str] = ()) -> Attribution:
    """From per-op totals only (op_statistic.csv): one sample, the named kernels' mean time per call.
    Totals cannot be split into calls, so there is no distribution; the count must still divide."""
    matched = [(name, count, total) for name, count, total in totals if kernel_matches(name, kernels)]
    if not matched:
        raise AttributionError(f"{source}: no op type named {' or '.join(kernels)} among {len(totals)} rows")
    launches = sum(count for _, count, _ in matched)
    if launches % calls:
        raise AttributionError(f"{source}: {launches} launches do not split evenly over {calls} calls")
    seen = {kernel_matches(name, kernels) for name, _, _ in matched}
    never = [k for k in required if k not in seen]
    if never:
        raise AttributionError(f"{source}: kernel(s) {', '.join(never)} named in the header never ran")
    ops = {name: total / calls for name, _, total in totals}
    return Attribution(samples_ms=[sum(t for _, _, t in matched) / calls / 1e3],
                       kernels={name: count for name, count, _ in matched}, per_call=launches // calls,
                       missing=[k for k in kernels if k not in seen],
                       unmatched={name: count for name, count, _ in totals if not kernel_matches(name, kernels)},
                       ops_us=ops, total_op_us=sum(ops.values()))


def _top(counter: Counter[str], n: int = 8) -> str:
    return ", ".join(f"{name} x{c}" for name, c in counter.most_common(n)) or "no kernels at all"


def _device_work(rows: Sequence[KernelRecord], kernels: Sequence[str], calls: int,
                 harness_ops: Sequence[str]) -> dict[str, float]:
    """Every profiled op's time per call, the harness's own (its cache flush) left out."""
    ops: dict[str, float] = {}
    for r in rows:
        if not r.nested and (r.name not in harness_ops or kernel_matches(r.name, kernels)):
            ops[r.name] = ops.get(r.name, 0.0) + r.duration_us / calls
    return ops


def attribute_total_op(records: Iterable[KernelRecord], calls: int, source: str = "profile",
                       harness_ops: Sequence[str] = ()) -> Attribution:
    """The `total-op` metric alone (asked for explicitly): all device work in the window per call,
    names not needed (a torch-module's kernels are torch's, which no header names). Totals cannot be
    split into calls without names, so this is one sample, the mean, as op_statistic.csv gives."""
    rows = list(records)
    ops = _device_work(rows, (), calls, harness_ops)
    if not ops:
        raise AttributionError(f"{source}: no device work recorded in {calls} calls")
    total = sum(ops.values())
    return Attribution(samples_ms=[total / 1e3], kernels={}, per_call=0, ops_us=ops, total_op_us=total)


def attribute(records: Iterable[KernelRecord], kernels: Sequence[str], calls: int, skip: int = 0,
              source: str = "profile", required: Sequence[str] = (), harness_ops: Sequence[str] = ()) -> Attribution:
    """Split the named kernels' rows over `calls` calls (in start order) and drop the first `skip`.

    Each call must have launched the same number of matching kernels; otherwise rows cannot be
    assigned to calls and the result would be wrong, so this raises. A `required` kernel (one the
    bench module's header names) that never ran raises too: the time would leave part of the
    operator out. `ops_us` and `total_op_us` count every profiled row but the harness's own
    (`harness_ops`: its cache flush), per call: the `total-op` metric.
    """
    if not kernels:
        raise AttributionError("the bench module names no kernels ('# kernels:' is empty); profiler modes need them")
    if calls <= skip:
        raise AttributionError(f"need more calls ({calls}) than skipped warmup calls ({skip})")
    rows = list(records)
    if any(r.start_us is not None for r in rows):
        rows.sort(key=lambda r: (r.start_us is None, r.start_us or 0.0))
    matched = [r for r in rows if kernel_matches(r.name, kernels)]
    others = Counter(r.name for r in rows if not kernel_matches(r.name, kernels))
    if not matched:
        raise AttributionError(f"{source}: no kernel named {' or '.join(kernels)} (or <name>_kernel) among "
                               f"{len(rows)} profiled kernels: {_top(others)}; name the kernels in '# kernels:', "
                               f"or time all device work of a call (run-bench -m total-op)")
    if len(matched) % calls:
        raise AttributionError(f"{source}: {len(matched)} launches of {', '.join(sorted({r.name for r in matched}))} "
                               f"do not split evenly over {calls} calls; cannot tell which call each belongs to")
    per_call = len(matched) // calls
    active = matched[skip * per_call:]
    samples = [sum(r.duration_us for r in active[i:i + per_call]) / 1e3 for i in range(0, len(active), per_call)]
    seen = {kernel_matches(r.name, kernels) for r in matched}
    never = [k for k in required if k not in seen]
    if never:
        raise AttributionError(f"{source}: kernel(s) {', '.join(never)} named in the header never ran (profiled: "
                               f"{_top(Counter(r.name for r in rows))}); a time without them would undercount")
    ops = _device_work(rows, kernels, calls, harness_ops)
    return Attribution(samples_ms=samples, kernels=dict(Counter(r.name for r in active)), per_call=per_call,
                       missing=[k for k in kernels if k not in seen], unmatched=dict(others), ops_us=ops,
                       total_op_us=sum(ops.values()))
