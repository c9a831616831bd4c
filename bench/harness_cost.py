"""What opbench itself costs per row, measured the way users run it (`python -m harness run`).

Issue 13's targets: per-row harness overhead (wall minus measured device time minus correctness work,
and minus the first row's build) at most 1 s; the first row of a solution at most 5 s plus its compile; a row whose tensors
are 1 GiB in at most 10 s end to end. This script runs each manifest once, reads every trace's
`cost_s` (the runner's per-phase wall clock, `runner.RowClock`) and `timing`, and prints one table:

| column        | what it is                                                                              |
|---------------|-----------------------------------------------------------------------------------------|
| row           | solution / workload                                                                     |
| status        | the row's status                                                                        |
| total s       | the row's wall time in the parent, first command to verdict                             |
| build s       | building the solution's worker (spawn, torch import, device setup, compile): first row only |
| correctness s | the reference's and the solution's correctness rounds and the comparisons               |
| timing start s | both workers make their timing inputs and warm up                                     |
| sampling s    | the timed chunks (both sides, interleaved), of which `measured ms` was device time      |
| timing end s  | hidden-work checks and the kept timed outputs coming back                               |
| re-checks s   | the reference recomputing the kept samples, the comparisons, the verdict                |
| overhead s    | total - build - correctness - measured: what the harness spent around the work it measured and checked (issue 13's definition; the correctness rounds hold the solution's own calls, host work included) |
| overhead/measured | the ratio the issue asks about                                                    |

and, per run, the command's own wall time against the sum of its rows (the rest: the parent's start,
the reference's worker, report writing).

    python bench/timing_accuracy.py ...                 # accuracy; this script is cost
    python bench/harness_cost.py [MANIFEST ...] [--device cpu|cuda] [--add-gib G] [--out DIR] [--vs-fib [--fib-rounds N] [--fib-only]] [--timeout-s S]

`--vs-fib` also writes one RMSNorm problem (4 workloads, a PyTorch and a Triton solution, destination
passing) as a FlashInfer-Bench TraceSet and runs it with both harnesses, unmodified (`--fib-rounds` times,
alternating which goes first): `flashinfer-bench run --local`
(FlashInfer-Bench 0.1.2, its defaults: 10 warmups, 50 iterations, 3 trials) and `python -m harness run`
(opbench's defaults: fresh inputs per round, the re-checks, cold L2, the stopping rule), and prints both
commands' wall time and each row's status and latency side by side.

With no manifest it runs `manifests/rmsnorm.yaml` and a generated `z = x + y` problem whose tensors
are `--add-gib` GiB each (default 1 on CUDA, 0.125 on the CPU). Measured on the 2-core CPU dev VM and
on an H100 (2026-12-05; not yet on the H200): docs/cost.md.
"""
from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Sequence

import yaml

ROOT = Path(__file__).resolve().parents[1]

ADD_REFERENCE = "import torch\n\n\ndef run(x, y):\n    return x + y\n"


def add_manifest(folder: Path, gib: float) -> Path:
    """A one-workload `z = x + y` problem with fp32 tensors of `gib` GiB each, its reference as the
    solution too (the cost of the harness, not of a kernel)."""
    n = int(gib * 1024 ** 3) // 4
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "add.py").write_text(ADD_REFERENCE)
    doc = {
        "schema_version": 1,
        "definition": {
            "name": "add-big", "description": f"z = x + y, fp32, {gib:g} GiB per tensor",
            "axes": {"n": {"type": "var"}},
            "inputs": {"x": {"shape": ["n"], "dtype": "float32"}, "y": {"shape": ["n"], "dtype": "float32"}},
            "outputs": {"z": {"shape": ["n"], "dtype": "float32"}},
            "reference": ADD_REFERENCE,
        },
        "workloads": [{"id": f"{gib:g}GiB", "axes": {"n": n}}],
        "solutions": [{"name": "torch-add", "language": "pytorch", "entry_point": "add.py::run"}],
        "bench": {"max_time_s": 2, "correctness_rounds": 1},
    }
    path = folder / "add-big.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path


RMS_REFERENCE = """import torch


def run(x, weight):
    xf = x.float()
    return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-6) * weight.float()).to(x.dtype)
"""

FIB_SOLUTIONS = {
    "python": ("torch-rmsnorm", """import torch


def run(x, weight, y):
    xf = x.float()
    y.copy_(xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-6) * weight.float())
"""),
    "triton": ("triton-rmsnorm", """import triton
import triton.language as tl


@triton.jit
def _rmsnorm(x_ptr, w_ptr, y_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=0.0).to(tl.float32)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    inv = tl.rsqrt(tl.sum(x * x, axis=0) / n_cols + 1e-6)
    tl.store(y_ptr + row * n_cols + cols, (x * inv * w).to(y_ptr.dtype.element_ty), mask=mask)


def run(x, weight, y):
    rows, cols = x.shape
    block = triton.next_power_of_2(cols)
    _rmsnorm[(rows,)](x, weight, y, cols, BLOCK=block, num_warps=min(max(block // 256, 1), 16))
"""),
}


def fib_traceset(root: Path, hardware: str) -> Path:
    """One RMSNorm problem as a FlashInfer-Bench TraceSet (definitions/, workloads/, solutions/), the
    same files both harnesses read."""
    (root / "definitions" / "norm").mkdir(parents=True)
    (root / "definitions" / "norm" / "rmsnorm.json").write_text(json.dumps({
        "name": "rmsnorm", "op_type": "norm", "description": "RMSNorm, eps 1e-6, fp32 math",
        "axes": {"batch": {"type": "var"}, "hidden": {"type": "var"}},
        "inputs": {"x": {"shape": ["batch", "hidden"], "dtype": "bfloat16"},
                   "weight": {"shape": ["hidden"], "dtype": "bfloat16"}},
        "outputs": {"y": {"shape": ["batch", "hidden"], "dtype": "bfloat16"}},
        "reference": RMS_REFERENCE}, indent=1))
    (root / "workloads" / "norm").mkdir(parents=True)
    lines = [{"definition": "rmsnorm", "solution": None, "evaluation": None,
              "workload": {"uuid": f"b{b}-h{h}", "axes": {"batch": b, "hidden": h},
                           "inputs": {"x": {"type": "random"}, "weight": {"type": "random"}}}}
             for b, h in ((16, 512), (256, 4096), (2048, 8192), (8192, 8192))]
    (root / "workloads" / "norm" / "rmsnorm.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    sols = root / "solutions" / "opbench" / "norm" / "rmsnorm"
    sols.mkdir(parents=True)
    for language, (name, code) in FIB_SOLUTIONS.items():
        (sols / f"{name}.json").write_text(json.dumps({
            "name": name, "definition": "rmsnorm", "author": "opbench",
            "spec": {"language": language, "target_hardware": [hardware], "entry_point": "main.py::run",
                     "destination_passing_style": True},
            "sources": [{"path": "main.py", "content": code}]}, indent=1))
    return root


def vs_fib(work: Path, device: str, rounds: int = 1) -> dict[str, Any]:
    """Both harnesses' wall time on the same TraceSet for `rounds` rounds, which goes first alternating (a
    fresh copy of the TraceSet each: FlashInfer-Bench writes its traces into it); the medians leave out
    rounds where FlashInfer-Bench failed. Each row's status and latency are the last round's."""
    fib_walls, our_walls, fib_exits = [], [], []
    for i in range(rounds):
        root = fib_traceset(work / f"fib-traceset-{i}", "H200" if device == "cuda" else device)
        if i % 2:
            our_wall, traces, our_tail = run_manifest(root, device, work / f"fib-opbench-{i}")
        start = time.perf_counter()
        fib = subprocess.run([sys.executable, "-c", "from flashinfer_bench.cli.main import cli; cli()", "run",
                              "--local", str(root)], capture_output=True, text=True)
        fib_walls.append(time.perf_counter() - start)
        fib_exits.append(fib.returncode)
        if not i % 2:
            our_wall, traces, our_tail = run_manifest(root, device, work / f"fib-opbench-{i}")
        our_walls.append(our_wall)
        print(f"round {i + 1} ({'opbench' if i % 2 else 'flashinfer-bench'} first): flashinfer-bench "
              f"{fib_walls[-1]:.1f} s (exit {fib.returncode}), opbench {our_wall:.1f} s", flush=True)
    ok = [i for i in range(rounds) if fib_exits[i] == 0] or list(range(rounds))
    fib_wall = statistics.median(fib_walls[i] for i in ok)
    our_wall = statistics.median(our_walls[i] for i in ok)
    rows: dict[tuple[str, str], dict[str, Any]] = {}  # the last round's
    for jsonl in sorted((root / "traces").rglob("*.jsonl")):
        for line in jsonl.read_text().splitlines():
            t = json.loads(line)
            ev = t.get("evaluation") or {}
            rows.setdefault((t["solution"], t["workload"]["uuid"]), {})["fib"] = (
                ev.get("status"), ((ev.get("performance") or {}).get("latency_ms")))
    for t in traces:
        rows.setdefault((t["solution"], t["workload"]), {})["opbench"] = (t["status"], (t.get("timing") or {}).get("median_ms"))
    print(f"\n## the same TraceSet ({len(FIB_SOLUTIONS)} solutions x 4 workloads) on {device}\n")
    print(f"flashinfer-bench 0.1.2 run --local: {fib_wall:.1f} s (median of {len(ok)} of {rounds} rounds; exits {fib_exits})")
    print(f"opbench (python -m harness run):    {our_wall:.1f} s (the same rounds)")
    print(f"opbench / flashinfer-bench wall: {our_wall / fib_wall:.2f}x\n")
    print("| solution / workload | FIB status | FIB latency ms | opbench status | opbench median ms |")
    print("|---|---|---|---|---|")
    for (sol, wl), r in sorted(rows.items()):
        fs, fl = r.get("fib", ("-", None))
        os_, ol = r.get("opbench", ("-", None))
        print(f"| {sol} / {wl} | {fs} | {fl if fl is None else f'{fl:.4f}'} | {os_} | {ol if ol is None else f'{ol:.4f}'} |")
    if fib.returncode:
        print("\nflashinfer-bench said (last lines):\n" + "\n".join((fib.stdout + fib.stderr).strip().splitlines()[-8:]))
    print(f"\nopbench said (last lines):\n{our_tail}")
    ours = [row_cost(t) for t in traces if t["status"] != "SKIPPED"]
    print(f"\nopbench's rows on the TraceSet: rows {sum(r['total'] for r in ours):.1f} s of the command's "
          f"{our_wall:.1f} s\n\n{table(ours)}")
    return {"fib_wall_s": fib_wall, "opbench_wall_s": our_wall, "fib_walls_s": fib_walls, "opbench_walls_s": our_walls,
            "fib_exits": fib_exits,
            "rows": {f"{s} / {w}": r for (s, w), r in rows.items()}}


def run_manifest(manifest: Path, device: str, out: Path,
                 timeout_s: float | None = None) -> tuple[float, list[dict[str, Any]], str]:
    """(command wall s, traces, last lines of output) of one `python -m harness run` (a manifest, or a
    FlashInfer-Bench TraceSet root). Past `timeout_s` the run is interrupted as a user would (SIGINT: the
    harness keeps the rows that finished), so one slow manifest still reports its rows and leaves time
    for the next."""
    print(f"running {manifest.name} on {device}" + (f" (at most {timeout_s:.0f} s)" if timeout_s else ""), flush=True)
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "harness", "run", str(manifest), "--device", device,
                             "--out", str(out), "--quiet"], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        said, _ = proc.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGINT)
        try:
            said, _ = proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            said, _ = proc.communicate()
        said += f"\n(harness_cost: interrupted after {timeout_s:.0f} s)"
    wall = time.perf_counter() - start
    traces: list[dict[str, Any]] = []
    for jsonl in sorted(out.glob("*.jsonl")):
        traces += [json.loads(line) for line in jsonl.read_text().splitlines() if line.strip()]
    return wall, traces, "\n".join(said.strip().splitlines()[-3:])


def row_cost(trace: dict[str, Any]) -> dict[str, Any]:
    """One row's numbers; measured = device time both sides' samples add up to."""
    cost = trace.get("cost_s") or {}
    measured_ms = sum((trace.get(k) or {}).get("measured_ms", 0.0) for k in ("timing", "reference_timing"))
    total, build = cost.get("total", 0.0), cost.get("build", 0.0)
    overhead = total - build - cost.get("correctness", 0.0) - measured_ms / 1e3
    return {"row": f"{trace['solution']} / {trace['workload']}", "status": trace["status"], "total": total,
            "build": build, "correctness": cost.get("correctness", 0.0), "timing_start": cost.get("timing_start", 0.0),
            "sampling": cost.get("sampling", 0.0), "timing_end": cost.get("timing_end", 0.0),
            "checks": cost.get("checks", 0.0),
            "measured_ms": measured_ms, "overhead": overhead,
            "ratio": overhead / (measured_ms / 1e3) if measured_ms > 0 else None}


def table(rows: Sequence[dict[str, Any]]) -> str:
    head = ("| row | status | total s | build s | correctness s | timing start s | sampling s | timing end s | "
            "re-checks s | measured ms | overhead s | overhead/measured |")
    lines = [head, "|" + "---|" * 12]
    for r in rows:
        ratio = f"{r['ratio']:.1f}x" if r["ratio"] is not None else "-"
        lines.append(f"| {r['row']} | {r['status']} | {r['total']:.2f} | {r['build']:.2f} | {r['correctness']:.2f} | "
                     f"{r['timing_start']:.2f} | {r['sampling']:.2f} | {r['timing_end']:.2f} | {r['checks']:.2f} | "
                     f"{r['measured_ms']:.1f} | {r['overhead']:.2f} | {ratio} |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("manifests", nargs="*", type=Path)
    p.add_argument("--device", default="cpu", choices=["cpu", "cuda", "npu"])
    p.add_argument("--add-gib", type=float, default=None, help="GiB per tensor of the generated add problem")
    p.add_argument("--out", type=Path, default=Path(os.environ["OUT"]) if os.environ.get("OUT") else None)
    p.add_argument("--vs-fib", action="store_true", help="also run FlashInfer-Bench 0.1.2 and opbench on one TraceSet")
    p.add_argument("--fib-rounds", type=int, default=1, help="with --vs-fib: rounds, alternating which runs first")
    p.add_argument("--fib-only", action="store_true", help="with --vs-fib: no manifest of our own")
    p.add_argument("--timeout-s", type=float, default=None, help="interrupt each manifest's run after this long "
                   "(its finished rows are kept and shown)")
    args = p.parse_args(argv)
    if (args.fib_only or args.fib_rounds != 1) and not args.vs_fib:
        p.error("--fib-only and --fib-rounds go with --vs-fib")
    if args.fib_only and args.manifests:
        p.error("--fib-only runs no manifest of our own: leave the manifests out")
    if args.fib_rounds < 1:
        p.error("--fib-rounds must be 1 or more")
    work = Path(tempfile.mkdtemp(prefix="harness-cost-"))
    manifests = list(args.manifests)
    if not manifests and not args.fib_only:
        gib = args.add_gib if args.add_gib is not None else (1.0 if args.device != "cpu" else 0.125)
        manifests = [ROOT / "manifests" / "rmsnorm.yaml", add_manifest(work, gib)]
    results: dict[str, Any] = {}
    for i, manifest in enumerate(manifests):
        wall, traces, tail = run_manifest(manifest, args.device, work / f"out{i}", args.timeout_s)
        rows = [row_cost(t) for t in traces if t["status"] not in ("SKIPPED", "INTERRUPTED")]
        cut = sum(t["status"] == "INTERRUPTED" for t in traces)
        in_rows = sum(r["total"] for r in rows)
        print(f"\n## {manifest.name} on {args.device}: command {wall:.1f} s, rows {in_rows:.1f} s, "
              f"outside the rows {wall - in_rows:.1f} s ({len(rows)} rows run"
              + (f", {cut} not reached before --timeout-s" if cut else "") + ")\n")
        print(table(rows) if rows else f"no rows ran:\n{tail}")
        later = [r for r in rows if r["build"] == 0 and r["status"] == "PASSED"]
        if later:
            worst = max(later, key=lambda r: r["overhead"])
            print(f"\nworst overhead of a row after the first: {worst['overhead']:.2f} s ({worst['row']}); "
                  f"target 1 s")
        results[str(manifest)] = {"wall_s": wall, "rows": rows}
    if args.vs_fib:
        results["vs_fib"] = vs_fib(work, args.device, args.fib_rounds)
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "harness_cost.json").write_text(json.dumps(results, indent=1))
        print(f"\nnumbers: {args.out / 'harness_cost.json'}")


if __name__ == "__main__":
    main()
