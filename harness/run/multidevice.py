"""Several devices of one host: one child process per device, each pinned to its device.

The parent cuts the units into one contiguous share per device (`shard.split`) and starts, per device, a child
`python -m harness.run.multidevice JOB.json` with CUDA_VISIBLE_DEVICES / ASCEND_RT_VISIBLE_DEVICES set
to that device alone, so the child (and every worker it spawns) sees it as device 0 and runs a
normal single-device suite run over its share. Children report progress as JSON lines on stdout
and write a partial report; the parent merges them with the same code as `harness merge`. A child
that dies is a failure of its device only: its units become RUNTIME_ERROR traces, the others go on.

The CPU has no device to pin: `--device cpu --devices 0,1` fakes two "devices" as two processes,
each limited to its share of the cores (OMP_NUM_THREADS), which is how the multi-device path is
tested on machines with no accelerator.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

from harness import paths
from harness.spec.model import Manifest
from harness.run.progress import RunProgress
from harness.results.report import Failure, Report, ReportError
from harness.results.merge import merge
from harness.results.interrupt import EXIT_CODE as INTERRUPTED, signals_stop_the_run, stopped
from harness.run.runner import RunOptions
from harness.run.suite import failed_report, prepare, run_here
from harness.logs import tail_of
from harness.spec.shard import Unit, restrict, split

PIN_VARS = {"cuda": "CUDA_VISIBLE_DEVICES", "npu": "ASCEND_RT_VISIBLE_DEVICES"}
EVENT_PREFIX = "@opbench "  # marks a progress line on a child's stdout
CHILD_GRACE_S = 60.0  # an interrupted child closes its workers and writes its report within this


@dataclass(frozen=True)
class DeviceJob:
    """One child: which physical device, which units, where its files go."""

    label: str            # "cuda:1", shown in progress and failures
    kind: str
    device_id: str        # the id the pin variable gets
    units: tuple[Unit, ...]
    out_dir: Path

    @property
    def job_file(self) -> Path:
        return self.out_dir / "job.json"

    @property
    def report_file(self) -> Path:
        return self.out_dir / "report.json"

    @property
    def stderr_file(self) -> Path:
        return self.out_dir / "stderr.log"


def device_count(kind: str) -> int:
    if kind == "cuda":
        import torch
        return torch.cuda.device_count()
    if kind == "npu":
        import torch
        import torch_npu  # noqa: F401
        return torch.npu.device_count()
    return 1


def parse_devices(spec: str, kind: str, environ: dict[str, str] | None = None,
                  count: Callable[[str], int] = device_count) -> list[str]:
    """`all` or `0,1,...` -> physical ids for the pin variable. Indices are as this process sees the
    devices, so under CUDA_VISIBLE_DEVICES=4,5 `--devices 1` is physical device 5."""
    environ = dict(os.environ if environ is None else environ)
    visible = [v.strip() for v in environ.get(PIN_VARS.get(kind, ""), "").split(",") if v.strip()]
    if spec.strip() == "all":
        indices = list(range(count(kind)))
        if not indices:
            raise ValueError(f"--devices all: no {kind} device is visible")
    else:
        try:
            indices = [int(x) for x in spec.split(",") if x.strip()]
        except ValueError:
            raise ValueError(f"bad --devices {spec!r}: expected 'all' or indices like 0,1,3")
        if not indices or len(set(indices)) != len(indices) or min(indices) < 0:
            raise ValueError(f"bad --devices {spec!r}: expected distinct non-negative indices")
        if kind in PIN_VARS:
            n = count(kind)
            if max(indices) >= n:
                raise ValueError(f"--devices {spec}: only {n} {kind} device(s) visible")
    return [visible[i] if i < len(visible) else str(i) for i in indices]


def child_env(kind: str, device_id: str, n_devices: int, base: dict[str, str] | None = None) -> dict[str, str]:
    env = dict(os.environ if base is None else base)
    if kind in PIN_VARS:
        env[PIN_VARS[kind]] = device_id
    else:  # fake CPU devices share the cores instead of fighting over all of them
        env["OMP_NUM_THREADS"] = str(max(1, (os.cpu_count() or 1) // n_devices))
    env = paths.child_env(env)
    env["PYTHONUNBUFFERED"] = "1"
    return env


def child_command(job: DeviceJob) -> list[str]:
    return [sys.executable, "-m", "harness.run.multidevice", str(job.job_file)]


def _pump(proc: subprocess.Popen, job: DeviceJob, progress: RunProgress, done: dict[str, int],
          lock: threading.Lock) -> None:
    """Relay a child's progress lines to the shared progress display."""
    assert proc.stdout is not None
    for line in proc.stdout:
        if not line.startswith(EVENT_PREFIX):
            if line.strip():
                progress.log(f"{job.label}: {line.rstrip()}")
            continue
        try:
            ev = json.loads(line[len(EVENT_PREFIX):])
        except json.JSONDecodeError:
            continue
        if ev.get("event") == "running":
            progress.running(job.label, ev.get("label", ""))
        elif ev.get("event") == "advance":
            progress.advance(job.label, ev.get("label", ""), ev.get("status", ""))
            with lock:
                done[job.label] += 1
        elif ev.get("event") == "sync":
            with lock:
                done[job.label] = int(ev.get("done", 0))
                total = sum(done.values())
            progress.sync(total)
        elif ev.get("event") == "log":
            progress.log(f"{job.label}: {ev.get('message', '')}")


def run_on_devices(suite_path: Path, manifests: Sequence[Manifest], units: Sequence[Unit], kind: str,
                   device_ids: Sequence[str], job_args: dict[str, Any], out_dir: Path, progress: RunProgress,
                   command: Callable[[DeviceJob], list[str]] = child_command) -> list[Report]:
    """Run `units` spread over `device_ids`, one child each; one report per child (a dead child's
    report holds RUNTIME_ERROR traces for its share and a failure naming the device).

    `job_args` carries what the child needs to rebuild the same suite (timing overrides, filters,
    run seed); `command` exists so tests can make one device fail."""
    shares = split(list(units), len(device_ids))
    jobs = [DeviceJob(f"{kind}:{dev}", kind, dev, tuple(share), out_dir / "devices" / f"{kind}-{dev}")
            for dev, share in zip(device_ids, shares) if share]
    procs: list[tuple[DeviceJob, subprocess.Popen, threading.Thread]] = []
    done = {job.label: 0 for job in jobs}
    lock = threading.Lock()
    for job in jobs:
        job.out_dir.mkdir(parents=True, exist_ok=True)
        job.report_file.unlink(missing_ok=True)
        job.job_file.write_text(json.dumps({
            **job_args, "suite": str(suite_path), "device": kind, "lane": job.label,
            "units": [[u.problem, u.workload] for u in job.units], "report": str(job.report_file),
            "log_dir": str(job.out_dir / "logs")}, indent=2))
        with open(job.stderr_file, "w") as err:  # a session of its own: Ctrl-C reaches it once, from here
            proc = subprocess.Popen(command(job), stdout=subprocess.PIPE, stderr=err, text=True,
                                    env=child_env(kind, job.device_id, len(jobs)), start_new_session=True)
        pump = threading.Thread(target=_pump, args=(proc, job, progress, done, lock), daemon=True)
        pump.start()
        procs.append((job, proc, pump))

    interrupted: KeyboardInterrupt | None = None
    try:
        for _, proc, _ in procs:
            proc.wait()
    except KeyboardInterrupt as exc:  # each child writes what it finished; a child that will not is killed
        interrupted = exc
        _stop_children([proc for _, proc, _ in procs])
    reports: list[Report] = []
    for job, proc, pump in procs:
        rc = proc.wait()
        pump.join()
        if rc in (0, INTERRUPTED) and job.report_file.is_file():
            try:
                reports.append(Report.load(job.report_file))
                continue
            except ReportError:
                pass
        if interrupted is not None:  # its units are counted missing, not failed
            continue
        why = f"device {job.label} failed (child exit code {rc})"
        tail = tail_of(job.stderr_file, 1500)
        failure = Failure(where=job.label, message=f"{why}\n{tail}".strip(), device=job.device_id, returncode=rc,
                          units=len(job.units))
        progress.log(f"{why}; its {len(job.units)} workload(s) are marked RUNTIME_ERROR. stderr: {job.stderr_file}")
        for k, (_, m) in enumerate(restrict(manifests, job.units)):
            reports.append(failed_report(m, kind, job_args.get("run_seed"), f"{why}: {tail[-300:]}" if tail else why,
                                         failure if k == 0 else None))
    if interrupted is not None:
        raise stopped(interrupted, reports) from None
    return reports


def _stop_children(procs: Sequence[subprocess.Popen]) -> None:
    live = [p for p in procs if p.poll() is None]
    for p in live:
        p.send_signal(signal.SIGINT)
    deadline = time.monotonic() + CHILD_GRACE_S
    for p in live:
        try:
            p.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            p.kill()


class JsonProgress:
    """The child's side of the progress protocol: one prefixed JSON object per line on stdout."""

    def __init__(self, stream: Any = None) -> None:
        self.stream = stream or sys.stdout

    def _emit(self, **event: Any) -> None:
        self.stream.write(EVENT_PREFIX + json.dumps(event) + "\n")
        self.stream.flush()

    def start(self, total: int) -> None:
        self._emit(event="start", total=total)

    def running(self, lane: str, label: str) -> None:
        self._emit(event="running", label=label)

    def advance(self, lane: str, label: str, status: str) -> None:
        self._emit(event="advance", label=label, status=status)

    def sync(self, done: int) -> None:
        self._emit(event="sync", done=done)

    def log(self, message: str) -> None:
        self._emit(event="log", message=message)

    def close(self) -> None:
        pass


def child_main(job_file: str) -> int:
    """A child: rebuild the suite exactly as the parent did, run its units on device 0, write the report."""
    job = json.loads(Path(job_file).read_text())
    manifests = prepare(Path(job["suite"]), job.get("overrides", {}), job.get("solutions"), job.get("workloads"))
    units = [Unit(int(p), str(w)) for p, w in job["units"]]
    options = RunOptions(device=job["device"], device_index=0, log_dir=Path(job["log_dir"]))
    rc = 0
    with signals_stop_the_run():
        try:
            report = run_here(manifests, units, options, int(job["run_seed"]), JsonProgress(), lane=job["lane"])
        except KeyboardInterrupt as exc:  # the parent was interrupted: hand back what finished
            report, rc = merge(stopped(exc).reports, allow_partial=True), INTERRUPTED
        out = Path(job["report"])
        report.write(out.parent, out.stem)
    return rc


if __name__ == "__main__":
    sys.exit(child_main(sys.argv[1]))
