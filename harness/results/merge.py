"""Joining reports: the problems of a suite, the devices of one host, the shards of a CI matrix.

One function serves all three so a merged report looks the same however it was split. Traces are
put back in suite order (problem, solution, workload: the order a single-process run produces),
a trace present twice is an error, and the shards of a matrix must all be there exactly once
unless a partial merge is asked for.
"""
from __future__ import annotations

from typing import Sequence

from harness.results.report import Failure, Key, Report, ReportError, Shards, SuitePlan, now
from harness.results.trace import Trace
from harness.spec.shard import foreign_split, split


class MergeError(ReportError):
    """The reports do not fit together (different suites, a shard twice, a trace twice, a shard missing)."""


def key_of(t: Trace) -> Key:
    return t.definition, t.workload, t.solution


def _order(suite: SuitePlan | None, traces: list[Trace]) -> list[Trace]:
    rank = {k: i for i, k in enumerate(suite.keys() if suite else [])}
    first_seen = {key_of(t): i for i, t in enumerate(traces)}
    return sorted(traces, key=lambda t: (rank.get(key_of(t), len(rank)), first_seen[key_of(t)]))


def _shards(reports: Sequence[Report]) -> Shards | None:
    """Union of the shards behind `reports`; a shard count that disagrees or a shard twice is an error."""
    counts, indices = set(), []
    for r in reports:
        if r.shards:
            if (why := foreign_split(r.shards.split)):
                raise MergeError(f"shard(s) {', '.join(map(str, r.shards.indices))} of {r.shards.count}: {why}")
            counts.add(r.shards.count)
            indices.extend(r.shards.indices)
    if not counts:
        return None
    if len(counts) > 1:
        raise MergeError(f"reports come from different splits: shard counts {sorted(counts)}")
    twice = sorted({i for i in indices if indices.count(i) > 1})
    if twice:
        raise MergeError(f"shard(s) {', '.join(map(str, twice))} given more than once")
    return Shards(counts.pop(), tuple(sorted(indices)))


def expected_keys(suite: SuitePlan | None, shards: Shards | None) -> list[Key]:
    """Every trace the suite (only the given shards' share) produces, in run order."""
    if suite is None:
        return []
    units = suite.units()
    if shards is None:
        return suite.keys(units)
    return suite.keys(u for i in shards.indices for u in split(units, shards.count)[i - 1])


def merge(reports: Sequence[Report], *, allow_partial: bool = False, failures: Sequence[Failure] = (),
          suite: SuitePlan | None = None, shards: Shards | None = None) -> Report:
    """One report from several; raises MergeError when they cannot be one run's results.

    `suite` and `shards` default to what the reports say; a run passes them, since its parts (one per
    problem, or per device child) each hold a share of one shard and say neither."""
    suites = [r.suite for r in reports if r.suite]
    suite = suite or (suites[0] if suites else None)
    if suite is not None and any(s.signature() != suite.signature() for s in suites):
        raise MergeError("reports come from different suites (problems, workloads or solutions differ)")
    explicit_shards = shards is not None  # a run of one shard says so; only `merge` needs all of them
    shards = shards or _shards(reports)

    traces: list[Trace] = []
    seen: set[Key] = set()
    for r in reports:
        for t in r.traces:
            k = key_of(t)
            if k in seen:
                raise MergeError(f"{'/'.join(k)} is in more than one report")
            seen.add(k)
            traces.append(t)

    # a run of one shard answers for that shard; a merge, for the whole suite
    missing = [k for k in expected_keys(suite, shards if explicit_shards else None) if k not in seen]
    if not allow_partial:
        if shards is not None and not shards.complete and not explicit_shards:
            absent = ", ".join(f"{i}/{shards.count}" for i in range(1, shards.count + 1) if i not in shards.indices)
            raise MergeError(f"shard(s) {absent} missing (pass --allow-partial to merge what is there)")
        if missing:
            raise MergeError(f"{len(missing)} result(s) of the suite are in no report, e.g. {'/'.join(missing[0])}")
    return Report(traces=tuple(_order(suite, traces)), parts=tuple(p for r in reports for p in r.parts), created=now(),
                  suite=suite, shards=shards, failures=tuple(f for r in reports for f in r.failures) + tuple(failures),
                  missing=len(missing))
