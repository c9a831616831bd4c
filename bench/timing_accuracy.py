"""How good are opbench's numbers? Accuracy against Nsight Compute, stability and cost against
triton.testing.do_bench, on kernels from a few microseconds to a few milliseconds (CUDA only).

    python bench/timing_accuracy.py run [--out DIR] [--runs 5]      # everything, prints three tables
    python bench/timing_accuracy.py kernel CASE --calls N            # inner: only CASE's calls (for ncu)

1. accuracy: opbench's median (events mode, cold L2) vs ncu's gpu__time_duration with its own cache
   flush (--cache-control all), both at the clocks the GPU chooses (--clock-control none); and for the
   small kernels, opbench's CUDA-graph mode (warm cache) vs ncu --cache-control none.
2. stability: spread (max-min)/median of the median over `--runs` runs, opbench vs do_bench, interleaved.
3. cost: host wall time per measurement, opbench's stopping rule vs do_bench's defaults.
"""
from __future__ import annotations

import argparse
import csv
import io
import json
import os
import statistics
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402

from harness.measure.devices.cuda import CudaDevice  # noqa: E402
from harness.spec.model import BenchConfig  # noqa: E402
from harness.measure.timing import measure  # noqa: E402

SMALL = ("copy-8MiB", "rmsnorm-256x4096")


def make_case(name: str) -> Callable[[], Any]:
    """A zero-argument callable launching the case's kernel(s) on the current stream."""
    dev = "cuda"
    if name.startswith("copy-"):
        n = {"copy-8MiB": 4 << 20, "copy-128MiB": 64 << 20, "copy-1GiB": 512 << 20}[name]
        x = torch.randn(n, dtype=torch.bfloat16).to(dev)
        y = torch.empty_like(x)
        return lambda: torch.mul(x, 1.0, out=y)  # an elementwise kernel: a same-dtype copy_ is a memcpy ncu skips
    if name.startswith("rmsnorm-"):
        sys.path.insert(0, str(ROOT / "manifests" / "rmsnorm"))
        from triton_rmsnorm import rmsnorm
        rows, cols = map(int, name.split("-")[1].split("x"))
        x = torch.randn(rows, cols, dtype=torch.bfloat16).to(dev)
        w = torch.randn(cols, dtype=torch.bfloat16).to(dev)
        return lambda: rmsnorm(x, w)
    if name.startswith("matmul-"):
        m, n, k = map(int, name.split("-")[1].split("x"))
        a = torch.randn(m, k, dtype=torch.bfloat16).to(dev)
        b = torch.randn(k, n, dtype=torch.bfloat16).to(dev)
        return lambda: torch.matmul(a, b)
    raise SystemExit(f"unknown case {name}")


CASES = ["copy-8MiB", "rmsnorm-256x4096", "copy-128MiB", "rmsnorm-4096x8192", "matmul-4096x4096x4096",
         "copy-1GiB", "matmul-8192x8192x16384"]


def kernel_main(case: str, calls: int) -> None:
    fn = make_case(case)
    fn()  # compile/autotune outside what ncu sees matters little: ncu times each launch on its own
    torch.cuda.synchronize()
    for _ in range(calls):
        fn()
    torch.cuda.synchronize()


def ncu_time_us(case: str, cache: str, calls: int = 12) -> tuple[float | None, str]:
    """Median per-call gpu__time_duration (us) from Nsight Compute, or None with the reason."""
    cmd = ["ncu", "--clock-control", "none", "--cache-control", cache, "--metrics", "gpu__time_duration.sum",
           "--csv", "--print-units", "base", sys.executable, __file__, "kernel", case, "--calls", str(calls)]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=240)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return None, str(exc)
    text = proc.stdout[proc.stdout.find('"ID"'):] if '"ID"' in proc.stdout else ""
    rows = [r for r in csv.DictReader(io.StringIO(text)) if r.get("Metric Name") == "gpu__time_duration.sum"]
    if not rows:
        return None, (proc.stderr or proc.stdout)[-400:]
    durations = [float(r["Metric Value"].replace(",", "")) / 1e3 for r in rows]  # ns -> us
    per_launch = len(durations) / (calls + 1)
    if per_launch == 1:
        return statistics.median(durations[1:]), ""
    return sum(durations) / (calls + 1), f"{per_launch:g} kernels per call"


def do_bench_once(fn: Callable[[], Any]) -> tuple[float, float]:
    import triton.testing
    t0 = time.perf_counter()
    ms = triton.testing.do_bench(fn)
    return ms * 1e3, time.perf_counter() - t0


def spread(values: list[float]) -> float:
    return (max(values) - min(values)) / statistics.median(values)


def run_main(out: Path | None, runs: int, cases: list[str]) -> None:
    from tabulate import tabulate
    dev = CudaDevice()
    dev.setup()
    cfg = BenchConfig()  # the defaults users get: cold L2, rse <= 0.5%, >= 10 samples, >= 5 ms measured
    graph_cfg = replace(cfg, cuda_graph=True, cache="warm", graph_batch=50)
    results: dict[str, Any] = {"device": dev.info(), "config": cfg.__dict__, "cases": {}}
    acc_rows, stab_rows, cost_rows = [], [], []
    clocks: list[float] = []
    for case in cases:
        fn = make_case(case)
        r: dict[str, Any] = {}
        ev = measure(dev, [fn], cfg)
        r["opbench_us"] = ev.median_ms * 1e3
        r["opbench_cupti_us"] = measure(dev, [fn], replace(cfg, timer="cupti")).median_ms * 1e3
        r["ncu_us"], r["ncu_note"] = ncu_time_us(case, "all")
        if case in SMALL:
            r["opbench_graph_us"] = measure(dev, [fn], graph_cfg).median_ms * 1e3
            r["opbench_cupti_warm_us"] = measure(dev, [fn], replace(cfg, timer="cupti", cache="warm")).median_ms * 1e3
            r["ncu_warm_us"], _ = ncu_time_us(case, "none")
        err = lambda a, b: f"{(a / b - 1) * 100:+.1f}%" if a and b else "-"
        num = lambda key: f"{r[key]:.2f}" if r.get(key) else "-"
        acc_rows.append([case, num("ncu_us") if r["ncu_us"] else f"n/a ({r['ncu_note'][:40]})",
                         num("opbench_us"), err(r["opbench_us"], r["ncu_us"]),
                         num("opbench_cupti_us"), err(r["opbench_cupti_us"], r["ncu_us"]),
                         num("ncu_warm_us"), num("opbench_graph_us"), err(r.get("opbench_graph_us"), r.get("ncu_warm_us")),
                         num("opbench_cupti_warm_us"), err(r.get("opbench_cupti_warm_us"), r.get("ncu_warm_us"))])
        ob, db, ob_wall, db_wall, ob_n, met = [], [], [], [], [], []
        measure(dev, [fn], cfg)  # one untimed run of each first: both start from the same thermal state
        do_bench_once(fn)
        for _ in range(runs):  # interleaved so drift hits both alike
            s = measure(dev, [fn], cfg)
            ob.append(s.median_ms * 1e3)
            ob_wall.append(s.wall_s)
            ob_n.append(s.n)
            met.append(s.rule_met)
            us, wall = do_bench_once(fn)
            db.append(us)
            db_wall.append(wall)
            clocks.append(dev.clocks().get("sm_mhz", 0.0))
        r.update(opbench_runs_us=ob, do_bench_runs_us=db, opbench_wall_s=ob_wall, do_bench_wall_s=db_wall, opbench_n=ob_n,
                 rule_met=met)
        stab_rows.append([case, f"{statistics.median(ob):.2f}", f"{spread(ob) * 100:.2f}%", f"{statistics.median(db):.2f}",
                          f"{spread(db) * 100:.2f}%"])
        cost_rows.append([case, f"{statistics.mean(ob_wall) * 1e3:.0f}", f"{statistics.median(ob_n):.0f}",
                          f"{sum(met)}/{runs}", f"{statistics.mean(db_wall) * 1e3:.0f}",
                          f"{statistics.mean(ob_wall) / statistics.mean(db_wall):.2f}"])
        results["cases"][case] = r
        print(f"done {case}", file=sys.stderr, flush=True)
    print("\n1. accuracy: median kernel time (us), opbench vs Nsight Compute gpu__time_duration")
    print(tabulate(acc_rows, headers=["case", "ncu cold", "events cold", "err", "cupti cold", "err", "ncu warm",
                                      "cuda-graph warm", "err", "cupti warm", "err"], tablefmt="github"))
    print(f"\n2. stability: spread (max-min)/median of the median over {runs} runs")
    print(tabulate(stab_rows, headers=["case", "opbench median us", "opbench spread", "do_bench us", "do_bench spread"],
                   tablefmt="github"))
    print("\n3. cost: host wall time per measurement")
    print(tabulate(cost_rows, headers=["case", "opbench ms", "samples", "rule met", "do_bench ms", "ratio"],
                   tablefmt="github"))
    if clocks and max(clocks):
        print(f"\nSM clock read after each stability run: {min(clocks):.0f}-{max(clocks):.0f} MHz")
    results["sm_clock_mhz"] = clocks
    if out:
        out.mkdir(parents=True, exist_ok=True)
        (out / "timing_accuracy.json").write_text(json.dumps(results, indent=2, default=str))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    k = sub.add_parser("kernel")
    k.add_argument("case")
    k.add_argument("--calls", type=int, default=12)
    r = sub.add_parser("run")
    r.add_argument("--out", type=Path, default=Path(os.environ["OUT"]) if os.environ.get("OUT") else None)
    r.add_argument("--runs", type=int, default=5)
    r.add_argument("--cases", nargs="+", default=CASES, choices=CASES)
    args = p.parse_args()
    if args.cmd == "kernel":
        kernel_main(args.case, args.calls)
    else:
        run_main(args.out, args.runs, args.cases)


if __name__ == "__main__":
    main()
