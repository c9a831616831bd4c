"""A bench-module manifest (a YAML/JSON file with a top-level `bench_module:`): which operator and
bench module to time, in which bench mode, on which devices, with which timing knobs."""
from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from harness.spec.knobs import apply_overrides, knob_overrides
from harness.spec.files import read_structured
from harness.spec.manifest import has_top_level_key
from harness.spec.model import BenchConfig
from harness.spec.schema import FieldError, Locator, ManifestError, display, validate

# The bench modes (measure/profilers/modes.py runs them; the schema, the CLI and run-bench name them from here)
# and the ones that attribute time to named kernels.
MODES = ("events", "torch-profiler", "torch-npu-profiler", "msprof", "perf-counter")
PROFILER_MODES = ("torch-profiler", "torch-npu-profiler", "msprof")


@dataclass(frozen=True)
class BenchModuleSpec:
    path: Path
    name: str | None
    operator: Path
    bench: Path | None
    mode: str
    devices: tuple[str, ...]
    config: BenchConfig
    total_op: bool = False  # profiler modes time all device work of a call, no kernel named (run-bench -m total-op)


def is_bench_module_manifest(path: Path) -> bool:
    return has_top_level_key(path, "bench_module")


def load_bench_manifest(path: Path) -> BenchModuleSpec:
    path = Path(path)
    where = display(path)
    doc = read_structured(path)
    errors = validate(doc, "benchmodule", Locator(where))
    if errors:
        raise ManifestError(errors, "bench-module manifest")
    bm, base = doc["bench_module"], path.resolve().parent
    operator = (base / bm["operator"]).resolve()
    bench = (base / bm["bench"]).resolve() if "bench" in bm else None
    missing = [FieldError(where, ("bench_module", key), f"file {f} does not exist")
               for key, f in (("operator", operator), ("bench", bench)) if f is not None and not f.is_file()]
    if missing:
        raise ManifestError(missing, "bench-module manifest")
    return BenchModuleSpec(path, bm.get("name"), operator, bench, bm.get("mode", "events"),
                           tuple(bm.get("devices", ("cpu", "cuda", "npu"))), BenchConfig(**doc.get("bench", {})))


def with_overrides(spec: BenchModuleSpec, overrides: dict[str, Any]) -> BenchModuleSpec:
    mode = overrides.get("mode") or spec.mode
    return replace(spec, mode=mode, config=apply_overrides(spec.config, knob_overrides(overrides)))
