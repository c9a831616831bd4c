"""merge: shards back into one report, in suite order, refusing what cannot be one run."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from dataclasses import replace

from harness.cli import main
from harness.results.merge import MergeError, merge
from harness.results.report import Report, Shards
from harness.results.trace import Status

from opbench_data import load, plan, report, samples, trace, write_suite

from factories import ROOT
PLAN = plan("s", [("p", ["x", "y"], ["w1", "w2", "w3"]), ("q", ["z"], ["w1"])])


def shard_report(index: int, keys: list[tuple[str, str, str]], status: Status = Status.PASSED) -> Report:
    traces = [trace(s, w, d, status=status, sol_ms=samples(1.0, n=5)) for d, w, s in keys]
    return report(traces, suite=PLAN, shards=Shards(2, (index,)))


# units in plan order: p/w1, p/w2, p/w3, q/w1 -> contiguous runs: shard 1 gets p/w1 and p/w2, shard 2 p/w3 and q/w1
SHARD1 = [("p", "w1", "x"), ("p", "w2", "x"), ("p", "w1", "y"), ("p", "w2", "y")]
SHARD2 = [("q", "w1", "z"), ("p", "w3", "y"), ("p", "w3", "x")]


def test_merge_restores_suite_order() -> None:
    merged = merge([shard_report(2, SHARD2), shard_report(1, SHARD1)])
    order = [(t.definition, t.workload, t.solution) for t in merged.traces]
    assert order == [("p", "w1", "x"), ("p", "w2", "x"), ("p", "w3", "x"), ("p", "w1", "y"), ("p", "w2", "y"),
                     ("p", "w3", "y"), ("q", "w1", "z")]
    assert merged.shards == Shards(2, (1, 2)) and merged.summary.ok
    assert merged.summary.total == 7 and len(merged.parts) == 2


def test_merge_refuses_what_is_not_one_run() -> None:
    with pytest.raises(MergeError, match="2/2 missing"):
        merge([shard_report(1, SHARD1)])
    with pytest.raises(MergeError, match="more than once"):
        merge([shard_report(1, SHARD1), shard_report(1, SHARD1)])
    with pytest.raises(MergeError, match="in no report"):
        merge([shard_report(1, SHARD1), shard_report(2, SHARD2[:2])])
    other = replace(shard_report(2, SHARD2), suite=replace(PLAN, problems=PLAN.problems[:1]))
    with pytest.raises(MergeError, match="different suites"):
        merge([shard_report(1, SHARD1), other])
    dup = report([trace("x", "w1", "p"), trace("x", "w1", "p")])
    with pytest.raises(MergeError, match="more than one report"):
        merge([dup])


def test_the_fixtures_are_the_shares_the_split_gives() -> None:
    from harness.results.merge import expected_keys
    for index, keys in ((1, SHARD1), (2, SHARD2)):
        assert {(d, w) for d, w, _ in expected_keys(PLAN, Shards(2, (index,)))} == {(d, w) for d, w, _ in keys}


def test_shards_cut_by_another_scheme_do_not_merge() -> None:
    """A report without the split it was cut by is from an opbench that dealt units round-robin: its share is
    not the one this split gives, so merging it with a new shard would lose or double rows."""
    old = replace(shard_report(2, SHARD2), shards=Shards(2, (2,), "round-robin"))
    with pytest.raises(MergeError, match="round-robin"):
        merge([shard_report(1, SHARD1), old])
    data = shard_report(1, SHARD1).to_json()
    del data["shards"]["split"]
    assert Report.from_json(data).shards == Shards(2, (1,), "round-robin")
    assert Report.from_json(shard_report(1, SHARD1).to_json()).shards.split == "contiguous"


def test_partial_merge_is_not_ok() -> None:
    merged = merge([shard_report(1, SHARD1)], allow_partial=True)
    assert len(merged.traces) == 4 and not merged.summary.ok
    failed = merge([shard_report(1, SHARD1), shard_report(2, SHARD2, Status.RUNTIME_ERROR)])
    assert not failed.summary.ok and failed.summary.by_status["RUNTIME_ERROR"] == 3


def test_shards_run_and_merge_end_to_end(tmp_path: Path) -> None:
    """Two CLI shard runs of a two-problem suite, then `harness merge`: each result exactly once."""
    suite = write_suite(tmp_path / "suite", sizes=(64,))
    out = tmp_path / "out"
    for i in (1, 2):
        proc = subprocess.run([sys.executable, "-m", "harness", "run", str(suite), "--device", "cpu", "--shard", f"{i}/2",
                               "--out", str(out), "--seed", "5", "--quiet"], capture_output=True, text=True, cwd=ROOT,
                              timeout=300)
        assert proc.returncode == 0, proc.stderr
    shards = sorted(out.glob("suite-tiny-cpu-shard-*-of-2.json"))
    assert [len(load(p)["traces"]) for p in shards] == [1, 1]
    merged = tmp_path / "merged.json"
    assert main(["merge", *map(str, shards), "--out", str(merged)]) == 0
    data = load(merged)
    assert [(t["definition"], t["workload"]) for t in data["traces"]] == [("vadd", "n64"), ("vmul", "n64")]
    assert data["summary"]["ok"] and data["run_seed"] == 5 and merged.with_suffix(".jsonl").is_file()
    assert main(["merge", str(shards[0]), "--out", str(tmp_path / "part.json")]) == 2
    assert main(["merge", str(shards[0]), "--out", str(tmp_path / "part.json"), "--allow-partial"]) == 1
    assert json.loads((tmp_path / "part.json").read_text())["summary"]["missing"] == 1
