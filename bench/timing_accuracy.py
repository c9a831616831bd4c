"""How accurate are opbench's numbers, measured the way users get them (`python -m harness run`)?

One run prints, per kernel, the per-call time that each timer reports and its error against Nsight
Compute, side by side (CUDA only; every number in microseconds, error = timer / ncu - 1):

| column                     | what it is                                                                      |
|----------------------------|---------------------------------------------------------------------------------|
| kernel                     | the case (below)                                                                |
| ncu us                     | ground truth: Nsight Compute `gpu__time_duration.sum`, median over `--calls` calls of the sum of each call's kernels; `--clock-control none` (clocks as the GPU picks them, as every other timer sees them), `--cache-control all` (cold caches, as every other timer flushes L2) |
| opbench default us (mode)  | `python -m harness run M --device cuda` with no `--timer`: the solution trace's `timing.median_ms`, and the timer the report says it used (`timing.mode`: events, cupti, ...) |
| opbench events us          | the same with `--timer events`                                                  |
| do_bench us                | `triton.testing.do_bench(fn, return_mode="median")` on the same callable         |
| FIB us                     | FlashInfer-Bench 0.1.2 `flashinfer_bench/bench/timing.py::do_bench(fn, return_mode="median")`, that one file loaded on its own (its package imports flashinfer-python) |
| cuda-bench us              | NVIDIA nvbench's Python package (`cuda.bench` 0.3.0): cold GPU time median (`nv/cold/time/gpu/median`, mean if absent), `state.exec(..., batched=False)` on nvbench's stream |

opbench is measured only through `harness run`: for each case a manifest is generated in a temp
folder (one solution, the kernel, expected PASSED; a plain-torch reference; one workload; `bench:`
max_time_s 1.5 and one correctness round), and one suite of all of them is run twice (the default
timer, then `--timer events`); the JSON report is read back. The peers and ncu time the same solution
code on inputs of the same shapes, each in one process for every case (ncu's split at a marker kernel
each case launches first). One process per timer is what fits every case in one device call: a process
per case and timer took 52-70 s a case on the H200. A cell says `n/a (reason)` when that timer failed;
the rest of the table still prints. For a multi-kernel case ncu sums the kernels' durations and leaves
out the gaps between them, which every other timer includes.

    python bench/timing_accuracy.py run [--cases A B] [--skip ncu|peers|opbench] [--out DIR]
    python bench/timing_accuracy.py kernel CASE... --calls N [--root D]    # inner: the calls only (under ncu)
    python bench/timing_accuracy.py peers CASE... --json PATH [--root D]   # inner: do_bench, FIB, cuda-bench
    python bench/timing_accuracy.py manifest CASE DIR                      # write CASE's manifest and files
    python bench/timing_accuracy.py probe CASE... | kinds CASE...           # CUPTI in other sequences or record kinds, and ncu
    python bench/timing_accuracy.py table A/timing_accuracy.json B/...      # one table from runs of parts of the cases

`run` writes every number to `$OUT/timing_accuracy.json` (or `--out`). The peers need
`PYTHONPATH` to hold triton, flashinfer_bench (`pip install --no-deps --target`) and cuda-bench.
Evidence: the manifests, the ncu CSV parser, the nvbench JSON reader, the FlashInfer-Bench loader and
CPU round trips of `harness run` over a suite, the peers' and the profiled processes are tested on this
CPU machine (tests/bench/); the whole run ran on an H100 on 2026-12-07 (docs/hardware.md, 256 s).
"""
from __future__ import annotations

import argparse
import csv
import hashlib
import importlib.util
import io
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import types
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import Any, Callable, Sequence

import yaml

ROOT = Path(__file__).resolve().parent.parent
RMSNORM = ROOT / "manifests" / "rmsnorm"
SOLUTION = "kernel"  # the one solution's name in every generated manifest
SERIALIZED_KERNEL = 3  # CUPTI_ACTIVITY_KIND_KERNEL: the harness's kernel record (CONCURRENT_KERNEL, 10), serialized
FLOOR = "add-fp32-1"  # the case whose every reading is that timer's floor (a launch with no work)
BENCH = {"max_time_s": 1.5, "correctness_rounds": 1}  # enough samples for the stopping rule, bounded time
PEERS = ("do_bench", "fib", "cuda_bench")  # the other timers, by their key in a row and in the JSON


# -- the cases ----------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Tensor:
    name: str
    shape: tuple[str, ...]  # axis names
    dtype: str


@dataclass(frozen=True)
class Case:
    """One kernel to time: its solution code, a plain-torch reference, the sizes."""

    name: str
    language: str                 # pytorch | triton | cuda_cpp
    axes: dict[str, int]
    inputs: tuple[Tensor, ...]
    output: Tensor
    solution_file: str            # file name beside the manifest
    solution_source: str
    reference: str                # inline Python defining run(...)
    kernels: int                  # launches per call we expect (ncu counts them)
    entry: str = "run"
    build: dict[str, Any] = field(default_factory=dict)
    tolerance: dict[str, float] = field(default_factory=dict)
    description: str = ""
    sources: dict[str, str] = field(default_factory=dict)  # more files beside the entry file (name -> text)

    def shape(self, t: Tensor) -> tuple[int, ...]:
        return tuple(self.axes[a] for a in t.shape)


def _torch_op(body: str, args: str) -> str:
    return f"import torch\n\n\ndef run({args}):\n    return {body}\n"


def _elementwise_add(name: str, n: int) -> Case:
    return Case(name, "pytorch", {"n": n}, (Tensor("a", ("n",), "float32"), Tensor("b", ("n",), "float32")),
                Tensor("c", ("n",), "float32"), "solution.py", _torch_op("torch.add(a, b)", "a, b"),
                _torch_op("a + b", "a, b"), 1, description=f"torch elementwise add, fp32, {n} elements")


def _softmax(name: str, rows: int, cols: int) -> Case:
    x = Tensor("x", ("rows", "cols"), "bfloat16")
    return Case(name, "pytorch", {"rows": rows, "cols": cols}, (x,), replace(x, name="y"), "solution.py",
                _torch_op("torch.softmax(x, dim=-1)", "x"),
                _torch_op("torch.softmax(x.float(), dim=-1).to(x.dtype)", "x"), 1,
                description=f"torch softmax over the last axis, bf16, {rows}x{cols}")


def _gemm(name: str, m: int, n: int, k: int) -> Case:
    return Case(name, "pytorch", {"m": m, "n": n, "k": k},
                (Tensor("a", ("m", "k"), "bfloat16"), Tensor("b", ("k", "n"), "bfloat16")),
                Tensor("c", ("m", "n"), "bfloat16"), "solution.py", _torch_op("torch.matmul(a, b)", "a, b"),
                _torch_op("a @ b", "a, b"), 1,
                tolerance={"atol": 1.0, "rtol": 0.02, "max_mismatch": 0.001},  # in case cuBLAS picks another algorithm
                description=f"cuBLAS GEMM bf16 {m}x{n}x{k}")


def _rmsnorm(name: str, language: str, rows: int, cols: int) -> Case:
    """The repo's own RMSNorm solutions and reference (manifests/rmsnorm/), read when the case is made."""
    x = Tensor("x", ("batch", "hidden"), "bfloat16")
    common = dict(axes={"batch": rows, "hidden": cols}, inputs=(x, Tensor("weight", ("hidden",), "bfloat16")),
                  output=replace(x, name="y"), reference=(RMSNORM / "reference.py").read_text(), kernels=1,
                  entry="rmsnorm", tolerance={"atol": 0.02, "rtol": 0.02})
    if language == "triton":
        return Case(name, "triton", solution_file="triton_rmsnorm.py",
                    solution_source=(RMSNORM / "triton_rmsnorm.py").read_text(),
                    description=f"Triton RMSNorm (manifests/rmsnorm/triton_rmsnorm.py), bf16 {rows}x{cols}", **common)
    declared = yaml.safe_load((RMSNORM / "solutions" / "cuda.yaml").read_text())
    entry_file = declared["entry_point"].split("::")[0].removeprefix("../")
    more = {Path(f).name: (RMSNORM / "solutions" / f).read_text() for f in declared.get("sources", [])}
    return Case(name, "cuda_cpp", solution_file=entry_file, solution_source=(RMSNORM / entry_file).read_text(),
                build=dict(declared.get("build") or {}), sources=more,
                description=f"CUDA C++ RMSNorm (manifests/rmsnorm/rmsnorm.cu), bf16 {rows}x{cols}", **common)


def _matmul_bias_relu(name: str, size: int) -> Case:
    return Case(name, "pytorch", {"m": size, "n": size, "k": size},
                (Tensor("a", ("m", "k"), "bfloat16"), Tensor("b", ("k", "n"), "bfloat16"),
                 Tensor("bias", ("n",), "bfloat16")),
                Tensor("c", ("m", "n"), "bfloat16"), "solution.py",
                _torch_op("torch.relu(a @ b + bias)", "a, b, bias"),
                _torch_op("torch.clamp_min(torch.matmul(a, b) + bias, 0)", "a, b, bias"), 3,
                tolerance={"atol": 1.0, "rtol": 0.02, "max_mismatch": 0.001},
                description=f"torch.relu(a @ b + bias) as separate kernels (GEMM, add, relu), bf16 {size}^3")


def all_cases() -> dict[str, Case]:
    """Roughly fastest first: from ~2 us to ~3 ms on an H100."""
    cases = [
        replace(_elementwise_add(FLOOR, 1), description="a one-element fp32 add: each timer's floor, a launch that does no work"),
        _elementwise_add("add-fp32-1M", 1 << 20),
        _softmax("softmax-bf16-256x4096", 256, 4096),
        _rmsnorm("triton-rmsnorm-256x4096", "triton", 256, 4096),
        _gemm("gemm-bf16-1024", 1024, 1024, 1024),
        _elementwise_add("add-fp32-16M", 16 << 20),
        _rmsnorm("triton-rmsnorm-4096x8192", "triton", 4096, 8192),
        _rmsnorm("cuda-rmsnorm-4096x8192", "cuda_cpp", 4096, 8192),
        _softmax("softmax-bf16-8192x8192", 8192, 8192),
        _matmul_bias_relu("matmul-bias-relu-bf16-2048", 2048),
        _gemm("gemm-bf16-4096", 4096, 4096, 4096),
        _elementwise_add("add-fp32-256M", 256 << 20),
        _gemm("gemm-bf16-8192", 8192, 8192, 8192),
    ]
    return {c.name: c for c in cases}


# -- the manifest (pure) ------------------------------------------------------------------------------
class _Dumper(yaml.SafeDumper):
    """Multi-line strings (the reference's source) as literal blocks, so the manifest reads as code."""


_Dumper.add_representer(str, lambda d, s: d.represent_scalar("tag:yaml.org,2002:str", s, style="|" if "\n" in s else None))


def manifest_files(case: Case, bench: dict[str, Any] | None = None) -> dict[str, str]:
    """Relative file name -> text: `manifest.yaml` (schemas/manifest.schema.json, shaped as
    manifests/rmsnorm.yaml) and the solution's code beside it."""
    definition = {
        "name": case.name,
        "description": case.description,
        "axes": {a: {"type": "var"} for a in case.axes},
        "inputs": {t.name: {"shape": list(t.shape), "dtype": t.dtype} for t in case.inputs},
        "outputs": {case.output.name: {"shape": list(case.output.shape), "dtype": case.output.dtype}},
        "reference": {"source": case.reference, "entry": "run"},
    }
    workload: dict[str, Any] = {"id": "w", "axes": dict(case.axes)}
    if case.tolerance:
        workload["tolerance"] = dict(case.tolerance)
    solution: dict[str, Any] = {"name": SOLUTION, "description": case.description, "language": case.language,
                                "entry_point": f"{case.solution_file}::{case.entry}", "expected_status": "PASSED"}
    if case.language != "pytorch":
        solution["devices"] = ["cuda"]
    if case.build:
        solution["build"] = case.build
    if case.sources:
        solution["sources"] = list(case.sources)
    doc = {"schema_version": 1, "definition": definition, "workloads": [workload], "solutions": [solution],
           "bench": dict(BENCH if bench is None else bench)}
    header = f"# Generated by bench/timing_accuracy.py: {case.description}\n"
    return {"manifest.yaml": header + yaml.dump(doc, Dumper=_Dumper, sort_keys=False), case.solution_file: case.solution_source,
            **case.sources}


def write_case(case: Case, folder: Path, bench: dict[str, Any] | None = None) -> Path:
    """Write the case's manifest and files into `folder`; the manifest's path."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in manifest_files(case, bench).items():
        (folder / name).write_text(text)
    return folder / "manifest.yaml"


# -- readings: what each timer said ------------------------------------------------------------------
@dataclass(frozen=True)
class Reading:
    """One timer's per-call time for one case, or why there is none."""

    us: float | None
    note: str = ""  # why there is no number, or a remark on it

    def __post_init__(self) -> None:
        if self.us is None and not self.note:
            raise ValueError("a reading without a number must say why")
        if self.us is not None and not self.us > 0:
            raise ValueError(f"a time must be positive, got {self.us}")


@dataclass(frozen=True)
class OpbenchReading(Reading):
    mode: str = ""          # the report's timing.mode: the timer that was used
    iqm_us: float | None = None  # the report's timing.iqm_ms: below a quantized timer's step (JSON only)
    n: int = 0
    rule_met: bool = False
    stop_reason: str = ""
    flags: tuple[str, ...] = ()


@dataclass(frozen=True)
class NcuReading(Reading):
    kernels_per_call: int | None = None
    kernel_names: tuple[str, ...] = ()


def failed(note: str, limit: int = 400) -> Reading:
    text = " ".join(note.split())
    return Reading(None, (text if len(text) <= limit else text[:limit - 3] + "...") or "failed without a message")


def reason(output: str) -> str:
    """The line of a process's output that says what went wrong: the last exception or ==ERROR== line,
    else the output's tail."""
    lines = [ln.strip() for ln in output.strip().splitlines() if ln.strip()]
    hits = [ln for ln in lines if ln.startswith("==ERROR==") or re.match(r"^[\w.]*(Error|Exception)\b", ln)]
    return hits[-1] if hits else output[-300:]


def guarded(read: Callable[[], Reading]) -> Reading:
    """A reading, or the reason it could not be made: one bad file is one bad cell, not a lost table."""
    try:
        return read()
    except Exception as exc:  # noqa: BLE001
        return failed(f"{type(exc).__name__}: {exc}")


# -- the timers' processes ----------------------------------------------------------------------------
@dataclass(frozen=True)
class Finished:
    """What a timer's process left: its exit, its output, and whether its time ran out."""

    returncode: int
    stdout: str
    stderr: str
    timed_out: bool = False


class Interrupted(KeyboardInterrupt):
    """SIGTERM or Ctrl-C while a stage's process ran: carries the readings the process had finished, so a
    cut run still reports them (`run_main`)."""

    def __init__(self, partial: dict[str, Any]):
        super().__init__("interrupted")
        self.partial = partial


def bounded(cmd: Sequence[str], timeout_s: float, env: dict[str, str] | None = None) -> Finished:
    """Run `cmd` for at most `timeout_s`; past that, or when this process is interrupted, the child gets
    SIGTERM first (`harness run` then writes a report of the rows it finished) and is killed only if it
    has not ended 30 s later. An interruption is raised again once the child has ended."""
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def stop() -> tuple[str, str]:
        proc.terminate()
        try:
            return proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            return proc.communicate()
    try:
        out, err = proc.communicate(timeout=timeout_s)
        return Finished(proc.returncode, out, err)
    except subprocess.TimeoutExpired:
        out, err = stop()
        return Finished(proc.returncode, out, err, timed_out=True)
    except KeyboardInterrupt:
        stop()
        raise


# -- opbench, through `harness run` -------------------------------------------------------------------
def write_suite(cases: Sequence[Case], root: Path, bench: dict[str, Any] | None = None) -> Path:
    """Every case's manifest in `root/<case>/` and a suite (schemas/suite.schema.json) of them all in
    `root/suite.yaml`, so that one `harness run` (one start-up, one device context) times every case."""
    for case in cases:
        write_case(case, root / case.name, bench)
    doc = {"schema_version": 1, "description": "bench/timing_accuracy.py: every case, one run",
           "problems": [f"{case.name}/manifest.yaml" for case in cases], "bench": dict(BENCH if bench is None else bench)}
    path = root / "suite.yaml"
    path.write_text(yaml.dump(doc, Dumper=_Dumper, sort_keys=False))
    return path


def harness_run(manifest: Path, out: Path, timer: str | None, names: Sequence[str], device: str = "cuda",
                timeout_s: float = 600) -> dict[str, Reading]:
    """`python -m harness run M --device D --out OUT --quiet [--timer T]` (a manifest or a suite), then
    each named problem's solution trace in the JSON report it wrote."""
    cmd = [sys.executable, "-m", "harness", "run", str(manifest), "--device", device, "--out", str(out), "--quiet"]
    if timer:
        cmd += ["--timer", timer]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    try:
        done = bounded(cmd, timeout_s, env)
    except KeyboardInterrupt:
        raise Interrupted(report_readings(out, names, "harness run interrupted (SIGTERM or Ctrl-C)", cut=True)) from None
    if done.timed_out:
        return report_readings(out, names, f"harness run did not finish in {timeout_s:.0f} s", cut=True)
    return report_readings(out, names, f"harness run exit {done.returncode}, no report: {reason(done.stderr or done.stdout)}")


def report_readings(out: Path, names: Sequence[str], why: str, cut: bool = False) -> dict[str, Reading]:
    """Each named problem's reading from the report in `out` (a `cut` run's holds the rows it finished);
    `why` for every problem when there is no report, and, for a cut run, for each problem the report has
    no row of."""
    reports = sorted(out.glob("*.json"))
    if not reports:
        return {name: failed(why) for name in names}
    try:
        got = read_report(reports[0], SOLUTION, names)
    except Exception as exc:  # noqa: BLE001 - an unreadable report is every cell's reason
        return {name: failed(f"{type(exc).__name__}: {exc}") for name in names}
    return {name: failed(why) if cut and r.us is None and r.note.startswith("no trace of") else r for name, r in got.items()}


def read_report(path: Path, solution: str, names: Sequence[str]) -> dict[str, Reading]:
    """Each named problem's (definition's) timing of `solution` in an opbench report, or why it has none."""
    from harness.results.report import Report  # only the parent reads reports; no torch needed here

    report = Report.load(path)
    got: dict[str, Reading] = {}
    for name in names:
        traces = [t for t in report.traces if t.solution == solution and t.definition == name]
        got[name] = trace_reading(traces[0]) if traces else failed(f"no trace of {name}/{solution} in {path.name}")
    return got


def trace_reading(t: Any) -> OpbenchReading | Reading:
    if str(t.status) != "PASSED":
        return failed(f"{t.status}: {t.message}")
    if t.timing is None:
        return failed("PASSED without timing")
    s = t.timing
    return OpbenchReading(s.median_ms * 1e3, "" if s.rule_met else f"stopping rule not met ({s.stop_reason})",
                          mode=s.mode, n=s.n, rule_met=s.rule_met, stop_reason=s.stop_reason, flags=tuple(t.flags),
                          iqm_us=s.iqm_ms * 1e3)


# -- Nsight Compute -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class NcuKernel:
    id: int
    name: str
    us: float


_UNIT_US = {"ns": 1e-3, "nsecond": 1e-3, "usecond": 1.0, "us": 1.0, "msecond": 1e3, "ms": 1e3, "second": 1e6, "s": 1e6}


def parse_ncu_csv(text: str, metric: str = "gpu__time_duration.sum") -> list[NcuKernel]:
    """The `metric` rows of ncu's `--csv` output (everything before the '"ID"' header, ==PROF== lines
    and the application's own prints, is skipped), in launch order."""
    start = text.find('"ID"')
    if start < 0:
        return []
    lines = [ln for ln in text[start:].splitlines() if ln.startswith('"')]
    out = []
    for row in csv.DictReader(io.StringIO("\n".join(lines))):
        if row.get("Metric Name") != metric:
            continue
        unit = (row.get("Metric Unit") or "ns").strip()
        if unit not in _UNIT_US:
            raise ValueError(f"ncu reports {metric} in {unit!r}; expected one of {sorted(_UNIT_US)}")
        value = float(row["Metric Value"].replace(",", ""))
        out.append(NcuKernel(int(row["ID"]), row.get("Kernel Name", "?"), value * _UNIT_US[unit]))
    return sorted(out, key=lambda k: k.id)


def short_kernel_name(name: str) -> str:
    """`void at::native::vectorized_elementwise_kernel<4, ...>(int, T2, T3)` -> `vectorized_elementwise_kernel`."""
    depth, head = 0, []
    for ch in name:  # drop template arguments and parameter lists
        if ch in "<(":
            depth += 1
        elif ch in ">)":
            depth = max(depth - 1, 0)
        elif depth == 0:
            head.append(ch)
    words = "".join(head).split()
    return (words[-1] if words else name).split("::")[-1] or name


def ncu_per_call(kernels: Sequence[NcuKernel], calls: int) -> NcuReading | Reading:
    """Median over calls of the summed durations of each call's kernels (kernels come in call order)."""
    if not kernels:
        return failed("ncu profiled no kernel")
    if len(kernels) % calls:
        return failed(f"ncu profiled {len(kernels)} kernels over {calls} calls: not a whole number per call")
    k = len(kernels) // calls
    per_call = [sum(x.us for x in kernels[i * k:(i + 1) * k]) for i in range(calls)]
    names = tuple(short_kernel_name(x.name) for x in kernels[:k])
    return NcuReading(statistics.median(per_call), kernels_per_call=k, kernel_names=names)


MARKER = "spin_kernel"  # torch.cuda._sleep's kernel: launched first in each case's profiled range
CASE_FAILED = "opbench-accuracy: case failed:"  # the kernel process's line for a case it could not run
CASE_DONE = "opbench-accuracy: case done:"  # ... and for one whose calls all finished (its group counts)


def split_at_markers(kernels: Sequence[NcuKernel]) -> list[list[NcuKernel]]:
    """The kernels after each marker, up to the next: one group per case, in the cases' order."""
    groups: list[list[NcuKernel]] = []
    for k in kernels:
        if short_kernel_name(k.name) == MARKER:
            groups.append([])
        elif not groups:
            raise ValueError(f"kernel {k.name[:60]!r} before the first case's marker")
        else:
            groups[-1].append(k)
    return groups


def ncu_readings(cases: Sequence[Case], root: Path, calls: int, timeout_s: float = 300,
                 cache_control: str = "all") -> dict[str, Reading]:
    """ncu's per-call time of each case, all in one profiled process: each kernel replayed on its own and
    each call's kernels summed. (Range replay, the call's span, was tried on the H200 and read 155 us
    for an empty launch: no truth.)"""
    ncu = shutil.which("ncu") or next((str(c) for c in sorted(Path("/usr/local").glob("cuda*/bin/ncu"))), "ncu")
    cmd = [ncu, "--clock-control", "none", "--cache-control", cache_control, "--profile-from-start", "off",
           "--metrics", "gpu__time_duration.sum", "--csv", "--print-units", "base",
           sys.executable, str(Path(__file__).resolve()), "kernel", *(c.name for c in cases), "--calls", str(calls),
           "--root", str(root)]

    try:
        done = bounded(cmd, timeout_s)
    except FileNotFoundError:
        return {c.name: failed("ncu not found") for c in cases}
    except KeyboardInterrupt:
        raise Interrupted({}) from None
    end = f"ncu did not finish in {timeout_s:.0f} s" if done.timed_out else ""
    return ncu_results(cases, done.stdout, done.stderr, done.returncode, calls, end)


def ncu_results(cases: Sequence[Case], stdout: str, stderr: str, returncode: int, calls: int,
                end: str = "") -> dict[str, Reading]:
    """Each case's reading from the profiled process's output: its CSV split at the markers. A group counts
    only for a case the process said it finished (`CASE_DONE`): one that failed says why (`CASE_FAILED`),
    and one the process died or was stopped in, or never reached, says that (`end`, else the process's last
    error)."""
    try:
        groups = split_at_markers(parse_ncu_csv(stdout))
    except (ValueError, KeyError) as exc:
        return {c.name: failed(f"unreadable ncu CSV: {exc}") for c in cases}
    text = stdout + stderr
    broken = {m.group(1): m.group(2) for m in re.finditer(re.escape(CASE_FAILED) + r" (\S+) (.*)", text)}
    finished = set(re.findall(re.escape(CASE_DONE) + r" (\S+)", text))
    ended = end or f"ncu exit {returncode}: {reason(text)}"
    got: dict[str, Reading] = {}
    for i, case in enumerate(cases):
        if case.name in broken:
            got[case.name] = failed(broken[case.name])
        elif case.name not in finished:
            got[case.name] = failed(f"case not reached or not finished; {ended}")
        else:
            got[case.name] = guarded(lambda g=groups[i] if i < len(groups) else []: ncu_per_call(g, calls))
    return got


# -- the solution as a callable (kernel and peers subcommands; needs the device) ----------------------
def load_solution(case: Case, folder: Path) -> Callable[..., Any]:
    """The solution's entry point, loaded from the files `write_case` wrote, as opbench builds it."""
    path = folder / case.solution_file
    if case.language == "cuda_cpp":
        from torch.utils.cpp_extension import load
        from harness.spec.model import CPP_COMPILED
        cuda_flags = ["-O3", "--use_fast_math"] + list(case.build.get("extra_cuda_cflags", []))  # as opbench's build
        cflags = ["-O3"] + list(case.build.get("extra_cflags", []))
        files = [path] + [folder / f for f in case.sources if Path(f).suffix in CPP_COMPILED]
        key = hashlib.sha256(b"".join(f.read_bytes() for f in files) + " ".join(cuda_flags + cflags).encode()).hexdigest()[:12]
        build_dir = Path(tempfile.gettempdir()) / "opbench-accuracy-build" / key
        build_dir.mkdir(parents=True, exist_ok=True)
        module = load(name=f"opbench_accuracy_{key}", sources=[str(f) for f in files], extra_cflags=cflags,
                      extra_cuda_cflags=cuda_flags, extra_include_paths=[str(folder)], build_directory=str(build_dir),
                      verbose=False)
        return getattr(module, case.entry)
    spec = importlib.util.spec_from_file_location(f"opbench_accuracy_{case.name.replace('-', '_')}", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # as an import would (Triton reads the kernel's source through it)
    spec.loader.exec_module(module)
    return getattr(module, case.entry)


def make_inputs(case: Case, device: str, seed: int = 0) -> list[Any]:
    import torch
    gen = torch.Generator(device=device).manual_seed(seed)
    return [torch.randn(case.shape(t), dtype=getattr(torch, t.dtype), device=device, generator=gen)
            for t in case.inputs]


def case_callable(case: Case, folder: Path, device: str = "cuda") -> Callable[[], Any]:
    fn = load_solution(case, folder)
    args = make_inputs(case, device)
    return lambda: fn(*args)


def case_root(cases: Sequence[Case], given: Path | None) -> Path:
    """The folder holding each case's files in `<root>/<case>/` (written where missing)."""
    root = given or Path(tempfile.mkdtemp(prefix="opbench-accuracy-"))
    for case in cases:
        if not (root / case.name / "manifest.yaml").is_file():
            write_case(case, root / case.name)
    return root


def kernel_main(cases: Sequence[Case], root: Path, calls: int) -> None:
    """Under `ncu --profile-from-start off`, case after case: warm up (compile, autotune, cuBLAS
    heuristics) outside the profiled range, then inside it the marker and exactly `calls` calls. A case
    that cannot run says why on a line of its own and profiles its marker alone."""
    import torch

    def say_failed(case: Case, exc: Exception) -> None:
        print(f"{CASE_FAILED} {case.name} {type(exc).__name__}: {' '.join(str(exc).split())[:300]}", flush=True)

    for case in cases:
        fn: Callable[[], Any] | None = None
        try:
            fn = case_callable(case, root / case.name)
            for _ in range(3):
                fn()
            torch.cuda.synchronize()
        except Exception as exc:  # noqa: BLE001 - this case's cell, not the other cases'
            say_failed(case, exc)
            fn = None
        torch.cuda.profiler.start()
        try:
            torch.cuda._sleep(1)
            for _ in range(calls if fn is not None else 0):
                fn()
            torch.cuda.synchronize()
            if fn is not None:
                print(f"{CASE_DONE} {case.name}", flush=True)
        except Exception as exc:  # noqa: BLE001 - an error in the profiled calls is this case's (the next may
            # fail the same way if the context is broken; each says so)
            say_failed(case, exc)
        finally:
            torch.cuda.profiler.stop()
        del fn
        torch.cuda.empty_cache()


def harness_sequence(device: Any, fn: Callable[[], Any], evict: bool = True) -> Callable[[], None]:
    """One sample as the harness queues it on CUDA: its read flush (and the SMs' instruction-cache
    eviction), a hold, the call, a marker. `probe` and `kinds` trace the call's kernels in it."""
    import torch
    from harness.measure.devices.base import Device

    def step() -> None:
        Device.flush_cache(device)  # the read flush alone (CudaDevice's own adds the eviction)
        if evict:
            device.evict_code()
        torch.cuda._sleep(100_000)
        fn()
        torch.cuda._sleep(1)
    return step


def median_per_call(durations_us: Sequence[float], before: int, kernels: int) -> float:
    """Median over calls of the summed durations of each call's kernels, in a trace of steps that each ran
    `before` harness kernels (flush, eviction) ahead of the call's `kernels`."""
    group = before + kernels
    return statistics.median(sum(durations_us[i + before:i + group]) for i in range(0, len(durations_us), group))


def probe_main(case: Case, folder: Path, calls: int) -> None:
    """Where a small kernel's time goes: CUPTI kernel durations of the same calls queued back to back
    behind a hold (opbench's sequence: zeroing flush, the harness's read flush, and that plus its
    instruction-cache eviction), and launched alone after a sync and an idle millisecond (the
    way ncu serializes them), with and without an L2 flush; ncu's numbers for both cache settings."""
    import torch
    from torch.profiler import ProfilerActivity, profile
    fn = case_callable(case, folder)
    flush = torch.empty(2 * torch.cuda.get_device_properties(0).L2_cache_size // 4, device="cuda")
    for _ in range(5):
        fn()
    torch.cuda._sleep(1000)
    torch.cuda.synchronize()

    def durations(step: Callable[[], None], before: int = 1) -> tuple[float, float]:
        """Median per-call kernel time; each step runs `before` harness kernels (flush, eviction)
        ahead of the call's own."""
        t0 = time.perf_counter()
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            for _ in range(calls):
                step()
            torch.cuda.synchronize()
        t1 = time.perf_counter()
        evs = [e for e in prof.profiler.kineto_results.events() if e.device_type() == torch.autograd.DeviceType.CUDA]
        evs = sorted((e for e in evs if "spin_kernel" not in e.name()), key=lambda e: e.start_ns())
        return median_per_call([e.duration_ns() / 1e3 for e in evs], before, case.kernels), t1 - t0

    def queued_cold() -> None:
        flush.zero_()
        torch.cuda._sleep(100_000)
        fn()
        torch.cuda._sleep(1)

    from harness.measure.devices.cuda import CudaDevice
    device = CudaDevice(0)

    def isolated(cold: bool) -> Callable[[], None]:
        def step() -> None:
            flush.zero_() if cold else flush[:1].zero_()
            torch.cuda.synchronize()
            time.sleep(0.001)
            fn()
            torch.cuda.synchronize()
        return step

    evs = None
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize()
    for e in prof.profiler.kineto_results.events():
        if e.device_type() == torch.autograd.DeviceType.CUDA:
            evs = e
            break
    if evs is not None:
        print("kineto event:", {k: getattr(evs, k)() for k in ("name", "device_resource_id", "device_index", "start_ns",
                                                                "duration_ns", "correlation_id") if hasattr(evs, k)},
              [a for a in dir(evs) if not a.startswith("_")])
    out = {}
    for label, step, before in (("queued-cold", queued_cold, 1),
                                ("queued-read-flush", harness_sequence(device, fn, evict=False), 1),
                                ("queued-read-flush+code-eviction", harness_sequence(device, fn), 2),
                                ("isolated-cold", isolated(True), 1), ("isolated-warm", isolated(False), 1)):
        out[label], secs = durations(step, before)
        print(f"{case.name} {label}: {out[label]:.2f} us (profile session {secs * 1e3:.0f} ms for {calls} calls)")


def kinds_main(case: Case, folder: Path, calls: int, rounds: int = 3) -> dict[str, float]:
    """CUPTI's two kernel records of the same calls, in the harness's sequence (read flush, code
    eviction, a hold, the call): CONCURRENT_KERNEL (what the harness reads) against KERNEL, which
    serializes kernels and might time them as ncu does, launch included. This process only: the
    tracer module's kinds are patched here, never in a run. Rounds alternate, fresh tracer each."""
    import torch
    from harness.measure.devices import tracers
    from harness.measure.devices.cuda import CudaDevice
    fn = case_callable(case, folder)
    device = CudaDevice(0)
    device.setup()
    for _ in range(5):
        fn()
    device.flush_cache()  # its buffer and the eviction kernel made now, not inside the first trace
    torch.cuda.synchronize()
    lib, source = tracers.load_libcupti()
    step = harness_sequence(device, fn)
    concurrent = tracers.CONCURRENT_KERNEL

    def per_call(kernel_kind: int) -> float:
        saved = tracers.CONCURRENT_KERNEL, tracers.KINDS
        tracers.CONCURRENT_KERNEL = kernel_kind
        tracers.KINDS = (kernel_kind, *saved[1][1:])
        try:
            acts = tracers.CuptiTracer(lib, source).trace(lambda: [step() for _ in range(calls)], torch.cuda.synchronize)
        finally:
            tracers.CONCURRENT_KERNEL, tracers.KINDS = saved
        acts = [a for a in acts if "spin_kernel" not in a.name and not a.name.startswith("Mem")]
        group = 2 + case.kernels  # the read flush's reduction and the eviction kernel, then the call's own
        if len(acts) != group * calls:
            raise RuntimeError(f"{len(acts)} kernels for {calls} calls of {group}: {sorted({a.name[:40] for a in acts})}")
        return median_per_call([a.dur_us for a in acts], 2, case.kernels)

    out: dict[str, list[float]] = {"concurrent": [], "serialized": []}
    for _ in range(rounds):
        out["concurrent"].append(per_call(concurrent))
        out["serialized"].append(per_call(SERIALIZED_KERNEL))
    got = {k: statistics.median(v) for k, v in out.items()}
    print(f"{case.name}: CUPTI CONCURRENT_KERNEL {got['concurrent']:.2f} us {[round(x, 2) for x in out['concurrent']]}, "
          f"KERNEL (serialized) {got['serialized']:.2f} us {[round(x, 2) for x in out['serialized']]} ({source})", flush=True)
    return got


# -- the peers ----------------------------------------------------------------------------------------
def load_fib_timing() -> types.ModuleType:
    """FlashInfer-Bench's `bench/timing.py` as a module of its own. The package's __init__ imports
    flashinfer-python and more, so the package is found without importing it, and the one import
    timing.py makes from it (`flashinfer_bench.compile.Runnable`, a type hint) is a stub."""
    spec = importlib.util.find_spec("flashinfer_bench")  # a top-level name: found, not imported
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("flashinfer_bench is not on sys.path (pip install --no-deps --target DIR the wheel)")
    path = Path(list(spec.submodule_search_locations)[0]) / "bench" / "timing.py"
    if not path.is_file():
        raise ImportError(f"no {path}")
    stub = types.ModuleType("flashinfer_bench.compile")
    stub.Runnable = type("Runnable", (), {"__doc__": "stub: timing.py only uses it as a type hint"})  # type: ignore[attr-defined]
    saved = sys.modules.get("flashinfer_bench.compile")
    sys.modules["flashinfer_bench.compile"] = stub
    try:
        mspec = importlib.util.spec_from_file_location("flashinfer_bench_timing", path)
        assert mspec and mspec.loader
        module = importlib.util.module_from_spec(mspec)
        mspec.loader.exec_module(module)
    finally:
        if saved is None:
            sys.modules.pop("flashinfer_bench.compile", None)
        else:
            sys.modules["flashinfer_bench.compile"] = saved
    return module


def nvbench_cold_gpu_us(doc: dict[str, Any], name: str | None = None) -> Reading:
    """The cold GPU time of the first state of benchmark `name` (else the first benchmark) in an nvbench
    JSON file: median, else mean (seconds -> us)."""
    for b in doc.get("benchmarks", []):
        if name is not None and b.get("name") != name:
            continue
        for state in b.get("states", []):
            if state.get("is_skipped"):
                return failed(f"nvbench skipped the state: {state.get('skip_reason')}")
            summaries = {s.get("tag"): {d.get("name"): d.get("value") for d in s.get("data", [])}
                         for s in state.get("summaries") or []}
            n = (summaries.get("nv/cold/sample_size") or {}).get("value")
            for tag, label in (("nv/cold/time/gpu/median", "median"), ("nv/cold/time/gpu/mean", "mean")):
                value = (summaries.get(tag) or {}).get("value")
                if value is not None:
                    return Reading(float(value) * 1e6, "" if label == "median" else "mean (no median in the JSON)"
                                   ) if n is None else Reading(float(value) * 1e6, f"{label} of {int(n)} samples")
            return failed(f"no nv/cold/time/gpu summary (tags: {sorted(k for k in summaries if k)[:8]})")
    return failed("no benchmark state in the nvbench JSON" + (f" for {name}" if name else ""))


def _pin_cuda_major(bench: types.ModuleType) -> None:
    """cuda-bench picks its native extension (cu12/cu13) from `cuda.bindings`' version; without that
    package (torch does not need it), pick it from torch's CUDA version."""
    try:
        import cuda.bindings  # noqa: F401
    except ImportError:
        import torch
        major = int(str(torch.version.cuda).split(".")[0])
        bench._get_cuda_major_version = lambda: major  # type: ignore[attr-defined]


def cuda_bench_readings(fns: dict[str, Callable[[], Any]], json_path: Path, timeout_s: float = 3.0) -> dict[str, Reading]:
    """nvbench's cold measurement (L2 flushed each sample, a blocking kernel while launches queue) of each
    callable run on nvbench's stream, one benchmark per name, all in the one `run_all_benchmarks` a
    process gets."""
    import torch
    import cuda.bench as bench
    _pin_cuda_major(bench)

    def benchmark_of(fn: Callable[[], Any]) -> Callable[[Any], None]:
        def benchmark(state: Any) -> None:
            device = state.get_device()
            device = 0 if device is None else device

            def launcher(launch: Any) -> None:
                stream = torch.cuda.ExternalStream(launch.get_stream().addressof(), device=torch.device("cuda", device))
                with torch.cuda.stream(stream):
                    fn()

            state.exec(launcher, batched=False)
        return benchmark

    for name, fn in fns.items():
        bench.register(benchmark_of(fn)).set_name(name)
    bench.run_all_benchmarks([sys.argv[0], "--devices", str(torch.cuda.current_device()),
                              "--timeout", str(timeout_s), "--json", str(json_path)])
    doc = json.loads(json_path.read_text())
    return {name: guarded(lambda name=name: nvbench_cold_gpu_us(doc, name)) for name in fns}


def peers_main(cases: Sequence[Case], root: Path, json_out: Path) -> None:
    """Each peer on each case's callable, each in its own try: one failing peer or case leaves the
    others. cuda-bench runs last, every case at once. What is known is written after every step."""
    import torch
    found: dict[str, dict[str, dict[str, Any]]] = {c.name: {} for c in cases}
    fns: dict[str, Callable[[], Any]] = {}

    def record(name: str, key: str, r: Reading) -> None:
        from harness.results.report import atomic_write  # a killed process leaves the last whole file
        found[name][key] = asdict(r)
        atomic_write(json_out, json.dumps(found))

    def attempt(name: str, key: str, measure: Callable[[], Reading]) -> None:
        try:
            r = measure()
        except BaseException as exc:  # noqa: BLE001 - a peer's failure is a table cell, not a crash
            if isinstance(exc, KeyboardInterrupt):
                raise
            r = failed(f"{type(exc).__name__}: {exc}")
        torch.cuda.synchronize()
        record(name, key, r)

    for case in cases:
        try:
            fn = case_callable(case, root / case.name)
            fn()
            torch.cuda.synchronize()
        except Exception as exc:  # noqa: BLE001 - no callable: every peer says why
            for key in PEERS:
                record(case.name, key, failed(f"building the solution: {type(exc).__name__}: {exc}"))
            continue
        fns[case.name] = fn

        def do_bench(fn: Callable[[], Any] = fn) -> Reading:
            import triton.testing
            return Reading(float(triton.testing.do_bench(fn, return_mode="median")) * 1e3, "median")

        def fib(fn: Callable[[], Any] = fn) -> Reading:
            return Reading(float(load_fib_timing().do_bench(fn, return_mode="median")) * 1e3, "median")

        attempt(case.name, "do_bench", do_bench)
        attempt(case.name, "fib", fib)
    if fns:
        try:
            got = cuda_bench_readings(fns, json_out.with_suffix(".nvbench.json"))
        except BaseException as exc:  # noqa: BLE001
            if isinstance(exc, KeyboardInterrupt):
                raise
            got = {name: failed(f"{type(exc).__name__}: {exc}") for name in fns}
        for name, r in got.items():
            record(name, "cuda_bench", r)


def peers_readings(cases: Sequence[Case], root: Path, timeout_s: float = 400) -> dict[str, dict[str, Reading]]:
    """The `peers` process over every case; a cell it did not write says why (its exit, its timeout)."""
    json_out = root / "peers.json"
    cmd = [sys.executable, str(Path(__file__).resolve()), "peers", *(c.name for c in cases), "--json", str(json_out),
           "--root", str(root)]
    try:
        done = bounded(cmd, timeout_s)
    except KeyboardInterrupt:
        raise Interrupted(peers_json(cases, json_out, "peers process interrupted (SIGTERM or Ctrl-C)")) from None
    why = (f"peers process did not finish in {timeout_s:.0f} s" if done.timed_out else
           f"peers process exit {done.returncode}: {reason(done.stderr or done.stdout)}" if done.returncode else "")
    return peers_json(cases, json_out, why or "not measured")


def peers_json(cases: Sequence[Case], json_out: Path, why: str) -> dict[str, dict[str, Reading]]:
    """The cells the peers process wrote; `why` for the rest (and for all where the file cannot be read)."""
    try:
        got = json.loads(json_out.read_text()) if json_out.is_file() else {}
    except (OSError, ValueError) as exc:
        got, why = {}, f"{why}; peers.json unreadable: {exc}"
    return {c.name: {k: guarded(lambda c=c, k=k: Reading(**got[c.name][k])) if k in got.get(c.name, {})
                     else failed(why) for k in PEERS} for c in cases}


# -- the table ----------------------------------------------------------------------------------------
@dataclass
class Row:
    case: Case
    ncu: Reading | None = None
    opbench_default: Reading | None = None
    opbench_events: Reading | None = None
    peers: dict[str, Reading] = field(default_factory=dict)

    def readings(self) -> dict[str, Reading | None]:
        return {"ncu": self.ncu, "opbench_default": self.opbench_default, "opbench_events": self.opbench_events,
                **{k: self.peers.get(k) for k in PEERS}}


def error_pct(value: Reading | None, truth: Reading | None) -> float | None:
    if value is None or truth is None or value.us is None or truth.us is None:
        return None
    return (value.us / truth.us - 1.0) * 100.0


def cell(r: Reading | None, width: int = 48) -> str:
    if r is None:
        return "skipped"
    if r.us is None:
        return f"n/a ({r.note[:width].replace('|', '/')})"
    return f"{r.us:.2f}"


HEADERS = ["kernel", "ncu us", "opbench default us (mode)", "err", "opbench events us", "err",
           "do_bench us", "err", "FIB us", "err", "cuda-bench us", "err"]


def table_rows(rows: Sequence[Row]) -> list[list[str]]:
    out = []
    for row in rows:
        err = lambda r: "-" if error_pct(r, row.ncu) is None else f"{error_pct(r, row.ncu):+.1f}%"  # noqa: E731
        d = row.opbench_default
        default = cell(d) + (f" ({d.mode})" if isinstance(d, OpbenchReading) and d.mode else "")
        line = [row.case.name, cell(row.ncu), default, err(d), cell(row.opbench_events), err(row.opbench_events)]
        for key in PEERS:
            r = row.peers.get(key)
            line += [cell(r), err(r)]
        out.append(line)
    return out


def kernel_lines(rows: Sequence[Row]) -> list[str]:
    lines = []
    for row in rows:
        n = row.ncu
        if isinstance(n, NcuReading) and n.kernels_per_call:
            what = f"{n.kernels_per_call} kernel(s) per call (ncu: {', '.join(n.kernel_names)})"
            if n.kernels_per_call != row.case.kernels:
                what += f"; expected {row.case.kernels}"
        else:
            what = f"{row.case.kernels} kernel(s) per call expected (ncu did not count them)"
        lines.append(f"- {row.case.name}: {what}; {row.case.description}")
    return lines


def floor_lines(rows: Sequence[Row], below_us: float = 10.0) -> list[str]:
    """Each timer's floor (the FLOOR case) and, for kernels under `below_us`, the errors once each
    timer's floor is taken off both sides: how well the time a kernel adds above an empty launch agrees."""
    floor = next((r for r in rows if r.case.name == FLOOR), None)
    if floor is None or floor.ncu is None or floor.ncu.us is None:
        return []
    got = {k: r.us for k, r in floor.readings().items() if r is not None and r.us is not None}
    out = ["- floors (" + FLOOR + "): " + ", ".join(f"{k} {v:.2f} us" for k, v in got.items())]
    for row in rows:
        n = row.ncu
        if row is floor or n is None or n.us is None or n.us >= below_us or row.case.kernels != 1:
            continue
        above = n.us - got["ncu"]
        errs = [f"{k} {(r.us - got[k]) - above:+.2f} us ({((r.us - got[k]) / above - 1) * 100:+.1f}%)"
                for k, r in row.readings().items() if k != "ncu" and k in got and r is not None and r.us is not None]
        out.append(f"- {row.case.name}: ncu {above:.2f} us above its floor; each timer above its own: " + ", ".join(errs))
    return out


def note_lines(rows: Sequence[Row]) -> list[str]:
    """Every remark or failure reason in full (the table cuts them)."""
    out = []
    for row in rows:
        for key, r in row.readings().items():
            if r is not None and r.note and (r.us is None or key.startswith("opbench")):
                out.append(f"- {row.case.name} / {key}: {r.note}")
    return out


def results_json(rows: Sequence[Row], settings: dict[str, Any]) -> dict[str, Any]:
    cases = {}
    for row in rows:
        entry: dict[str, Any] = {"description": row.case.description, "language": row.case.language,
                                 "axes": row.case.axes, "expected_kernels_per_call": row.case.kernels}
        for key, r in row.readings().items():
            entry[key] = None if r is None else {**asdict(r), "error_pct_vs_ncu": error_pct(r, row.ncu)}
        cases[row.case.name] = entry
    return {"settings": settings, "cases": cases}


# -- the run ------------------------------------------------------------------------------------------
def progress(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


MIN_STAGE_S = 20.0  # a stage with less time than this left before the deadline is not started


def run_main(cases: Sequence[Case], skip: set[str], calls: int, max_time_s: float, out: Path | None,
             deadline_s: float | None = None, min_stage_s: float = MIN_STAGE_S) -> None:
    """Every case through each timer, one process per timer: the peers, `harness run` of a suite of all
    the cases (default timer, then `--timer events`), ncu. Each stage prints when it ends and the JSON is
    rewritten. `deadline_s` bounds each stage's process by the time left (a device call has a hard limit);
    a stage with less than `min_stage_s` left is not started. SIGTERM (`timeout`) or Ctrl-C ends the run
    with the table of what finished, the cut stage's finished cells included."""
    began = time.monotonic()
    bench = {**BENCH, "max_time_s": max_time_s}
    rows = {c.name: Row(c) for c in cases}
    names = list(rows)
    settings: dict[str, Any] = {"ncu_calls": calls, "bench": bench, "skip": sorted(skip), "python": sys.version.split()[0],
                                "stages_s": {}, "not_run": []}

    def left(default_s: float) -> float:
        return default_s if deadline_s is None else min(default_s, deadline_s - (time.monotonic() - began))

    def save() -> None:
        settings["wall_s"] = round(time.monotonic() - began, 1)
        if out:
            from harness.results.report import atomic_write
            out.mkdir(parents=True, exist_ok=True)
            atomic_write(out / "timing_accuracy.json", json.dumps(results_json(list(rows.values()), settings), indent=2))

    def into(attr: str) -> Callable[[dict[str, Any]], None]:
        def apply(got: dict[str, Any]) -> None:
            for name, r in got.items():
                setattr(rows[name], attr, r)
        return apply

    def stop(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, stop)
    try:
        with tempfile.TemporaryDirectory(prefix="opbench-accuracy-") as tmp:
            root = Path(tmp)
            suite = write_suite(cases, root, bench)
            # in this order: the peers' process also builds the solutions (Triton's cache, nvcc) that ncu's loads
            stages: list[tuple[str, Callable[[float], Any], Callable[[Any], None]]] = []
            if "peers" not in skip:
                stages.append(("peers", lambda t: peers_readings(cases, root, timeout_s=t), into("peers")))
            if "opbench" not in skip:
                stages += [(f"opbench {label}", lambda t, timer=timer: harness_run(suite, root / f"out-{timer or 'default'}",
                                                                                   timer, names, timeout_s=t), into(attr))
                           for label, timer, attr in (("default", None, "opbench_default"),
                                                      ("events", "events", "opbench_events"))]
            if "ncu" not in skip:
                stages.append(("ncu", lambda t: ncu_readings(cases, root, calls, timeout_s=t), into("ncu")))
            budgets = {"peers": 400.0, "ncu": 400.0}
            for i, (label, measure, apply) in enumerate(stages):
                budget = left(budgets.get(label, 600.0))
                if budget < min_stage_s:
                    settings["not_run"] = [lb for lb, _, _ in stages[i:]]
                    break
                t0 = time.monotonic()
                try:
                    apply(measure(budget))
                except KeyboardInterrupt as cut:
                    if isinstance(cut, Interrupted):
                        apply(cut.partial)
                    settings["not_run"] = [lb for lb, _, _ in stages[i:]]
                    break
                settings["stages_s"][label] = round(time.monotonic() - t0, 1)
                progress(f"[{label}] {time.monotonic() - t0:.0f} s ({time.monotonic() - began:.0f} s in all)")
                save()
    except KeyboardInterrupt:  # between stages (a save, a progress line, the temp folder's removal)
        settings["not_run"] = settings["not_run"] or ["(the rest)"]
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
    print_results(list(rows.values()))
    if settings["not_run"]:
        print(f"\nNot run or cut short (past the deadline, or interrupted): {', '.join(settings['not_run'])}")
    save()
    print(f"\nwall time {settings['wall_s']:.0f} s (stages: {settings['stages_s']})")
    if out:
        print(f"numbers: {out / 'timing_accuracy.json'}")


def print_results(rows: Sequence[Row]) -> None:
    """The table, the kernels per call, the floors and the notes."""
    from tabulate import tabulate
    print(f"\nPer-call time (us) and error against Nsight Compute (timer / ncu - 1), {len(rows)} kernels\n")
    print(tabulate(table_rows(rows), headers=HEADERS, tablefmt="github"))
    print("\nKernels per call:")
    print("\n".join(kernel_lines(rows)))
    floors = floor_lines(rows)
    if floors:
        print("\nFloors, and small kernels with each timer's floor taken off:")
        print("\n".join(floors))
    notes = note_lines(rows)
    if notes:
        print("\nNotes:")
        print("\n".join(notes))


READING_TYPES = {"ncu": NcuReading, "opbench_default": OpbenchReading, "opbench_events": OpbenchReading}


def rows_from_json(doc: dict[str, Any], cases: dict[str, Case]) -> list[Row]:
    """The rows a `run` wrote (`results_json`), read back: the cases by name, each reading as its type."""
    def reading(key: str, got: dict[str, Any] | None) -> Reading | None:
        if got is None:
            return None
        kind = READING_TYPES.get(key, Reading)
        names = {f.name for f in fields(kind)}
        kw = {k: tuple(v) if isinstance(v, list) else v for k, v in got.items() if k in names}
        return kind(**kw)

    rows = []
    for name, entry in doc["cases"].items():
        row = Row(cases[name], reading("ncu", entry.get("ncu")), reading("opbench_default", entry.get("opbench_default")),
                  reading("opbench_events", entry.get("opbench_events")))
        row.peers = {k: r for k in PEERS if (r := reading(k, entry.get(k))) is not None}
        rows.append(row)
    return rows


def table_main(paths: Sequence[Path], cases: dict[str, Case]) -> None:
    """One table from the JSON of several `run`s (parts of the case list, run back to back on one machine,
    where all of them do not fit one device call): a case in more than one file is taken from the last."""
    rows: dict[str, Row] = {}
    for path in paths:
        doc = json.loads(path.read_text())
        s = doc.get("settings", {})
        print(f"{path}: {len(doc['cases'])} cases, wall {s.get('wall_s')} s, bench {s.get('bench')}, "
              f"skipped {s.get('skip')}, not run {s.get('not_run')}")
        rows.update((row.case.name, row) for row in rows_from_json(doc, cases))
    order = list(cases)
    print_results(sorted(rows.values(), key=lambda row: order.index(row.case.name)))


def main(argv: Sequence[str] | None = None) -> None:
    cases = all_cases()
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="everything: one table")
    r.add_argument("--cases", nargs="+", default=list(cases), choices=list(cases), metavar="CASE",
                   help=f"a subset of: {', '.join(cases)}")
    r.add_argument("--skip", action="extend", nargs="+", default=[], choices=["ncu", "peers", "opbench"],
                   help="leave these timers out (quick runs)")
    r.add_argument("--calls", type=int, default=10, help="calls profiled by ncu per case")
    r.add_argument("--max-time-s", type=float, default=BENCH["max_time_s"], help="the manifests' bench max_time_s")
    r.add_argument("--out", type=Path, default=Path(os.environ["OUT"]) if os.environ.get("OUT") else None)
    r.add_argument("--deadline-s", type=float, default=None,
                   help="bound each stage's process by the time left before this many seconds; start none with "
                        f"less than {MIN_STAGE_S:g} s left")
    k = sub.add_parser("kernel", help="inner: each CASE's calls, after a marker kernel (run under ncu)")
    k.add_argument("cases", nargs="+", choices=list(cases))
    k.add_argument("--calls", type=int, default=10)
    k.add_argument("--root", type=Path)
    q = sub.add_parser("peers", help="inner: do_bench, FlashInfer-Bench and cuda-bench on each CASE")
    q.add_argument("cases", nargs="+", choices=list(cases))
    q.add_argument("--json", type=Path, required=True)
    q.add_argument("--root", type=Path)
    pr = sub.add_parser("probe", help="where a small kernel's time goes (CUPTI queued vs isolated, ncu all vs none)")
    pr.add_argument("cases", nargs="+", choices=list(cases))
    pr.add_argument("--calls", type=int, default=50)
    kd = sub.add_parser("kinds", help="CUPTI's CONCURRENT_KERNEL against its serialized KERNEL records, and ncu")
    kd.add_argument("cases", nargs="+", choices=list(cases))
    kd.add_argument("--calls", type=int, default=200)
    t = sub.add_parser("table", help="one table from the timing_accuracy.json of several runs (parts of the cases)")
    t.add_argument("json", nargs="+", type=Path)
    m = sub.add_parser("manifest", help="write CASE's manifest and files into DIR")
    m.add_argument("case", choices=list(cases))
    m.add_argument("dir", type=Path)
    args = p.parse_args(argv)
    if args.cmd == "run":
        run_main([cases[c] for c in args.cases], set(args.skip), args.calls, args.max_time_s, args.out, args.deadline_s)
    elif args.cmd == "kernel":
        chosen = [cases[c] for c in args.cases]
        kernel_main(chosen, case_root(chosen, args.root), args.calls)
    elif args.cmd == "probe":
        for name in args.cases:
            case = cases[name]
            root = case_root([case], None)
            probe_main(case, root / name, args.calls)
            for cc in ("all", "none"):
                print(f"{name} ncu --cache-control {cc}: {cell(ncu_readings([case], root, 10, cache_control=cc)[name])}")
    elif args.cmd == "kinds":
        for name in args.cases:
            case = cases[name]
            root = case_root([case], None)
            try:
                kinds_main(case, root / name, args.calls)
            except RuntimeError as exc:  # one case's trace that would not read: the others still run
                print(f"{name}: {exc}", flush=True)
            print(f"{name} ncu --cache-control all: {cell(ncu_readings([case], root, 10)[name])}", flush=True)
    elif args.cmd == "table":
        table_main(args.json, cases)
    elif args.cmd == "peers":
        chosen = [cases[c] for c in args.cases]
        peers_main(chosen, case_root(chosen, args.root), args.json)
    else:
        print(write_case(cases[args.case], args.dir))


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    main()
