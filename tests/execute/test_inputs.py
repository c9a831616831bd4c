"""Input generation is deterministic per seed and follows each generator's parameters."""
from __future__ import annotations

import threading
from dataclasses import replace

import torch
from safetensors.torch import save_file

from harness.execute.inputs import (CPU_CHUNK, POOL_MIN_SPAN, Redraw, allocate_outputs, fill_random, generate_inputs,
                                    has_fresh_inputs, mix_seed, poison, pool_bytes)
from harness.spec.manifest import load_manifest

from factories import axpy_document


def _manifest(write_manifest, inputs: dict, dtypes: dict | None = None):
    doc = axpy_document([])
    doc["workloads"] = [{"id": "w", "axes": {"n": 10000}, "inputs": inputs, **({"dtypes": dtypes} if dtypes else {})}]
    return load_manifest(write_manifest(doc))


def test_generators(write_manifest, tmp_path) -> None:
    save_file({"w": torch.arange(10000, dtype=torch.float32)}, str(tmp_path / "w.safetensors"))
    m = _manifest(write_manifest, {"x": {"type": "random", "distribution": "uniform", "low": 2.0, "high": 3.0},
                                   "w": {"type": "safetensors", "path": "w.safetensors", "key": "w"}})
    got = generate_inputs(m.definition, m.workloads[0], 1, torch.device("cpu"))
    assert 2.0 <= got["x"].min() and got["x"].max() <= 3.0
    assert torch.equal(got["w"], torch.arange(10000, dtype=torch.float32))


def test_normal_parameters_and_dtype_override(write_manifest) -> None:
    m = _manifest(write_manifest, {"x": {"type": "random", "mean": 5.0, "std": 0.5}, "w": {"type": "ones"}},
                  {"x": "bfloat16", "w": "bfloat16", "y": "bfloat16"})
    got = generate_inputs(m.definition, m.workloads[0], 3, torch.device("cpu"))
    assert got["x"].dtype == torch.bfloat16 and abs(got["x"].float().mean().item() - 5.0) < 0.05
    assert torch.equal(got["w"], torch.ones(10000, dtype=torch.bfloat16))


def test_rounds_differ_and_seeds_mix() -> None:
    assert mix_seed(1, 2, 3) == mix_seed(1, 2, 3) != mix_seed(1, 2, 4)
    assert 0 <= mix_seed("a") < 2 ** 63


def test_dps_outputs_are_prefilled_with_nan(write_manifest) -> None:
    m = _manifest(write_manifest, {})
    out = allocate_outputs(m.definition, m.workloads[0], torch.device("cpu"))
    assert torch.isnan(out["y"]).all()


def test_redraw_gives_new_values_not_a_permutation(write_manifest) -> None:
    """A sort or a norm cannot tell a rolled input from the original; a redraw it can."""
    m = _manifest(write_manifest, {"x": {"type": "random", "mean": 5.0, "std": 0.5},
                                   "w": {"type": "randint", "low": 3, "high": 7}}, {"w": "int32"})
    w = m.workloads[0]
    base = generate_inputs(m.definition, w, 1, torch.device("cpu"))
    names, values = list(base), [t.clone() for t in base.values()]
    Redraw(w, 11)(names, values, 0)
    assert not torch.equal(values[0].sort().values, base["x"].sort().values)
    assert abs(values[0].mean() - 5.0) < 0.05 and abs(values[0].std() - 0.5) < 0.05  # the same distribution
    assert values[1].dtype == torch.int32 and 3 <= values[1].min() and values[1].max() <= 6
    assert set(values[1].unique().tolist()) == {3, 4, 5, 6} and not torch.equal(values[1], base["w"])
    again = [t.clone() for t in base.values()]
    Redraw(w, 11)(names, again, 0)  # the reference worker redraws a kept sample's inputs with the same key
    assert all(torch.equal(a, b) for a, b in zip(again, values))
    Redraw(w, 11)(names, again, 1)
    assert not torch.equal(again[0], values[0])
    Redraw(w, 12)(names, again, 0)
    assert not torch.equal(again[0], values[0])


def test_redraw_covers_every_dtype_and_leaves_fixed_data(write_manifest, tmp_path) -> None:
    save_file({"w": torch.arange(10000, dtype=torch.float32)}, str(tmp_path / "w.safetensors"))
    for dtype in ("float16", "bfloat16", "float8_e4m3fn", "int8", "bool"):
        m = _manifest(write_manifest, {"x": {"type": "random"}, "w": {"type": "safetensors", "path": "w.safetensors",
                                                                      "key": "w"}}, {"x": dtype})
        w = m.workloads[0]
        base = generate_inputs(m.definition, w, 1, torch.device("cpu"))
        values = [t.clone() for t in base.values()]
        Redraw(w, 5)(list(base), values, 0)
        assert values[0].dtype == base["x"].dtype and not torch.equal(values[0], base["x"]), dtype
        assert torch.equal(values[1], base["w"])  # fixed data stays: the workload is flagged CACHEABLE instead
    assert not has_fresh_inputs(m.definition, replace(w, inputs={"x": w.inputs["w"], "w": w.inputs["w"]}))
    assert has_fresh_inputs(m.definition, w)


def test_poison_refills_destination_buffers() -> None:
    f, i = torch.zeros(4), torch.zeros(4, dtype=torch.int32)
    poison([f, i])
    assert torch.isnan(f).all() and (i == 0x5A).all()


def test_large_cpu_draws_are_chunked_the_same_for_any_thread_count() -> None:
    """Big CPU tensors are drawn in parallel chunks: the values depend on the seed, not on how many
    threads drew them (the reference and solution workers, and a reproduction, may differ), and no
    chunk repeats another."""
    n = 3 * CPU_CHUNK + 17
    threads = torch.get_num_threads()
    draws = []
    try:
        for k in (1, 2, 3):
            torch.set_num_threads(k)
            t = torch.empty(n, dtype=torch.bfloat16)
            fill_random(t, "random", {"mean": 1.0, "std": 2.0}, 42)
            draws.append(t)
    finally:
        torch.set_num_threads(threads)
    assert torch.equal(draws[0], draws[1]) and torch.equal(draws[0], draws[2])
    chunks = draws[0][: 3 * CPU_CHUNK].view(3, CPU_CHUNK)
    assert not torch.equal(chunks[0], chunks[1]) and not torch.equal(chunks[1], chunks[2])
    x = draws[0].float()
    assert abs(x.mean().item() - 1.0) < 0.01 and abs(x.std().item() - 2.0) < 0.01
    ints = torch.empty(n, dtype=torch.int32)
    fill_random(ints, "randint", {"low": 3, "high": 9}, 7)
    assert ints.min().item() == 3 and ints.max().item() == 8


def test_large_cpu_draws_leave_no_thread_behind() -> None:
    """The drawing threads are joined before the draw returns: a live thread would make the worker's
    stray-thread check wait to judge it after every call (guards.TamperGuard.stray_threads)."""
    before = {t.ident for t in threading.enumerate()}
    fill_random(torch.empty(4 * CPU_CHUNK), "random", {}, 1)
    assert {t.ident for t in threading.enumerate() if t.is_alive()} <= before


def test_large_cpu_redraws_keep_the_distribution_and_never_repeat_a_sample(write_manifest) -> None:
    """A large CPU input is redrawn as a sum of two pools (one pass, not the serial generator): every
    sample has the declared distribution, no sample equals another or another's rows in other places
    (a row cache), the reference redraws any sample exactly, and a new pair of pools takes over in time."""
    rows, hidden = 64, 4096  # 2 * CPU_CHUNK elements
    doc = axpy_document([])
    doc["definition"]["axes"] = {"r": {"type": "var"}, "n": {"type": "var"}}
    doc["definition"]["inputs"] = {"x": {"shape": ["r", "n"], "dtype": "bfloat16"},
                                   "w": {"shape": ["r", "n"], "dtype": "float32"},
                                   "i": {"shape": ["r", "n"], "dtype": "int32"},
                                   "b": {"shape": ["r", "n"], "dtype": "bool"},
                                   "f": {"shape": ["r", "n"], "dtype": "float8_e4m3fn"}}
    doc["definition"]["outputs"] = {"y": {"shape": ["r", "n"], "dtype": "float32"}}
    doc["definition"]["reference"] = "def run(x, w, i, b, f):\n    return w"
    doc["definition"].pop("bytes", None)
    doc["workloads"] = [{"id": "big", "axes": {"r": rows, "n": hidden}, "inputs": {
        "x": {"type": "random", "mean": 5.0, "std": 0.5},
        "w": {"type": "random", "distribution": "uniform", "low": 2.0, "high": 3.0},
        "i": {"type": "randint", "low": 3, "high": 9}, "b": {"type": "random"}, "f": {"type": "random"}}}]
    m = load_manifest(write_manifest(doc))
    w = m.workloads[0]
    base = generate_inputs(m.definition, w, 1, torch.device("cpu"))
    names = list(base)
    redraw, seen = Redraw(w, 7), []
    for sample in (0, 1, 2, hidden, -1, -2, 5 * POOL_MIN_SPAN + 3):
        values = [t.clone() for t in base.values()]
        redraw(names, values, sample)
        x, u, i, b, f = values
        assert abs(x.float().mean().item() - 5.0) < 0.01 and abs(x.float().std().item() - 0.5) < 0.01
        assert 2.0 <= u.min().item() and u.max().item() <= 3.0 and abs(u.mean().item() - 2.5) < 0.01
        assert abs(u.std().item() - (1 / 12) ** 0.5) < 0.01  # uniform, not the triangle a plain sum makes
        assert set(i.unique().tolist()) == set(range(3, 9)) and abs(b.float().mean().item() - 0.5) < 0.01
        assert f.dtype == torch.float8_e4m3fn and abs(f.float().std().item() - 1.0) < 0.05
        seen.append(x)
        again = [t.clone() for t in base.values()]
        Redraw(w, 7)(names, again, sample)  # a fresh Redraw, as the reference worker's re-check makes
        assert all(torch.equal(a, v) for a, v in zip(again, values))
    pools = [(a.data_ptr(), b.data_ptr()) for _, a, b in redraw._pools.values()]
    for sample in (5 * POOL_MIN_SPAN + 4, -3, 5 * POOL_MIN_SPAN + 5):  # untimed calls between timed ones
        redraw(names, [t.clone() for t in base.values()], sample)
    assert [(a.data_ptr(), b.data_ptr()) for _, a, b in redraw._pools.values()] == pools  # no pools drawn
    held = sum(a.nbytes + b.nbytes for _, a, b in redraw._pools.values())
    assert held == pool_bytes(m.definition, w)  # what the runner's host-memory estimate counts (too_large)
    rows_seen = {bytes(r.view(torch.uint8).numpy()) for x in seen for r in x}
    assert len(rows_seen) == rows * len(seen)  # no row anywhere repeats, and no sample repeats another
