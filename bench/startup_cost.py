"""Where a run's time outside its timed samples goes: a worker's start-up phases, alone and with the
run's other workers starting beside it, and a whole `harness run` cut at its run clock's marks.

A warm `make bench MANIFEST=rmsnorm.yaml` on the H100 took 30.0 s of which the rows' own work was
14.9 s (2026-12-07): 4.3 s before the runner, 5.1 s for the reference's Prepare, 2-3 s after the
last row. This prints the pieces of each, so they can be cut where they are. On the H100 (2026-12-07)
a worker's start was torch's import (2.8-5.2 s), the CUDA context (0.4 s) and torch.profiler's first
session (3.9-6.1 s, all of it in `profile().__enter__`, which imports torch._inductor and
torch._dynamo); nine at once took as long each. The device's own tracer (`--tracers auto`) registers
CUPTI's buffers directly where libcupti loads; `profiler` times torch.profiler's as before.

    python bench/startup_cost.py --device cuda --procs 1,9 --tracers auto,profiler --run rmsnorm.yaml
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# One worker's start, phase by phase, as `WorkerState.prepare` takes it (seconds since the process began).
CHILD = r"""
import json, os, sys, time
from pathlib import Path
def since():
    ticks = int(Path("/proc/self/stat").read_text().rsplit(")", 1)[1].split()[19])
    return float(Path("/proc/uptime").read_text().split()[0]) - ticks / os.sysconf("SC_CLK_TCK")
marks = {"python": since()}
import torch
marks["torch"] = since()
from harness.execute import worker
marks["worker_module"] = since()
from harness.measure.devices import make_device
device = make_device(sys.argv[1], 0)

device.setup()
marks["device_setup"] = since()
if device.traces_activities():
    if sys.argv[2] == "profiler":
        from harness.measure.devices.tracers import ProfilerTracer
        device._tracer = ProfilerTracer("compared")
    device.tracer()
    marks["tracer"] = since()
    device.device_activities(lambda: None)
    marks["first_trace"] = since()
    device.device_activities(lambda: None)
    marks["second_trace"] = since()
print(json.dumps(marks))
"""

def workers(device: str, count: int, tracer: str) -> list[dict[str, float]]:
    """`count` worker start-ups at once, each in a fresh interpreter."""
    procs = [subprocess.Popen([sys.executable, "-W", "ignore", "-c", CHILD, device, tracer], cwd=ROOT,
                              stdout=subprocess.PIPE, text=True)
             for _ in range(count)]
    return [json.loads(p.communicate()[0].strip().splitlines()[-1]) for p in procs]


def show_workers(device: str, count: int, tracer: str) -> None:
    marks = workers(device, count, tracer)
    phases = list(marks[0])
    line = []
    for prev, phase in zip([None, *phases], phases):
        took = [m[phase] - (m[prev] if prev else 0.0) for m in marks]
        line.append(f"{phase} {statistics.median(took):.2f} (max {max(took):.2f})")
    print(f"{count} worker(s) at once ({tracer} tracer), seconds each phase took, median (max): " + ", ".join(line), flush=True)


def show_run(manifest: str, device: str, extra: list[str]) -> None:
    """One `harness run`, its wall against the run clock's marks, and its rows' phases."""
    with tempfile.TemporaryDirectory() as out:
        t = time.perf_counter()
        rc = subprocess.run([sys.executable, "-m", "harness", "run", manifest, "--device", device, "--out", out,
                             "--quiet", *extra], cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode
        wall = time.perf_counter() - t
        (path,) = Path(out).glob("*.json")
        report = json.loads(path.read_text())
    clock = report["environment"].get("run_clock_s", {})
    print(f"harness run {manifest}: exit {rc}, wall {wall:.2f} s; run clock {clock}; "
          f"after the last row {wall - clock.get('rows_done', wall):.2f} s", flush=True)
    phases: dict[str, list[float]] = {}
    firsts: dict[str, list[float]] = {}
    seen: set[str] = set()
    for t in report["traces"]:
        cost = t.get("cost_s") or {}
        into = firsts if t["solution"] not in seen else phases
        seen.add(t["solution"])
        for k, v in cost.items():
            into.setdefault(k, []).append(v)
    for name, rows in (("first rows", firsts), ("later rows", phases)):
        print(f"  {name}: " + ", ".join(f"{k} {sum(v):.2f} s ({statistics.median(v):.3f} median)" for k, v in rows.items()))


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--device", default="cuda")
    p.add_argument("--procs", default="1,9", help="worker start-ups at once, comma-separated counts")
    p.add_argument("--tracers", default="auto,profiler",
                   help="comma-separated: auto (the device's own, CUPTI directly where libcupti loads), "
                        "profiler (torch.profiler): each count of workers started with each, alternating")
    p.add_argument("--run", default="", help="also run this manifest once and cut its wall at the run clock's marks")
    p.add_argument("--run-args", default="", help="extra `harness run` arguments, space-separated")
    a = p.parse_args()
    for count in [int(x) for x in a.procs.split(",") if x]:
        for tracer in [x for x in a.tracers.split(",") if x]:
            show_workers(a.device, count, tracer)
    if a.run:
        show_run(a.run, a.device, a.run_args.split())
    return 0


if __name__ == "__main__":
    sys.exit(main())
