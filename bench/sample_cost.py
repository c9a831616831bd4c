"""Where a timed sample's wall time goes: the worker's own handlers (Prepare, Build, TimeStart, TimeChunk)
driven in this process, the chunk under cProfile, against the kernel time the sampler reports.

A GPU row samples about 100 times a side, and on the H100 each sample took 1.0-1.5 ms of wall time for
kernels of 2-50 us (2026-12-07): this prints which harness steps (flush, redraw, poison, hold, profiler)
hold that time, per sample, so the cost can be cut where it is.

    python bench/sample_cost.py rmsnorm.yaml --solution triton-row --workload medium-bf16 --device cuda
"""
from __future__ import annotations

import argparse
import cProfile
import pstats
import secrets
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from harness.execute.protocol import Build, Prepare, TimeChunk, TimeStart  # noqa: E402
from harness.execute.worker import WorkerState  # noqa: E402
from harness.paths import MANIFESTS_DIR  # noqa: E402
from harness.run.suite import prepare  # noqa: E402
from harness.spec.manifest import resolve_manifest_path  # noqa: E402


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("manifest")
    p.add_argument("--solution", required=True)
    p.add_argument("--workload", required=True)
    p.add_argument("--device", default="cuda")
    p.add_argument("--samples", type=int, default=300)
    p.add_argument("--sizes", default="", help="also time unprofiled chunks of these sizes (comma-separated): "
                   "a chunk's wall is a fixed part (its profiler session) plus a part per sample")
    p.add_argument("--top", type=int, default=22)
    p.add_argument("--tracer", default="auto", choices=["auto", "profiler"],
                   help="where CUDA activity records come from: the device's own (CUPTI directly where libcupti "
                        "loads), or torch.profiler")
    a = p.parse_args()
    (m,) = prepare(resolve_manifest_path(a.manifest, MANIFESTS_DIR), {}, [a.solution], [a.workload])
    sol, w = m.solutions[0], m.workloads[0]
    state = WorkerState()
    t0 = time.perf_counter()
    if a.tracer == "profiler":  # before Prepare starts the device's tracer
        from harness.measure.devices import make_device
        from harness.measure.devices.tracers import ProfilerTracer
        state.device = make_device(a.device, 0)
        state.device.setup()
        state.device._tracer = ProfilerTracer("compared")
    state.prepare(Prepare(a.device, 0, True, sol.language))
    state.build(Build(sol, m.definition, a.device, 0))
    started = state.time_start(TimeStart(w, [1, 2], m.bench, secrets.randbits(62), ()))
    print(f"{sol.name} / {w.id} on {a.device}: timer {started.mode} ({a.tracer} tracer); prepare+build+time_start "
          f"{time.perf_counter() - t0:.2f} s")
    state.time_chunk(TimeChunk(20, ()))  # the first chunk's one-off costs (profiler session, caches)
    for size in [a.samples] * 3 + [int(x) for x in a.sizes.split(",") if x] * 3:  # as a run takes them, no cProfile
        t = time.perf_counter()
        n = len(state.time_chunk(TimeChunk(size, ())).samples)
        took = time.perf_counter() - t
        print(f"{n} samples unprofiled: {took * 1e3:.1f} ms, {took / n * 1e3:.3f} ms wall a sample")
    prof = cProfile.Profile()
    t = time.perf_counter()
    prof.enable()
    samples = state.time_chunk(TimeChunk(a.samples, ())).samples
    prof.disable()
    wall = time.perf_counter() - t
    kernel = sorted(samples)[len(samples) // 2]
    print(f"{len(samples)} samples under cProfile in {wall * 1e3:.1f} ms: {wall / len(samples) * 1e3:.3f} ms wall a sample, "
          f"kernel median {kernel * 1e3:.2f} us")
    stats = pstats.Stats(prof)
    for order in ("tottime", "cumulative"):
        print(f"--- by {order}, ms per sample")
        stats.sort_stats(order)
        width = 0
        for func in stats.fcn_list[: a.top]:  # type: ignore[attr-defined]
            cc, nc, tt, ct, _ = stats.stats[func]  # type: ignore[attr-defined]
            name = f"{Path(func[0]).name}:{func[1]}({func[2]})"
            width = max(width, len(name))
            print(f"{tt / len(samples) * 1e3:8.4f} {ct / len(samples) * 1e3:8.4f} {nc / len(samples):6.1f}x  {name[:110]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
