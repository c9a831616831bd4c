"""`harness launch` and `harness reproduce`: argument parsing and the choice between container and local runs.

A local run (no engine, no device, or a report from a local run) is the same `harness run` command
line, run in this process by `run_local` (the CLI's `main`, passed in so this module need not import it)."""
from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path
from typing import Any, Callable

from harness.launcher import devices
from harness.launcher import engine
from harness.launcher import image
from harness.launcher.errors import LaunchError
from harness.launcher.reproduce import recorded, resolve_image
from harness.launcher.run import ContainerRun, container_path, run_container
from harness.paths import MANIFESTS_DIR
from harness.results.report import Report
from harness.spec.manifest import resolve_manifest_path

RunLocal = Callable[[list[str]], int]  # `main` itself: a local run is the same command line without a container


def _say(quiet: bool = False) -> Callable[[str], None]:
    def say(line: str) -> None:
        if not quiet:
            print(line, file=sys.stderr, flush=True)
    return say


def add_launch_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("manifest", nargs="?", help="manifest to run (not needed with --build-only/--push)")
    p.add_argument("--device", default="auto", choices=["auto", *devices.KINDS],
                   help="cuda/npu: container with the accelerator; cpu: container without one; local: no container; "
                        "auto: the accelerator this host shows when an engine is up, else local")
    p.add_argument("--out", type=Path, default=Path("out"), help="host folder the reports land in")
    p.add_argument("--workspace", type=Path, default=Path.cwd(), help="host tree mounted read-only (default: cwd)")
    p.add_argument("--visible-devices", help="accelerator ids to pass in, e.g. 0,1 (default: all)")
    p.add_argument("--build-arg", action="append", default=[], metavar="KEY=VALUE", help="image build argument")
    p.add_argument("--rebuild", action="store_true", help="build even if the content tag exists")
    p.add_argument("--build-only", action="store_true", help="build (or find) the image, print its tag, stop")
    p.add_argument("--push", metavar="REGISTRY", help="push the image to REGISTRY (e.g. ghcr.io/org) and stop")
    p.add_argument("--seed", type=int, help="private run seed (passed to `harness run`)")
    p.add_argument("--args", dest="run_args", default="", metavar="'RUN OPTIONS'",
                   help="more `harness run` options as one string, e.g. --args='--warm-cache --workload small-bf16'")
    p.add_argument("--dry-run", action="store_true", help="print the docker command instead of running it")
    p.add_argument("--quiet", action="store_true", help="no build log or launcher notes")


def add_reproduce_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("report", type=Path, help="a JSON report written by `harness run` or `harness launch`")
    p.add_argument("--out", type=Path, default=Path("out/reproduce"))
    p.add_argument("--workspace", type=Path, default=Path.cwd(), help="host tree that was mounted (default: cwd)")
    p.add_argument("--visible-devices")
    p.add_argument("--accept-rebuilt", action="store_true",
                   help="use a local image with the report's tag even if its digest differs")
    p.add_argument("--dry-run", action="store_true")


def _build_args(pairs: list[str]) -> dict[str, str]:
    out = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise LaunchError(f"--build-arg wants KEY=VALUE, got {pair!r}")
        out[key] = value
    return out


def _auto_kind(say: Callable[[str], None]) -> tuple[str, Any]:
    """(kind, docker client or None): the host's accelerator in its container, else local, said in one line."""
    client, why = engine.probe()
    if client is None:
        say(f"opbench: running locally (no container): {why}")
        return "local", None
    kind = devices.detect()
    if kind is None:
        say("opbench: running locally (no container): Docker engine found but no GPU/NPU device visible")
        return "local", None
    say(f"opbench: {kind} device found; running in the {kind} container")
    return kind, client


def _manifest_path(name: str) -> Path:
    path = resolve_manifest_path(name, MANIFESTS_DIR)
    if not path.is_file():
        raise LaunchError(f"manifest {name} not found (looked in . and {MANIFESTS_DIR})")
    return path


def _launch(args: argparse.Namespace, run_local: RunLocal) -> int:
    say = _say(args.quiet)
    run_args = shlex.split(args.run_args) + (["--seed", str(args.seed)] if args.seed is not None else [])
    image_only = args.build_only or bool(args.push)
    if not image_only and not args.manifest:
        raise LaunchError("a manifest is required (or --build-only / --push)")
    kind, client = _auto_kind(say) if args.device == "auto" else (args.device, None)
    if kind == "local":
        if image_only:
            raise LaunchError("--build-only/--push need a container device: --device cuda, npu or cpu")
        return run_local(["run", args.manifest, "--out", str(args.out), *run_args])
    recipe = image.ImageRecipe(kind, _build_args(args.build_arg))
    if image_only:
        return _image_only(client, recipe, args, say)
    # everything that can be wrong with the request is checked before a (possibly long) build
    spec = devices.device_spec(kind, args.visible_devices)
    manifest = _manifest_path(args.manifest)
    container_path(args.workspace, manifest)
    if args.dry_run:
        planned = image.ImageRef(recipe.tag, "<image id>", "<image digest>")
        print(ContainerRun(planned, spec, args.workspace, manifest, args.out, tuple(run_args)).shell())
        return 0
    client = client or engine.connect()
    plan = ContainerRun(image.ensure(client, recipe, args.rebuild, say), spec, args.workspace, manifest, args.out,
                        tuple(run_args))
    say(f"opbench: {plan.image.tag} ({plan.image.digest[:19]}): {' '.join(plan.command())}")
    return run_container(client, plan)


def _image_only(client: Any, recipe: image.ImageRecipe, args: argparse.Namespace, say: Callable[[str], None]) -> int:
    """`make image` / `make push`: print the tag (and the registry digest after a push)."""
    if args.dry_run:
        print(recipe.tag)
        return 0
    client = client or engine.connect()
    ref = image.ensure(client, recipe, args.rebuild, say)
    if args.push:
        ref = image.push(client, ref, args.push, say)
        print(f"{ref.tag} {ref.digest}")
    else:
        print(ref.tag)
    return 0


def _reproduce(args: argparse.Namespace, run_local: RunLocal) -> int:
    try:
        rec = recorded(Report.load(args.report))
    except ValueError as exc:  # a recorded knob no flag can express
        raise LaunchError(f"cannot read report {args.report}: {exc}") from exc
    manifest = rec.host_manifest(args.workspace)
    for note in rec.notes:
        print(f"opbench: {note}", file=sys.stderr)
    seed = f"seed {rec.run_seed}" if rec.run_seed is not None else "no seed"
    if not rec.in_container:
        print(f"opbench: report came from a local run; re-running locally with {seed}", file=sys.stderr)
        return run_local(["run", str(manifest), "--out", str(args.out), "--device", rec.device, *rec.run_args])
    kind = rec.device if rec.device in devices.CONTAINER_KINDS else "cpu"
    client = engine.connect()
    ref, start = resolve_image(client, rec, args.accept_rebuilt)
    plan = ContainerRun(ref, devices.device_spec(kind, args.visible_devices), args.workspace, manifest, args.out,
                        rec.run_args, image_ref=start)
    if args.dry_run:
        print(plan.shell())
        return 0
    print(f"opbench: reproducing {args.report} in {ref.tag} ({start[:19]}), {seed}", file=sys.stderr)
    return run_container(client, plan)


def cmd_launch(args: argparse.Namespace, run_local: RunLocal) -> int:
    return _launch(args, run_local)


def cmd_reproduce(args: argparse.Namespace, run_local: RunLocal) -> int:
    return _reproduce(args, run_local)
