"""The cases of a bench module, timed in a bench mode (`harness run` on a bench-module manifest).

The module is user code, so it runs where solutions run: in a worker (`isolation.Worker`), on files
staged into its sandbox, with the same deadlines, crash statuses and containment. The worker sets
up the device (which imports torch_npu before any user module), loads the module, and times one
case per command; a case that fails, hangs, crashes the worker or whose time cannot be attributed
to the named kernels gets that status and no time, and the next case gets a fresh worker if needed.
The parent summarizes the raw samples itself. A module that breaks the contract is an input error
(exit 2). The report has the same format as `harness run`'s, so merge and the table work unchanged.
"""
from __future__ import annotations

import shutil
import tempfile
from dataclasses import asdict
from pathlib import Path
from typing import Callable, Sequence

from harness.execute.benchmodule import BenchModuleError, default_bench_file, parse_header
from harness.spec.benchlint import kernel_sources, operator_kernels
from harness.execute import sandbox
from harness.execute.isolation import Worker, WorkerError
from harness.execute.protocol import BenchLoad, BenchLoaded, BenchTime
from harness.measure.environment import environment
from harness.measure.profilers.modes import check_mode
from harness.results.report import Report
from harness.results.stats import summarize
from harness.results.interrupt import stopped
from harness.results.trace import Status, Trace
from harness.spec.benchmodule import BenchModuleSpec
from harness.spec.shard import Shard, split

CHECK_NOTE = "timing only (bench module: no correctness check)"


def _trace(spec_name: str, case_id: str, loaded: BenchLoaded, device: str, status: Status, **kw: object) -> Trace:
    """A report row for one case: the api is the 'solution', its api-kind the 'language'."""
    return Trace(definition=spec_name, workload=case_id, solution=loaded.api_name, language=loaded.api_kind,
                 device=device, status=status, correctness={"checked": False, "note": CHECK_NOTE}, **kw)  # type: ignore[arg-type]


def run_cases(spec: BenchModuleSpec, kind: str, device_index: int, out: Path, case_ids: list[str] | None,
              say: Callable[[str], None], traces: list[Trace], shard: Shard | None = None,
              stop_on_error: bool = False) -> dict[str, object]:
    """Time every case (or shard i/n's: the cases cut as a suite's units are, `shard.split`) in a worker, appending
    each case's trace to `traces` as it finishes (an interruption keeps them); returns the device
    info. With `stop_on_error` the cases after a failed one are SKIPPED rows saying so (run-bench
    without --skip-error). Raises BenchModuleError on a module that breaks the contract."""
    bench_path = spec.bench or default_bench_file(spec.operator)
    bench = bench_path if bench_path.is_file() else None
    files = [spec.operator, *([bench] if bench else [])]
    name = spec.name or spec.operator.stem
    cfg = spec.config
    load = BenchLoad(spec.operator, bench, kind, device_index)
    # the kernels to count, decided here from the files (no import): the header's, and the operator's own
    header = parse_header(bench_path.read_text(), str(bench_path)).kernels if bench else ()
    sources = kernel_sources(header, operator_kernels(spec.operator.read_text()))
    worker = Worker(f"bench-{sandbox.safe_name(name)}", out / "logs", key=sandbox.files_key(name, files))
    profiles = Path(tempfile.mkdtemp(prefix="profiles-", dir=out))  # profiler output, kept for the artifact

    def loaded() -> BenchLoaded:
        try:
            reply = worker.call(load, timeout=cfg.compile_timeout_s)
        except WorkerError as exc:
            if exc.status == Status.COMPILE_ERROR.value:
                raise BenchModuleError(str(bench_path), exc.message.splitlines()) from None
            raise
        assert isinstance(reply, BenchLoaded)
        return reply

    try:
        try:
            info = loaded()
        except WorkerError as exc:  # the module hung, crashed or raised while loading: one row says so
            traces.append(Trace(name, "*", {}, name, "bench-module", kind, Status(exc.status), message=exc.message))
            return {"kind": kind}
        name = spec.name or info.api_name
        cases = split(info.cases, shard.count)[shard.index - 1] if shard is not None else info.cases
        failed: str | None = None
        for case in cases:
            if case_ids and case.id not in case_ids:
                continue
            if failed is not None:
                traces.append(_trace(name, case.id, info, kind, Status.SKIPPED, axes=case.axes,
                                     message=f"not run: case {failed!r} failed before it (--skip-error runs the rest)"))
                continue
            say(f"{name} / {case.id}: {spec.mode}")
            flags = [f"mode {spec.mode}"]
            workdir: Path | None = None
            try:
                if not worker.alive:  # the last case took its worker down: a fresh one for this case
                    info = loaded()
                assert worker.scratch is not None  # a live worker has its sandbox
                workdir = worker.scratch / "profiles" / case.id
                res = worker.call(BenchTime(case.id, spec.mode, cfg, workdir, tuple(sources), header, spec.total_op),
                                  timeout=2 * cfg.run_timeout_s + cfg.max_time_s)
            except WorkerError as exc:
                traces.append(_trace(name, case.id, info, kind, Status(exc.status), axes=case.axes, message=exc.message,
                                     flags=flags))
                failed = case.id if stop_on_error else None
                continue
            finally:  # profiler output is kept for the artifact (gone with the sandbox if the worker died)
                if workdir is not None and workdir.is_dir():
                    shutil.copytree(workdir, profiles / case.id, symlinks=True, dirs_exist_ok=True)
            stats = summarize(res.samples, res.rule_met, res.stop_reason, res.wall_s, res.mode, cfg.cache)
            traces.append(_trace(name, case.id, info, kind, Status.PASSED, axes=case.axes, timing=stats,
                                 flags=[f"mode {res.mode}", f"kernels: {res.attributed}", "not checked"], throughput={}))
            traces[-1].correctness["attribution"] = {**res.details, "kernel_source": sources}
        return info.device
    finally:
        worker.close()


def run_bench_module(spec: BenchModuleSpec, kind: str, device_index: int, out: Path, case_ids: Sequence[str],
                     shard: Shard | None, say: Callable[[str], None], stop_on_error: bool = False) -> Report:
    """Every case of the module (or shard i/n's) timed on `kind`; a module not meant for `kind` is
    one SKIPPED row. Raises BenchModuleError on a bad module, ModeError when the mode cannot run here."""
    name = spec.name or spec.operator.stem
    bench = {**asdict(spec.config), "mode": spec.mode, "bench_module": str(spec.bench or "")}
    if kind not in spec.devices:
        traces = [Trace(name, "*", {}, name, "bench-module", kind, Status.SKIPPED,
                        message=f"bench module runs on {', '.join(spec.devices)}, not {kind}")]
        return Report.of_problem(definition=name, manifest=str(spec.path), device=kind, run_seed=None, bench=bench,
                                 environment=environment({"kind": kind}), traces=traces)
    check_mode(spec.mode, kind)
    out.mkdir(parents=True, exist_ok=True)
    traces: list[Trace] = []

    def report(info: dict[str, object]) -> Report:
        return Report.of_problem(definition=traces[0].definition if traces else name, manifest=str(spec.path),
                                 device=kind, run_seed=None, bench=bench, environment=environment(info), traces=traces)
    try:
        info = run_cases(spec, kind, device_index, out, list(case_ids) or None, say, traces, shard, stop_on_error)
    except KeyboardInterrupt as exc:  # the cases that finished are kept (results/interrupt)
        raise stopped(exc, [report({"kind": kind})]) from None
    return report(info)
