"""Sharding: deterministic, balanced, and every workload in exactly one shard."""
from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from harness.errors import InputError

from harness.spec.manifest import load_suite
from harness.spec.shard import Shard, Unit, restrict, select, split, units_of
from harness.run.suite import plan_of

from opbench_data import write_suite


def fake_suite(sizes: list[int]) -> list[SimpleNamespace]:
    return [SimpleNamespace(workloads=[SimpleNamespace(id=f"p{p}w{i}") for i in range(n)]) for p, n in enumerate(sizes)]


@pytest.mark.parametrize("count", [1, 2, 3, 4, 7, 20])
def test_every_unit_in_exactly_one_shard(count: int) -> None:
    units = units_of(fake_suite([5, 1, 3, 0, 4]))
    shards = [select(units, Shard(i, count)) for i in range(1, count + 1)]
    flat = [u for s in shards for u in s]
    assert sorted(flat) == sorted(units) and len(flat) == len(set(flat)) == 13
    sizes = [len(s) for s in shards]
    assert max(sizes) - min(sizes) <= 1  # balanced
    assert shards == [select(units, Shard(i, count)) for i in range(1, count + 1)]  # deterministic


def test_parse() -> None:
    assert Shard.parse("2/4") == Shard(2, 4) and str(Shard.parse(" 1 / 3 ")) == "1/3"
    assert Shard(2, 4).slug == "shard-2-of-4"
    for bad in ("0/3", "4/3", "1/0", "a/b", "1-3", ""):
        with pytest.raises(InputError):
            Shard.parse(bad)


def test_restrict_cuts_manifests_to_their_units(tmp_path: Path) -> None:
    manifests = load_suite(write_suite(tmp_path, sizes=(8, 16, 32)))
    units = units_of(manifests)
    assert units[:3] == [Unit(0, "n8"), Unit(0, "n16"), Unit(0, "n32")]
    cut = restrict(manifests, select(units, Shard(2, 4)))  # 6 units in runs of 2, 2, 1, 1: units 2 and 3
    assert [(i, m.definition.name, [w.id for w in m.workloads]) for i, m in cut] == [(0, "vadd", ["n32"]), (1, "vmul", ["n8"])]


def test_a_problems_workloads_stay_on_as_few_shards_as_can_be() -> None:
    """Each shard pays the start of every problem it touches: 4 problems of 5 workloads on 4 shards are
    one problem a shard (round-robin had put every problem on all four), and a problem is cut at most
    once at each shard boundary."""
    units = units_of(fake_suite([5, 5, 5, 5]))
    assert [{u.problem for u in select(units, Shard(i, 4))} for i in range(1, 5)] == [{0}, {1}, {2}, {3}]
    units = units_of(fake_suite([5] * 200))
    touched = [len({u.problem for u in select(units, Shard(i, 8))}) for i in range(1, 9)]
    assert sum(touched) <= 200 + 7 and max(touched) <= 27  # 125 units a shard: 25 problems, 27 if cut at both ends


def test_merge_reads_the_same_split_from_a_plan(tmp_path: Path) -> None:
    """`merge` recomputes each shard's share from the plan in the report; it must match `select`."""
    manifests = load_suite(write_suite(tmp_path, sizes=(8, 16, 32)))
    plan = plan_of("suite", tmp_path / "suite.yaml", manifests)
    assert plan.units() == units_of(manifests)
    for i in (1, 2, 3):
        share = {(manifests[u.problem].definition.name, u.workload) for u in select(units_of(manifests), Shard(i, 3))}
        keys = plan.keys(select(plan.units(), Shard(i, 3)))
        assert {(d, w) for d, w, _ in keys} == share
    assert split([Unit(0, "a")], 3) == [[Unit(0, "a")], [], []]
