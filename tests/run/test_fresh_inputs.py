"""Every timed call sees new inputs, and the parent re-checks timed samples on inputs it redraws
itself: caches keyed on input contents never hit, fixed data is flagged (real workers, CPU)."""
from __future__ import annotations

from pathlib import Path

import yaml

from factories import FAST_BENCH
from harness.execute.inputs import CPU_CHUNK
from harness.results.trace import Status
from harness.run.runner import Runner, RunOptions
from harness.spec.manifest import load_manifest

# A permutation-invariant problem (a roll of x gives the same answer) with an integer index input.
SORTED_GATHER = {
    "schema_version": 1,
    "definition": {
        "name": "sorted_gather", "description": "sort x; gather a table at idx",
        "axes": {"n": {"type": "var"}},
        "inputs": {"x": {"shape": ["n"], "dtype": "float32"}, "idx": {"shape": ["n"], "dtype": "int64"},
                   "table": {"shape": [64], "dtype": "float32"}},
        "outputs": {"s": {"shape": ["n"], "dtype": "float32"}, "g": {"shape": ["n"], "dtype": "float32"}},
        "reference": "import torch\n\ndef run(x, idx, table):\n    return torch.sort(x).values, table[idx]\n",
    },
    "workloads": [{"id": "n", "axes": {"n": 4 * CPU_CHUNK},  # large: redrawn from pools (inputs.Redraw)
                   "inputs": {"idx": {"type": "randint", "low": 0, "high": 64}}}],
    "bench": {**FAST_BENCH, "max_time_s": 0.5},
}

# Caches keyed on what a permutation and an untouched randint input cannot change; each hit is logged.
CACHING = '''import torch

_seen = {}


def run(x, idx, table):
    key = (float(x.sum()), float(x.amax()), hash(idx.numpy().tobytes()), float(table.sum()))
    if key in _seen:
        print("HIT", flush=True)
        return tuple(t.clone() for t in _seen[key])
    _seen[key] = (torch.sort(x).values, table[idx])
    return tuple(t.clone() for t in _seen[key])
'''


def _run(tmp: Path, doc: dict) -> object:
    (tmp / "caching.py").write_text(CACHING)
    doc = {**doc, "solutions": [{"name": "caching", "language": "pytorch", "entry_point": "caching.py::run"}]}
    path = tmp / "m.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return Runner(load_manifest(path), RunOptions(device="cpu", run_seed=3, log_dir=tmp / "logs")).run().traces[0]


def test_a_content_cache_never_hits_on_fresh_draws(tmp_path: Path) -> None:
    trace = _run(tmp_path, SORTED_GATHER)
    assert trace.status == Status.PASSED, trace.message
    assert "HIT" not in (tmp_path / "logs" / "caching.log").read_text()
    assert "CACHEABLE" not in trace.flags
    assert trace.correctness["timed_rechecks"]  # timed samples were re-checked on the parent's redraws


def test_fixed_inputs_are_flagged_cacheable(tmp_path: Path) -> None:
    doc = {**SORTED_GATHER, "workloads": [{"id": "n", "axes": {"n": 4096}, "inputs": {
        "x": {"type": "ones"}, "idx": {"type": "scalar", "value": 3}, "table": {"type": "ones"}}}]}
    trace = _run(tmp_path, doc)
    assert trace.status == Status.PASSED, trace.message
    assert "CACHEABLE" in trace.flags  # the cache does hit here, and the report says it could
    assert "HIT" in (tmp_path / "logs" / "caching.log").read_text()
