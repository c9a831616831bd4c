"""Turn a report back into the run that produced it: same manifest, image, device kind, seed and timing knobs."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from harness.launcher.errors import ENVIRONMENT, LaunchError
from harness.launcher.image import ImageRef, find
from harness.launcher.run import WORKSPACE
from harness.results.report import Report
from harness.spec.knobs import knob_argv


def _unique(values: list[str]) -> list[str]:
    return list(dict.fromkeys(v for v in values if v))


@dataclass(frozen=True)
class Recorded:
    """What a report says about how it was made; `notes` say what it does not pin (a seed, the knobs)."""

    manifest: str
    device: str
    run_seed: int | None
    image_tag: str | None
    image_digest: str | None
    run_args: tuple[str, ...]
    notes: tuple[str, ...] = ()

    @property
    def in_container(self) -> bool:
        return bool(self.image_tag)

    def host_manifest(self, workspace: Path) -> Path:
        """The manifest on this host: container paths map back under `workspace`."""
        path = PurePosixPath(self.manifest)
        if self.in_container:
            try:
                rel = path.relative_to(WORKSPACE)
            except ValueError:
                raise LaunchError(f"report's manifest {path} is not under {WORKSPACE}; not a launcher run") from None
            host = workspace / rel
        else:
            host = Path(self.manifest)
        if not host.is_file():
            raise LaunchError(f"manifest {host} (recorded as {self.manifest}) not found; "
                              "pass --workspace DIR, the folder that was mounted for the original run")
        return host


def _seed(report: Report) -> tuple[int | None, str | None]:
    """The run seed to pass again, or None and the line that says why there is none."""
    if report.run_seed is not None:
        return report.run_seed, None
    seeds = sorted({p.run_seed for p in report.parts if p.run_seed is not None})
    if len(seeds) > 1:
        return None, f"the report's parts ran with different seeds ({', '.join(map(str, seeds))}); re-running without --seed"
    return None, "the report recorded no run seed (bench-module runs draw none); re-running without --seed"


def _bench(report: Report) -> tuple[dict[str, Any], str | None]:
    """The recorded timing knobs, or nothing and the line that says the manifest's apply."""
    if report.bench is not None:
        return report.bench, None
    return {}, "the report recorded no single timing configuration (parts differ); the manifest's bench section applies"


def recorded(report: Report) -> Recorded:
    """The run behind `report`: its seed, every knob its `bench` recorded pinned by a flag
    (harness/spec/knobs.py), its solutions and workloads. ValueError when a recorded knob has no flag."""
    seed, seed_note = _seed(report)
    bench, bench_note = _bench(report)
    args = (["--seed", str(seed)] if seed is not None else []) + knob_argv(bench)
    for sol in _unique([t.solution for t in report.traces]):
        args += ["--solution", sol]
    for wl in _unique([t.workload for t in report.traces]):
        args += ["--workload", wl]
    env = report.environment
    return Recorded(manifest=report.manifest or "", device=report.device, run_seed=seed,
                    image_tag=env.get("opbench_image"), image_digest=env.get("opbench_image_digest"),
                    run_args=tuple(args), notes=tuple(n for n in (seed_note, bench_note) if n))


def resolve_image(client: Any, rec: Recorded, accept_rebuilt: bool = False) -> tuple[ImageRef, str]:
    """The exact image of the report (by digest), pulled if it was pushed; (ref for env, ref to start)."""
    assert rec.image_tag
    digest = rec.image_digest or ""
    if digest and (found := find(client, digest)):
        return ImageRef(rec.image_tag, found.id, digest), found.id
    pull_error = ""
    if "@" in digest:
        try:
            client.images.pull(digest)
        except Exception as exc:  # registry errors vary; the message below says what to do
            pull_error = f" (pull failed: {exc})"
        else:
            if pulled := find(client, digest):
                return ImageRef(rec.image_tag, pulled.id, digest), pulled.id
    same_tag = find(client, rec.image_tag)
    if same_tag and accept_rebuilt:
        return ImageRef(rec.image_tag, same_tag.id, same_tag.digest), same_tag.id
    hint = (f"an image tagged {rec.image_tag} exists (rebuilt from the same source, id {same_tag.id[:19]}); "
            "pass --accept-rebuilt to use it" if same_tag else
            f"rebuild it from the same source (`harness launch --device {rec.device} --build-only` gives tag "
            f"{rec.image_tag} when the source matches), then pass --accept-rebuilt")
    raise LaunchError(f"image {rec.image_tag} with digest {digest or '?'} is not in this engine{pull_error}; {hint}",
                      ENVIRONMENT)
