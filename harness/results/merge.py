"""Joining reports: the problems of a suite, the devices of one host, the shards of a CI matrix.

One function serves all three so a merged report looks the same however it was split. Traces are
put back in suite order (problem, solution, workload: the order a single-process run produces),
a trace present twice is an error, and the shards of a matrix must all be there exactly once
unless a partial merge is asked for.
"""
from __future__ import annotations

from datetime import datetime, timezone
from typing import Any, Sequence

from harness.results.report import FORMAT, format_problem, summary
from harness.spec.shard import Unit, split
from harness.results.trace import Trace

Key = tuple[str, str, str]  # definition, workload, solution
META_SKIP = {"traces", "summary", "parts", "failures", "suite", "shards", "missing"}


class MergeError(ValueError):
    """The reports do not fit together (different suites, a shard twice, a trace twice, a shard missing)."""


def key_of(trace: dict[str, Any]) -> Key:
    return trace["definition"], trace["workload"], trace["solution"]


def part_meta(report: dict[str, Any]) -> list[dict[str, Any]]:
    """What each single-problem run behind `report` was (device, seed, bench, environment), no traces."""
    if "parts" in report:
        return [dict(p) for p in report["parts"]]
    meta = {k: v for k, v in report.items() if k not in META_SKIP}
    meta["traces"] = len(report.get("traces", []))
    return [meta]


def expected_keys(suite: dict[str, Any] | None, shards: dict[str, Any] | None = None) -> list[Key]:
    """Every trace a run of the suite plan produces (only the given shards' share), in run order."""
    if not suite:
        return []
    problems = suite["problems"]
    units = units_of_plan(suite)
    keep = set(units) if shards is None else {u for i in shards["indices"] for u in split(units, shards["count"])[i - 1]}
    return [(p["definition"], w, s) for i, p in enumerate(problems) for s in p["solutions"] for w in p["workloads"]
            if Unit(i, w) in keep]


def units_of_plan(suite: dict[str, Any]) -> list[Unit]:
    """The same units, in the same order, as `shard.units_of` gives for the manifests of the plan."""
    return [Unit(i, w) for i, p in enumerate(suite["problems"]) for w in p["workloads"]]


def _order(suite: dict[str, Any] | None, traces: list[dict[str, Any]]) -> list[dict[str, Any]]:
    rank = {k: i for i, k in enumerate(expected_keys(suite))}
    first_seen = {key_of(t): i for i, t in enumerate(traces)}
    return sorted(traces, key=lambda t: (rank.get(key_of(t), len(rank)), first_seen[key_of(t)]))


def _signature(suite: dict[str, Any] | None) -> list[tuple[str, list[str], list[str]]]:
    """What must agree between reports of one suite; paths may differ between the machines of a matrix."""
    return [(p["definition"], p["solutions"], p["workloads"]) for p in (suite or {}).get("problems", [])]


def _common(values: list[Any], mixed: Any) -> Any:
    return values[0] if values and all(v == values[0] for v in values) else mixed


def _shards(reports: Sequence[dict[str, Any]]) -> dict[str, Any] | None:
    """Union of the shards behind `reports`; a shard count that disagrees or a shard twice is an error."""
    counts, indices = set(), []
    for r in reports:
        if r.get("shards"):
            counts.add(r["shards"]["count"])
            indices.extend(r["shards"]["indices"])
    if not counts:
        return None
    if len(counts) > 1:
        raise MergeError(f"reports come from different splits: shard counts {sorted(counts)}")
    twice = sorted({i for i in indices if indices.count(i) > 1})
    if twice:
        raise MergeError(f"shard(s) {', '.join(map(str, twice))} given more than once")
    return {"count": counts.pop(), "indices": sorted(indices)}


def merge_reports(reports: Sequence[dict[str, Any]], *, allow_partial: bool = False,
                  failures: Sequence[dict[str, Any]] = (), suite: dict[str, Any] | None = None,
                  shards: dict[str, Any] | None = None, created: datetime | None = None) -> dict[str, Any]:
    """One report from several; raises MergeError when they cannot be one run's results.

    `suite` and `shards` default to what the reports say; a multi-device parent passes them, since
    its children each hold a share of one shard and say neither."""
    if not reports:
        raise MergeError("nothing to merge")
    for r in reports:
        problem = format_problem(r)
        if problem:
            raise MergeError(problem)
    suites = [r["suite"] for r in reports if r.get("suite")]
    suite = suite or (suites[0] if suites else None)
    if any(_signature(s) != _signature(suite) for s in suites):
        raise MergeError("reports come from different suites (problems, workloads or solutions differ)")
    explicit_shards = shards is not None  # a run of one shard says so; only `merge` needs all of them
    shards = shards or _shards(reports)

    traces: list[dict[str, Any]] = []
    seen: set[Key] = set()
    for r in reports:
        for t in r.get("traces", []):
            k = key_of(t)
            if k in seen:
                raise MergeError(f"{'/'.join(k)} is in more than one report")
            seen.add(k)
            traces.append(t)
    traces = _order(suite, traces)

    all_failures = [f for r in reports for f in r.get("failures", [])] + list(failures)
    # a run of one shard answers for that shard; a merge, for the whole suite
    missing = [list(k) for k in expected_keys(suite, shards if explicit_shards else None) if k not in seen]
    complete_shards = shards is None or len(shards["indices"]) == shards["count"]
    if not allow_partial:
        if shards is not None and not complete_shards and not explicit_shards:
            n = shards["count"]
            absent = ", ".join(f"{i}/{n}" for i in range(1, n + 1) if i not in shards["indices"])
            raise MergeError(f"shard(s) {absent} missing (pass --allow-partial to merge what is there)")
        if missing:
            raise MergeError(f"{len(missing)} result(s) of the suite are in no report, e.g. {'/'.join(missing[0])}")

    parts = [p for r in reports for p in part_meta(r)]
    definitions = list(dict.fromkeys(t["definition"] for t in traces)) or [p.get("definition") for p in parts]
    out_summary = summary([Trace.from_dict(t) for t in traces])
    out_summary["failures"] = len(all_failures)
    out_summary["ok"] = bool(out_summary["ok"] and not all_failures)
    if missing:  # only with allow_partial: a run with holes is not a passing run
        out_summary["missing"] = len(missing)
        out_summary["ok"] = False
    return {
        "format": FORMAT,
        "created": (created or datetime.now(timezone.utc)).isoformat(),
        "manifest": suite["path"] if suite else _common([p.get("manifest") for p in parts], None),
        "definition": definitions[0] if len(definitions) == 1 else (suite["name"] if suite else "+".join(map(str, definitions))),
        "device": _common([p.get("device") for p in parts], "mixed"),
        "run_seed": _common([p.get("run_seed") for p in parts], None),
        "bench": _common([p.get("bench") for p in parts], None),
        "environment": parts[0].get("environment", {}) if parts else {},
        "summary": out_summary,
        "traces": traces,
        "suite": suite,
        "shards": shards,
        "parts": parts,
        "failures": all_failures,
    }
