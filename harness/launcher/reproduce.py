"""Turn a report back into the run that produced it: same manifest, image, device kind, seed and timing knobs."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from harness.launcher.errors import ENVIRONMENT, LaunchError
from harness.launcher.image import ImageRef, find
from harness.launcher.run import WORKSPACE

# report["bench"] key -> `harness run` flag; booleans only have the flag that turns them away from the default
VALUE_FLAGS = {"graph_batch": "--graph-batch", "warmup_ms": "--warmup-ms", "warmup_count": "--warmup-count",
               "min_samples": "--min-samples", "max_samples": "--max-samples", "min_time_ms": "--min-time-ms",
               "max_time_s": "--max-time-s", "rse_threshold": "--rse-threshold", "correctness_rounds": "--rounds",
               "compile_timeout_s": "--compile-timeout-s", "run_timeout_s": "--run-timeout-s"}


def bench_flags(bench: dict[str, Any]) -> list[str]:
    """Command-line overrides that pin every timing knob to the value the report recorded."""
    flags: list[str] = []
    for key, flag in VALUE_FLAGS.items():
        if bench.get(key) is not None:
            flags += [flag, repr(bench[key]) if isinstance(bench[key], float) else str(bench[key])]
    if bench.get("cache") in ("warm", "cold"):
        flags.append(f"--{bench['cache']}-cache")
    if bench.get("cuda_graph"):
        flags.append("--cuda-graph")
    if bench.get("fresh_inputs") is False:
        flags.append("--no-fresh-inputs")
    return flags


def _unique(values: list[str]) -> list[str]:
    return list(dict.fromkeys(v for v in values if v))


@dataclass(frozen=True)
class Recorded:
    """What a report says about how it was made."""

    manifest: str
    device: str
    run_seed: int
    image_tag: str | None
    image_digest: str | None
    run_args: tuple[str, ...]

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


def recorded(report: dict[str, Any]) -> Recorded:
    env = report.get("environment", {})
    traces = report.get("traces", [])
    args = ["--seed", str(report["run_seed"]), *bench_flags(report.get("bench", {}))]
    for sol in _unique([t.get("solution", "") for t in traces]):
        args += ["--solution", sol]
    for wl in _unique([t.get("workload", "") for t in traces]):
        args += ["--workload", wl]
    return Recorded(manifest=report["manifest"], device=report["device"], run_seed=int(report["run_seed"]),
                    image_tag=env.get("opbench_image"), image_digest=env.get("opbench_image_digest"),
                    run_args=tuple(args))


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
