"""The report: the one typed record of a run, and the only code that builds, reads and writes it.

Every run (one manifest, a suite, a shard, several devices, a bench module) produces a `Report`
of the same shape: the traces in suite order, what each single-problem part was (`parts`), the
suite plan when there is one (so `merge` can order traces and tell complete shards from partial
ones), failures of whole problems or devices, and a summary derived from all of that. Files are
written atomically (temp file in the same folder, fsync, rename), so a reader or a CI artifact
upload never sees half a report. No torch here: reports are merged, compared and rendered on
machines without it.
"""
from __future__ import annotations

import json
import os
import tempfile
from dataclasses import asdict, dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from harness.errors import InputError
from harness.results.trace import Status, Trace
from harness.spec.shard import LEGACY_SPLIT, SPLIT, Unit

FORMAT = "opbench-report/1"
Key = tuple[str, str, str]  # definition, workload, solution


class ReportError(InputError):
    """A file that is not a report this version reads, or reports that cannot be one run's results."""


def now() -> str:
    return datetime.now(timezone.utc).isoformat()


def atomic_write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


@dataclass(frozen=True)
class ProblemPlan:
    """One problem of a suite as the run saw it: after `--solution`/`--workload` filters."""

    definition: str
    manifest: str
    solutions: tuple[str, ...]
    workloads: tuple[str, ...]


@dataclass(frozen=True)
class SuitePlan:
    """What a complete run of the suite produces, in run order (problem, solution, workload)."""

    name: str
    path: str
    problems: tuple[ProblemPlan, ...]

    def units(self) -> list[Unit]:
        """The units shards and devices are dealt in, in suite order (as `shard.units_of` gives them)."""
        return [Unit(i, w) for i, p in enumerate(self.problems) for w in p.workloads]

    def keys(self, units: Iterable[Unit] | None = None) -> list[Key]:
        """Every trace a run of `units` (default: all) produces, in run order."""
        keep = set(self.units() if units is None else units)
        return [(p.definition, w, s) for i, p in enumerate(self.problems) for s in p.solutions for w in p.workloads
                if Unit(i, w) in keep]

    def signature(self) -> list[tuple[str, tuple[str, ...], tuple[str, ...]]]:
        """What must agree between reports of one suite; paths may differ between the machines of a matrix."""
        return [(p.definition, p.solutions, p.workloads) for p in self.problems]


@dataclass(frozen=True)
class Shards:
    count: int
    indices: tuple[int, ...]
    split: str = SPLIT  # how the suite's units were cut (`shard.split`): shares of two schemes do not add up

    @property
    def complete(self) -> bool:
        return len(self.indices) == self.count


@dataclass(frozen=True)
class Failure:
    """A whole problem or device that produced no results (broken reference, dead device child)."""

    where: str
    message: str
    definition: str | None = None
    device: str | None = None
    returncode: int | None = None
    units: int | None = None

    @property
    def headline(self) -> str:
        return self.message.splitlines()[0] if self.message else ""


@dataclass(frozen=True)
class Part:
    """What one single-problem run behind a report was: its device, seed, timing knobs, environment."""

    definition: str
    manifest: str
    device: str
    run_seed: int | None
    bench: dict[str, Any] | None
    environment: dict[str, Any]
    created: str
    traces: int
    lane: str | None = None


@dataclass(frozen=True)
class Summary:
    total: int
    by_status: dict[str, int]
    unexpected: tuple[str, ...]
    failures: int = 0
    missing: int = 0

    @property
    def ok(self) -> bool:
        """A run is ok when every result got its expected status and nothing is absent."""
        return not self.unexpected and not self.failures and not self.missing

    @classmethod
    def of(cls, traces: Sequence[Trace], failures: int = 0, missing: int = 0) -> "Summary":
        counts: dict[str, int] = {}
        for t in traces:
            counts[str(t.status)] = counts.get(str(t.status), 0) + 1
        # a row the run never got to is said once, in the interruption's failure, not once per row
        unexpected = tuple(f"{t.solution}/{t.workload}: {t.status} (expected {t.expected_status})"
                           for t in traces if not t.as_expected and t.status != Status.INTERRUPTED)
        return cls(len(traces), counts, unexpected, failures, missing)


def _common(values: Sequence[Any], mixed: Any) -> Any:
    return values[0] if values and all(v == values[0] for v in values) else mixed


@dataclass(frozen=True)
class Report:
    traces: tuple[Trace, ...]
    parts: tuple[Part, ...]
    created: str = field(default_factory=now)
    suite: SuitePlan | None = None
    shards: Shards | None = None
    failures: tuple[Failure, ...] = ()
    missing: int = 0  # results of the suite (this shard's share) that no part produced

    # -- what the report says about the whole run -------------------------------------------------
    @property
    def summary(self) -> Summary:
        return Summary.of(self.traces, len(self.failures), self.missing)

    @property
    def definition(self) -> str:
        names = list(dict.fromkeys(t.definition for t in self.traces)) or [p.definition for p in self.parts]
        if len(names) == 1:
            return names[0]
        return self.suite.name if self.suite else "+".join(names)

    @property
    def manifest(self) -> str | None:
        return self.suite.path if self.suite else _common([p.manifest for p in self.parts], None)

    @property
    def device(self) -> str:
        return _common([p.device for p in self.parts], "mixed")

    @property
    def run_seed(self) -> int | None:
        """The private seed of every part, or None when there is none (bench modules) or they differ."""
        return _common([p.run_seed for p in self.parts], None)

    @property
    def bench(self) -> dict[str, Any] | None:
        return _common([p.bench for p in self.parts], None)

    @property
    def environment(self) -> dict[str, Any]:
        return self.parts[0].environment if self.parts else {}

    @property
    def device_name(self) -> str:
        return str((self.environment.get("device") or {}).get("name", "?"))

    # -- building ---------------------------------------------------------------------------------
    @classmethod
    def of_problem(cls, *, definition: str, manifest: str, device: str, run_seed: int | None,
                   bench: Mapping[str, Any] | None, environment: Mapping[str, Any], traces: Sequence[Trace],
                   lane: str | None = None, failure: Failure | None = None) -> "Report":
        """The report of one problem's run: one part, its traces."""
        created = now()
        part = Part(definition, manifest, device, run_seed, dict(bench) if bench is not None else None,
                    dict(environment), created, len(traces), lane)
        return cls(tuple(traces), (part,), created, failures=(failure,) if failure else ())

    def with_lane(self, lane: str) -> "Report":
        return replace(self, parts=tuple(replace(p, lane=lane) for p in self.parts))

    # -- the file format --------------------------------------------------------------------------
    def to_json(self) -> dict[str, Any]:
        s = self.summary
        summary: dict[str, Any] = {"total": s.total, "by_status": s.by_status, "unexpected": list(s.unexpected),
                                   "ok": s.ok, "failures": s.failures}
        if s.missing:
            summary["missing"] = s.missing
        return {
            "format": FORMAT, "created": self.created, "manifest": self.manifest, "definition": self.definition,
            "device": self.device, "run_seed": self.run_seed, "bench": self.bench, "environment": self.environment,
            "summary": summary, "traces": [t.to_dict() for t in self.traces],
            "suite": asdict(self.suite) if self.suite else None,
            "shards": asdict(self.shards) if self.shards else None,
            "parts": [_part_json(p) for p in self.parts],
            "failures": [{k: v for k, v in asdict(f).items() if v is not None} for f in self.failures],
        }

    @classmethod
    def from_json(cls, data: Any, origin: str = "report") -> "Report":
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            found = data.get("format") if isinstance(data, dict) else type(data).__name__
            raise ReportError(f"{origin}: not an opbench report (format {found!r}, expected {FORMAT!r})")
        try:
            traces = tuple(Trace.from_dict(t) for t in data.get("traces", []))
            suite = data.get("suite")
            shards = data.get("shards")
            return cls(
                traces=traces,
                parts=tuple(_part_from(p) for p in data.get("parts") or [_legacy_part(data, len(traces))]),
                created=str(data.get("created", "")),
                suite=SuitePlan(suite["name"], suite["path"], tuple(
                    ProblemPlan(p["definition"], p["manifest"], tuple(p["solutions"]), tuple(p["workloads"]))
                    for p in suite["problems"])) if suite else None,
                shards=Shards(int(shards["count"]), tuple(int(i) for i in shards["indices"]),
                              str(shards.get("split", LEGACY_SPLIT))) if shards else None,
                failures=tuple(Failure(**f) for f in data.get("failures") or []),
                missing=int((data.get("summary") or {}).get("missing", 0)),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise ReportError(f"{origin}: malformed report ({type(exc).__name__}: {exc})") from None

    @classmethod
    def load(cls, path: Path) -> "Report":
        try:
            data = json.loads(Path(path).read_text())
        except OSError as exc:
            raise ReportError(f"cannot read report {path}: {exc.strerror or exc}") from None
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise ReportError(f"{path}: not JSON ({exc})") from None
        return cls.from_json(data, str(path))

    def write(self, out_dir: Path, stem: str) -> tuple[Path, Path]:
        """`<stem>.json` (the report) and `<stem>.jsonl` (one trace a line), each written atomically."""
        data = self.to_json()
        json_path, jsonl_path = out_dir / f"{stem}.json", out_dir / f"{stem}.jsonl"
        atomic_write(json_path, json.dumps(data, indent=2) + "\n")
        atomic_write(jsonl_path, "".join(json.dumps(t) + "\n" for t in data["traces"]))
        return json_path, jsonl_path


def _part_json(p: Part) -> dict[str, Any]:
    out = {"format": FORMAT, "created": p.created, "manifest": p.manifest, "definition": p.definition,
           "device": p.device, "run_seed": p.run_seed, "bench": p.bench, "environment": p.environment,
           "traces": p.traces}
    if p.lane is not None:
        out["lane"] = p.lane
    return out


def _part_from(p: Mapping[str, Any]) -> Part:
    return Part(str(p.get("definition")), str(p.get("manifest")), str(p.get("device")), p.get("run_seed"),
                p.get("bench"), dict(p.get("environment") or {}), str(p.get("created", "")), int(p.get("traces", 0)),
                p.get("lane"))


def _legacy_part(data: Mapping[str, Any], n: int) -> dict[str, Any]:
    """A report written before every report had parts: the top level is its only part."""
    return {**data, "traces": n}

