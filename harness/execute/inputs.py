"""Deterministic input generation: the same (workload, seed) gives bit-identical inputs on the same
kind of device.

Random values are drawn on the device itself from a seeded generator of that device (a GPU draws
1 GiB in milliseconds, and nothing crosses the host), so the reference worker, the solution worker
and a later reproduction on the same kind of device all see the same data. A CPU run and a GPU run
of one workload draw different values from the same distribution.

torch's CPU generator is serial (about 4 ns an element: 67 ms for a 2048x8192 tensor, redrawn before
every timed sample, three times the RMSNorm call it feeds on a 2-core VM), so large CPU tensors are
drawn in fixed chunks, each from a generator of its own, on all the worker's cores; the chunks, not
the thread count, decide the values.
"""
from __future__ import annotations

import hashlib
import math
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import torch

from harness.execute.dtypes import is_packed_fp4, to_torch
from harness.spec.model import Definition, Generator, Workload


def workload_bytes(definition: Definition, w: Workload) -> int:
    """Bytes of every declared input and output of `w` (a scalar counts 8)."""
    total = 0
    for name, spec in {**definition.inputs, **definition.outputs}.items():
        shape = w.shape_of(spec)
        total += 8 if shape is None else math.prod(shape) * to_torch(w.dtypes[name]).itemsize
    return total


def mix_seed(*parts: int | str) -> int:
    """Combine seeds (manifest, private run seed, round) into one 63-bit seed no part predicts alone."""
    digest = hashlib.sha256("/".join(str(p) for p in parts).encode()).digest()
    return int.from_bytes(digest[:8], "little") & ((1 << 63) - 1)


def _fp4(gen: Generator, shape: tuple[int, ...], seed: int, device: torch.device) -> torch.Tensor:
    """Packed fp4 (two E2M1 values a byte): random bytes (every code is a finite value), zeros, or
    ones (code 2 in both nibbles); the declared shape is the packed tensor's, unless a random
    generator says `fp4_shape: values` (the shape counts values: SOL-ExecBench's random inputs,
    whose last dimension it halves)."""
    if gen.type == "random" and gen.params.get("fp4_shape") == "values":
        if not shape or shape[-1] % 2:
            raise ValueError(f"fp4_shape: values needs an even last dimension to pack two values a byte, got {shape}")
        shape = (*shape[:-1], shape[-1] // 2)
    if gen.type == "zeros":
        raw = torch.zeros(shape, dtype=torch.uint8, device=device)
    elif gen.type == "ones":
        raw = torch.full(shape, 0x22, dtype=torch.uint8, device=device)
    elif gen.type == "random":
        g = torch.Generator(device=device).manual_seed(mix_seed(gen.params.get("seed", 0), seed))
        raw = torch.randint(0, 256, shape, dtype=torch.uint8, generator=g, device=device)
    else:
        raise ValueError(f"{gen.type!r} inputs cannot be packed fp4; use random, zeros, ones, custom or safetensors")
    return raw.view(to_torch("float4_e2m1fn_x2"))


def _make(gen: Generator, shape: tuple[int, ...], dtype: torch.dtype, seed: int, device: torch.device) -> torch.Tensor:
    p = gen.params
    if is_packed_fp4(dtype) and gen.type != "safetensors":
        return _fp4(gen, shape, seed, device)
    if gen.type == "zeros":
        return torch.zeros(shape, dtype=dtype, device=device)
    if gen.type == "ones":
        return torch.ones(shape, dtype=dtype, device=device)
    if gen.type == "scalar":
        return torch.full(shape, p["value"], dtype=dtype, device=device)
    if gen.type == "safetensors":
        from safetensors.torch import load_file
        tensor = load_file(p["path"])[p["key"]]
        if tuple(tensor.shape) != shape:
            raise ValueError(f"safetensors tensor {p['key']!r} has shape {tuple(tensor.shape)}, workload needs {shape}")
        return tensor.to(device=device, dtype=dtype)
    if gen.type not in FRESH_KINDS:
        raise ValueError(f"unknown generator type {gen.type!r}")
    t = torch.empty(shape, dtype=dtype, device=device)
    fill_random(t, gen.type, p, mix_seed(p.get("seed", 0), seed))
    return t


DIRECT_FLOATS = (torch.float32, torch.float64, torch.float16, torch.bfloat16)  # dtypes torch draws floats in
CPU_CHUNK = 1 << 17  # elements a generator: half a millisecond of drawing, worth a thread


def _chunked(t: torch.Tensor, seed: int, draw: Callable[[torch.Tensor, torch.Generator], Any]) -> None:
    """`draw(part, generator)` over all of `t`: at once on an accelerator (its generator is already
    parallel) and for small or strided CPU tensors; else in CPU_CHUNK pieces, piece j from a generator
    seeded with (seed, j), on one thread per core torch uses (torch releases the GIL while it draws).
    The threads are joined before this returns: a thread left alive would make every call's stray-thread
    check (guards.TamperGuard.stray_threads) wait to judge it, 50 ms a call, more than the draw saves."""
    if t.device.type != "cpu" or t.numel() <= CPU_CHUNK or not t.is_contiguous():
        draw(t, torch.Generator(device=t.device).manual_seed(seed))
        return
    flat = t.view(-1)
    parts = [(flat[i:i + CPU_CHUNK], mix_seed(seed, i // CPU_CHUNK)) for i in range(0, flat.numel(), CPU_CHUNK)]
    with ThreadPoolExecutor(max_workers=max(torch.get_num_threads(), 1), thread_name_prefix="opbench-draw") as pool:
        for _ in pool.map(lambda part: draw(part[0], torch.Generator().manual_seed(part[1])), parts):
            pass


def fill_random(t: torch.Tensor, kind: str, p: Mapping[str, Any], seed: int) -> None:
    """Values for `t`, in place, from a `random` or `randint` generator's distribution (params `p`),
    seeded with `seed`: floats normal(mean, std) or uniform(low, high), integers in [-8, 8) or
    [low, high) for randint, booleans fair, packed fp4 any byte (every code a finite value)."""
    ints = _integers(t.dtype, kind, p)
    if is_packed_fp4(t.dtype):  # its bytes, in place
        _chunked(t.view(torch.uint8), seed, lambda d, g: d.random_(0, 256, generator=g))
        return
    if ints is not None and t.dtype.is_floating_point:  # integers in a float tensor: drawn exactly, then converted
        d = torch.empty(t.shape, dtype=torch.int64, device=t.device)
    elif t.dtype in DIRECT_FLOATS or not t.dtype.is_floating_point:
        d = t
    else:
        d = torch.empty(t.shape, dtype=torch.float32, device=t.device)
    if ints is not None:
        low, high = ints[0], ints[0] + ints[1]
        _chunked(d, seed, lambda x, g: x.random_(low, high, generator=g))
    elif p.get("distribution", "normal") == "uniform":
        low_f, high_f = float(p.get("low", 0.0)), float(p.get("high", 1.0))
        _chunked(d, seed, lambda x, g: x.uniform_(low_f, high_f, generator=g))
    else:
        mean, std = float(p.get("mean", 0.0)), float(p.get("std", 1.0))
        _chunked(d, seed, lambda x, g: _normal(x, mean, std, g))
    if d is not t:
        t.copy_(d)


def _normal(x: torch.Tensor, mean: float, std: float, g: torch.Generator) -> None:
    """`x.normal_(mean, std)`, drawn in float32 for a 16-bit float on the CPU: torch 2.11 draws bfloat16 normals
    there with a bias (over 393,233 values of normal(1, 2): mean 0.9967, std 1.9868; 2.13 gives 1.0010 and
    1.9995). Not on an accelerator, which draws a whole tensor at once: a float32 copy there would need twice
    the input's device memory, which `runner.too_large` does not count, for a bias never measured there."""
    if x.element_size() < 4 and x.device.type == "cpu":
        x.copy_(torch.empty(x.shape, dtype=torch.float32, device=x.device).normal_(mean, std, generator=g))
    else:
        x.normal_(mean, std, generator=g)


def custom_inputs(definition: Definition, workload: Workload, seed: int, device: torch.device) -> dict[str, Any]:
    """What the reference's `custom_inputs_entrypoint` makes for this workload, as upstream calls it
    (`fn({**axes, **scalar inputs}, device)`), with torch's random state seeded from (workload, seed)
    for the call and restored after it; each value checked against its declaration."""
    namespace: dict[str, Any] = {"__name__": "opbench_reference_inputs"}
    exec(compile(definition.reference.source, definition.reference.origin, "exec"), namespace)
    fn = namespace.get(definition.custom_inputs or "")
    if not callable(fn):
        raise ValueError(f"the reference defines no function {definition.custom_inputs!r} to make custom inputs")
    scalars = {n: workload.inputs[n].params["value"] for n, s in definition.inputs.items()
               if s.shape is None and workload.inputs[n].type == "scalar"}
    with torch.random.fork_rng(devices=[device] if device.type != "cpu" else [], device_type=device.type):
        torch.manual_seed(mix_seed(workload.seed, seed, "custom"))
        made = fn({**workload.axes, **scalars}, device)
    if not isinstance(made, dict):
        raise ValueError(f"{definition.custom_inputs}() returned {type(made).__name__}, expected a dict of inputs by name")
    return made


def _custom(made: dict[str, Any], name: str, shape: tuple[int, ...] | None, dtype: torch.dtype, device: torch.device) -> Any:
    if name not in made:
        raise ValueError(f"custom input {name!r} missing from what the reference's generator returned ({sorted(made)})")
    value = made[name]
    if shape is None:
        return value
    if not isinstance(value, torch.Tensor) or tuple(value.shape) != shape or value.dtype != dtype:
        got = f"{tuple(value.shape)} {value.dtype}" if isinstance(value, torch.Tensor) else type(value).__name__
        raise ValueError(f"custom input {name!r} is {got}; the workload declares {shape} {dtype}")
    return value.to(device)


def generate_inputs(definition: Definition, workload: Workload, seed: int, device: torch.device) -> dict[str, Any]:
    """Inputs by name, in declaration order; Python scalars for `shape: null` inputs."""
    out: dict[str, Any] = {}
    made = (custom_inputs(definition, workload, seed, device)
            if any(g.type == "custom" for g in workload.inputs.values()) else {})
    for i, (name, spec) in enumerate(definition.inputs.items()):
        gen = workload.inputs[name]
        shape = workload.shape_of(spec)
        if gen.type == "custom":
            out[name] = _custom(made, name, shape, to_torch(workload.dtypes[name]), device)
            continue
        if shape is None:
            value = gen.params["value"]
            out[name] = float(value) if spec.dtype.startswith(("float", "bfloat")) else value
            continue
        out[name] = _make(gen, shape, to_torch(workload.dtypes[name]), mix_seed(workload.seed, seed, i), device)
    return out


FRESH_KINDS = ("random", "randint")  # generators whose values can be drawn anew; the rest is fixed data


def has_fresh_inputs(definition: Definition, workload: Workload) -> bool:
    """Whether any tensor input of `workload` is drawn anew for every timed call (`redraw`); if none
    is, every call sees the same data and the report flags the workload CACHEABLE."""
    return any(workload.inputs[name].type in FRESH_KINDS and (shape := workload.shape_of(spec)) is not None
               and math.prod(shape) > 0 for name, spec in definition.inputs.items())


def drawn_inputs(workload: Workload, names: list[str], values: list[Any]) -> list[int]:
    """Indices of the inputs `redraw` renews: tensors whose generator is random or randint."""
    return [k for k, name in enumerate(names)
            if workload.inputs[name].type in FRESH_KINDS and isinstance(values[k], torch.Tensor) and values[k].numel()]


class Redraw:
    """The random and randint inputs of timed sample `sample` of a timing session with key `key`, drawn
    anew in place: new values from the same distribution (not a permutation, which a sort or a norm
    cannot tell from the original), integers within their declared range. The same (key, sample)
    gives the same values on the same kind of device, so the reference worker can redraw what a
    solution was timed on and the parent can re-check it.

    A small tensor, and any tensor on an accelerator (whose generator is parallel), is drawn directly.
    A large CPU tensor is the sum of a window of one pool and the whole of another, both drawn once
    a session: torch's CPU generator costs 4-7 ns an element even in chunks, 7 ms before every 2 ms
    call of a 256x4096 RMSNorm on a 2-core VM (so 150 samples fitted a 3 s budget, and rows ended
    NOISY), while the sum is one pass. Sample k's window starts k places further along the first pool
    while the second stays put, so no sample repeats another, whole or shifted (which a row cache
    could use), until a new pair of pools every `n // 8` samples. An untimed call (a negative sample:
    warm-up, probes, a chunk's resume) takes a window past every timed one, of the pools in use: it
    repeats no timed sample, and a worker that goes between timed and untimed calls draws no pools
    (each switch drew a pair: 2.8 ms more a sample of a 256x4096 CPU row whose chunks began untimed)."""

    def __init__(self, workload: Workload, key: int):
        self.workload, self.key = workload, key
        self._pools: dict[int, tuple[int, torch.Tensor, torch.Tensor]] = {}  # input -> (epoch, sliding, fixed)

    def __call__(self, names: list[str], values: list[Any], sample: int) -> None:
        for k in drawn_inputs(self.workload, names, values):
            gen, t = self.workload.inputs[names[k]], values[k]
            if t.device.type == "cpu" and t.numel() > CPU_CHUNK and t.is_contiguous():
                self._pooled(k, t, gen.type, gen.params, sample)
            else:
                fill_random(t, gen.type, gen.params, mix_seed(self.key, sample, k))

    def _pooled(self, k: int, t: torch.Tensor, kind: str, p: Mapping[str, Any], sample: int) -> None:
        ints = _integers(t.dtype, kind, p)
        flat = (t.view(torch.uint8) if is_packed_fp4(t.dtype) else t).view(-1)
        n = flat.numel()
        span = pool_span(n)
        if sample >= 0:
            epoch, shift = divmod(sample, span)
        else:
            epoch, shift = (self._pools[k][0] if k in self._pools else 0), span + (-sample - 1) % span
        if k not in self._pools or self._pools[k][0] != epoch:
            seed = mix_seed(self.key, k, "pools", epoch)
            self._pools[k] = (epoch, _pool(flat.dtype, ints, p, n + 2 * span, mix_seed(seed, 0)),
                              _pool(flat.dtype, ints, p, n, mix_seed(seed, 1)))
        _, sliding, fixed = self._pools[k]
        _combine(flat, sliding[shift:shift + n], fixed, ints, p)


POOL_MIN_SPAN = 4096  # samples a pair of pools serves at least (a timed row takes a few thousand)


def pool_span(n: int) -> int:
    """Samples a pair of pools for an input of `n` elements serves: half the first pool's extra length
    (the other half is the untimed calls' windows)."""
    return max(n // 8, POOL_MIN_SPAN)


def pool_bytes(definition: Definition, workload: Workload) -> int:
    """Host bytes one worker's `Redraw` holds in pools for `workload` on the CPU (what `_pooled` makes:
    for a float tensor about 2.3x its bytes), for the host-memory estimate (`runner.too_large`)."""
    total = 0
    for name, spec in definition.inputs.items():
        shape, gen = workload.shape_of(spec), workload.inputs[name]
        if gen.type not in FRESH_KINDS or shape is None or math.prod(shape) <= CPU_CHUNK:
            continue
        dtype, n = to_torch(workload.dtypes[name]), math.prod(shape)  # packed fp4: pooled as its bytes, one each
        pooled = _pool_dtype(dtype, _integers(dtype, gen.type, gen.params), gen.params)
        total += (2 * n + 2 * pool_span(n)) * pooled.itemsize
    return total


def _integers(dtype: torch.dtype, kind: str, p: Mapping[str, Any]) -> tuple[int, int] | None:
    """(low, count) of the integers a tensor of `dtype` is drawn from, or None for a float distribution:
    the one table `fill_random` and the pooled redraw both read."""
    if is_packed_fp4(dtype):
        return 0, 256
    if kind == "randint":
        return int(p["low"]), int(p["high"]) - int(p["low"])
    if dtype == torch.bool:
        return 0, 2
    return None if dtype.is_floating_point else (-8, 16)


def _pool_dtype(dtype: torch.dtype, ints: tuple[int, int] | None, p: Mapping[str, Any]) -> torch.dtype:
    """What a pool for an input of `dtype` holds: integers wide enough for a sum of two, uniforms in
    float32, normals in the input's own float dtype where torch draws in it."""
    if ints is not None:
        return torch.int32 if ints[1] <= 1 << 30 else torch.int64
    if p.get("distribution", "normal") == "uniform" or dtype not in DIRECT_FLOATS:
        return torch.float32
    return dtype


def _pool(dtype: torch.dtype, ints: tuple[int, int] | None, p: Mapping[str, Any], n: int, seed: int) -> torch.Tensor:
    """`n` values any two of which sum to the input's distribution (`_combine`)."""
    pool = torch.empty(n, dtype=_pool_dtype(dtype, ints, p))
    if ints is not None:  # uniform in [0, count): a sum modulo count is uniform too
        count = ints[1]
        _chunked(pool, seed, lambda x, g: x.random_(0, count, generator=g))
    elif p.get("distribution", "normal") == "uniform":  # uniform in [0, 1): a sum's fraction is uniform too
        _chunked(pool, seed, lambda x, g: x.uniform_(0.0, 1.0, generator=g))
    else:  # normal with half the mean and half the variance: a sum of two is the declared normal
        mean, std = float(p.get("mean", 0.0)) / 2, float(p.get("std", 1.0)) / math.sqrt(2)
        _chunked(pool, seed, lambda x, g: _normal(x, mean, std, g))
    return pool


def _combine(flat: torch.Tensor, a: torch.Tensor, b: torch.Tensor, ints: tuple[int, int] | None,
             p: Mapping[str, Any]) -> None:
    """`flat` = a + b, brought to the input's distribution: as it is for a normal, modulo the count of
    integers (then shifted to `low`) for integers, its fraction scaled to [low, high) for a uniform."""
    uniform = ints is None and p.get("distribution", "normal") == "uniform"
    if ints is None and not uniform and a.dtype == flat.dtype:
        torch.add(a, b, out=flat)  # the common case: one pass
        return
    total = a + b
    if ints is not None:
        total.remainder_(ints[1]).add_(ints[0])
    elif uniform:
        low, high = float(p.get("low", 0.0)), float(p.get("high", 1.0))
        total.frac_().mul_(high - low).add_(low)
    flat.copy_(total)


def poison(outputs: list[torch.Tensor]) -> None:
    """Refill destination buffers before a call (as `allocate_outputs` made them), so a call that
    returns early leaves NaN (floats) or 0x5A bytes (integers, packed fp4), never the last call's answer."""
    for o in outputs:
        if is_packed_fp4(o.dtype):
            o.view(torch.uint8).fill_(0x5A)
        else:
            o.fill_(float("nan") if o.dtype.is_floating_point else 0x5A)


def allocate_outputs(definition: Definition, workload: Workload, device: torch.device) -> dict[str, torch.Tensor]:
    """Destination buffers for destination-passing-style solutions, pre-filled so unwritten parts show."""
    out = {}
    for name, spec in definition.outputs.items():
        dtype = to_torch(workload.dtypes[name])
        shape = workload.shape_of(spec) or ()
        if is_packed_fp4(dtype):
            out[name] = torch.full(shape, 0x5A, dtype=torch.uint8, device=device).view(dtype)
            continue
        fill = float("nan") if dtype.is_floating_point else 0x5A
        out[name] = torch.full(shape, fill, dtype=dtype, device=device)
    return out
