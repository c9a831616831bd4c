"""`harness run` for a bench-module manifest (a YAML with a top-level `bench_module:` key).

Runs in this process: the device is set up first (which imports torch_npu before any user module),
then the bench module is validated and each case is timed in the chosen mode. A case that fails,
or whose time cannot be attributed to the named kernels, gets an error status and no time.
The report has the same format as `harness run`'s, so `harness merge` and the table work unchanged.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
from dataclasses import asdict, dataclass, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable

import yaml

from harness.spec.knobs import apply_overrides, knob_overrides
from harness.spec.model import BenchConfig
from harness.spec.schema import FieldError, Locator, ManifestError, validate
from harness.results.trace import Status, Trace

CHECK_NOTE = "timing only (bench module: no correctness check)"


@dataclass(frozen=True)
class BenchModuleSpec:
    path: Path
    name: str | None
    operator: Path
    bench: Path | None
    mode: str
    devices: tuple[str, ...]
    config: BenchConfig


def is_bench_module_manifest(path: Path) -> bool:
    """Cheap sniff: a YAML/JSON mapping whose top level has `bench_module`."""
    path = Path(path)
    if not path.is_file() or path.suffix not in (".yaml", ".yml", ".json"):
        return False
    try:
        doc = yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError):
        return False
    return isinstance(doc, dict) and "bench_module" in doc


def load_bench_manifest(path: Path) -> BenchModuleSpec:
    from harness.spec.manifest import display, read_structured
    path = Path(path)
    where = display(path)
    doc = read_structured(path)
    errors = validate(doc, "benchmodule", Locator(where))
    if errors:
        raise ManifestError(errors)
    bm, base = doc["bench_module"], path.resolve().parent
    operator = (base / bm["operator"]).resolve()
    bench = (base / bm["bench"]).resolve() if "bench" in bm else None
    missing = [FieldError(where, ("bench_module", key), f"file {f} does not exist")
               for key, f in (("operator", operator), ("bench", bench)) if f is not None and not f.is_file()]
    if missing:
        raise ManifestError(missing)
    return BenchModuleSpec(path, bm.get("name"), operator, bench, bm.get("mode", "events"),
                           tuple(bm.get("devices", ("cpu", "cuda", "npu"))), BenchConfig(**doc.get("bench", {})))


def with_overrides(spec: BenchModuleSpec, overrides: dict[str, Any]) -> BenchModuleSpec:
    mode = overrides.get("mode") or spec.mode
    return replace(spec, mode=mode, config=apply_overrides(spec.config, knob_overrides(overrides)))


def _trace(spec_name: str, case_id: str, header: Any, device: str, status: Status, **kw: Any) -> Trace:
    """A report row for one case: the api is the 'solution', its api-kind the 'language'."""
    return Trace(definition=spec_name, workload=case_id, solution=header.api_name, language=header.api_kind,
                 device=device, status=status, correctness={"checked": False, "note": CHECK_NOTE}, **kw)


def run_cases(spec: BenchModuleSpec, device: Any, workdir: Path, case_ids: list[str] | None,
              say: Callable[[str], None], shard: Any = None) -> tuple[list[Trace], dict[str, Any]]:
    """Time every case (or shard i/n's: cases dealt round-robin, as suites are); returns traces and
    the device info. Raises BenchModuleError on a bad module."""
    from harness.benchmod.module import load_bench
    from harness.measure.profilers.attribution import AttributionError
    from harness.measure.profilers.modes import CaseRun, ModeError, run_mode

    loaded = load_bench(spec.operator, spec.bench, device)
    name = spec.name or loaded.header.api_name
    traces = []
    cases = loaded.cases()
    if shard is not None:
        cases = cases[shard.index - 1::shard.count]
    for case in cases:
        if case_ids and case.id not in case_ids:
            continue
        axes = {k: v for k, v in case.params.items() if isinstance(v, int) and not isinstance(v, bool)
                and k not in ("warmup", "repeats", "seed")}
        child = ("--manifest", str(spec.path.resolve()), "--case", case.id, "--device", device.kind,
                 "--device-index", str(device.index), "--cache", spec.config.cache)
        say(f"{name} / {case.id}: {spec.mode}")
        try:
            fn = loaded.case_fn(case)
            res = run_mode(spec.mode, device, CaseRun(fn, loaded.header.kernels, case.warmup, case.repeats, child),
                           spec.config, workdir)
        except (AttributionError, ModeError) as exc:
            traces.append(_trace(name, case.id, loaded.header, device.kind, Status.RUNTIME_ERROR, axes=axes,
                                 message=f"{spec.mode}: {exc}", flags=[f"mode {spec.mode}"]))
            continue
        except Exception as exc:  # the case itself failed: a status, not a crash of the run
            status = Status.OUT_OF_MEMORY if device.memory_error(exc) else Status.RUNTIME_ERROR
            traces.append(_trace(name, case.id, loaded.header, device.kind, status, axes=axes,
                                 message=f"{type(exc).__name__}: {exc}", flags=[f"mode {spec.mode}"]))
            continue
        traces.append(_trace(name, case.id, loaded.header, device.kind, Status.PASSED, axes=axes, timing=res.stats,
                             flags=[f"mode {res.mode}", f"kernels: {res.attributed}", "not checked"],
                             throughput={}))
        traces[-1].correctness["attribution"] = res.details
    return traces, device.info()


def build_bench_report(spec: BenchModuleSpec, device_kind: str, traces: list[Trace], env: dict[str, Any]) -> dict[str, Any]:
    from harness.results.report import FORMAT, summary
    name = traces[0].definition if traces else (spec.name or spec.operator.stem)
    return {"format": FORMAT, "created": datetime.now(timezone.utc).isoformat(), "manifest": str(spec.path),
            "definition": name, "device": device_kind, "run_seed": None,
            "bench": {**asdict(spec.config), "mode": spec.mode, "bench_module": str(spec.bench or "")},
            "environment": env, "summary": summary(traces), "traces": [t.to_dict() for t in traces]}


def cmd_run_bench_module(args: argparse.Namespace, path: Path, say: Callable[[str], None]) -> int:
    """Exit codes as `harness run`: 0 all cases timed, 1 some failed, 2 bad manifest/module/device."""
    from harness.benchmod.module import BenchModuleError
    from harness.measure.devices import device_class, detect_kind, make_device
    from harness.measure.environment import environment
    from harness.measure.profilers.modes import ModeError, check_mode
    from harness.results.report import render_table, write_reports

    try:
        spec = with_overrides(load_bench_manifest(path), vars(args))
    except ManifestError as exc:
        print(f"invalid bench-module manifest: {len(exc.errors)} problem(s)", file=sys.stderr)
        for err in exc.errors:
            print(f"  {err}", file=sys.stderr)
        return 2
    if getattr(args, "devices", None):
        print("error: --devices is not supported for bench-module manifests (use --device-index)", file=sys.stderr)
        return 2
    shard = None
    if getattr(args, "shard", None):
        from harness.spec.shard import Shard
        try:
            shard = Shard.parse(args.shard)
        except ValueError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
    kind = detect_kind() if args.device == "auto" else args.device
    ok, why = device_class(kind).available()
    if not ok:
        print(f"error: device {kind} is not usable here: {why}", file=sys.stderr)
        return 2
    if kind not in spec.devices:
        traces = [Trace(spec.name or spec.operator.stem, "*", {}, spec.name or spec.operator.stem, "bench-module", kind,
                        Status.SKIPPED, message=f"bench module runs on {', '.join(spec.devices)}, not {kind}")]
        env = environment({"kind": kind})
    else:
        try:
            check_mode(spec.mode, kind)
        except ModeError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        device = make_device(kind, args.device_index)
        device.setup()
        args.out.mkdir(parents=True, exist_ok=True)
        workdir = Path(tempfile.mkdtemp(prefix="profiles-", dir=args.out))  # profiler output, kept for the artifact
        try:
            traces, info = run_cases(spec, device, workdir, args.workload, say, shard)
        except BenchModuleError as exc:
            print(f"invalid bench module {exc.origin}: {len(exc.problems)} problem(s)", file=sys.stderr)
            for p in exc.problems:
                print(f"  {p}", file=sys.stderr)
            return 2
        env = environment(info)
    report = build_bench_report(spec, kind, traces, env)
    stem = f"{report['definition']}-{kind}-{spec.mode}" + (f"-{shard.slug}" if shard else "")
    json_path, jsonl_path = write_reports(report, args.out, stem)
    print(render_table(traces, args.table_format))
    print(f"device: {kind} ({env.get('device', {}).get('name', '?')}); mode: {spec.mode}; cache: {spec.config.cache}")
    print(f"report: {json_path}\ntraces: {jsonl_path}")
    for line in report["summary"]["unexpected"]:
        print(f"UNEXPECTED {line}", file=sys.stderr)
    return 0 if report["summary"]["ok"] else 1
