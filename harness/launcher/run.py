"""One container run of `harness run`: what gets mounted where, as whom, and streaming its output back.

The host workspace is mounted read-only at /workspace (the manifest must be inside it) and the output
folder read-write at /out. The harness runs as root in the container, with only the capabilities it
needs (hand workers their own uids, stop and kill them, write /out and hand it over) and no way to gain
more, so each worker runs as an unprivileged uid of its own that can write neither /workspace nor /out
(harness/execute/sandbox.py); the files it writes are handed to the calling user (`--owner`).
"""
from __future__ import annotations

import os
import shlex
import sys
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, TextIO

from harness.launcher.devices import DeviceSpec, Mount
from harness.launcher.errors import ENVIRONMENT, LaunchError
from harness.launcher.image import ImageRef
from harness.results.interrupt import EXIT_CODE as INTERRUPTED

WORKSPACE = PurePosixPath("/workspace")
OUT = PurePosixPath("/out")
STOP_GRACE_S = 60  # SIGTERM, then this long for the harness to close its workers and write what finished
PARENT_USER = "0:0"
# chown (scratch folders, handing /out over), dac_override (write the caller's /out), fowner (chmod the
# build cache), setuid/setgid (workers' own uids), kill (stop and kill workers of other uids)
CAPABILITIES = ("CHOWN", "DAC_OVERRIDE", "FOWNER", "SETUID", "SETGID", "KILL")


def container_path(workspace: Path, manifest: Path) -> PurePosixPath:
    """Where the manifest appears in the container, or LaunchError when it is outside the mounted tree."""
    ws, m = workspace.resolve(), manifest.resolve()
    try:
        rel = m.relative_to(ws)
    except ValueError:
        raise LaunchError(f"manifest {m} is outside the mounted tree {ws}: the container only sees that folder "
                          f"(at {WORKSPACE}); move the manifest under it or pass --workspace DIR that contains it") from None
    return WORKSPACE / rel.as_posix()


def caller_user() -> str:
    return f"{os.getuid()}:{os.getgid()}"


@dataclass(frozen=True)
class ContainerRun:
    image: ImageRef
    device: DeviceSpec
    workspace: Path
    manifest: Path
    out: Path
    run_args: tuple[str, ...] = ()
    user: str = field(default_factory=caller_user)  # "uid:gid" the output files are handed to
    image_ref: str | None = None   # what to start (tag by default; reproduce starts the exact image id)

    @property
    def mounts(self) -> tuple[Mount, ...]:
        return (Mount(str(self.workspace.resolve()), str(WORKSPACE), read_only=True),
                Mount(str(self.out.resolve()), str(OUT), read_only=False), *self.device.mounts)

    def command(self) -> list[str]:
        return ["python3", "-m", "harness", "run", str(container_path(self.workspace, self.manifest)),
                "--device", self.device.kind, "--out", str(OUT), "--owner", self.user, *self.run_args]

    def environment(self) -> dict[str, str]:
        # HOME: the calling uid has no home in the image; compilers and Triton need a writable cache dir.
        return {"OPBENCH_IMAGE": self.image.tag, "OPBENCH_IMAGE_DIGEST": self.image.digest, "HOME": "/tmp",
                "PYTHONSAFEPATH": "1", **self.device.env}

    def docker_args(self) -> list[str]:
        """The equivalent `docker run` command line (what --dry-run prints)."""
        spec = DeviceSpec(self.device.kind, self.device.devices, self.mounts, self.environment(),
                          self.device.gpus, self.device.group_add, self.device.shm_size)
        return ["docker", "run", "--rm", "--network", "none", "--user", PARENT_USER, "-w", str(OUT),
                "--cap-drop", "ALL", *(a for cap in CAPABILITIES for a in ("--cap-add", cap)),
                "--security-opt", "no-new-privileges", *spec.docker_args(), self.image_ref or self.image.tag,
                *self.command()]

    def sdk_kwargs(self) -> dict[str, Any]:
        from docker.types import DeviceRequest
        from docker.types import Mount as SdkMount
        kwargs: dict[str, Any] = {
            "image": self.image_ref or self.image.tag, "command": self.command(), "user": PARENT_USER,
            "cap_drop": ["ALL"], "cap_add": list(CAPABILITIES), "security_opt": ["no-new-privileges"],
            "working_dir": str(OUT), "environment": self.environment(), "network_mode": "none",
            "mounts": [SdkMount(m.target, m.source, type="bind", read_only=m.read_only) for m in self.mounts],
            "devices": [f"{h}:{c}:rwm" for h, c in self.device.devices],
            "group_add": list(self.device.group_add), "labels": {"io.opbench.launch": "1"},
        }
        if self.device.shm_size:
            kwargs["shm_size"] = self.device.shm_size
        if self.device.gpus is not None:
            kwargs["device_requests"] = [DeviceRequest(count=-1 if not self.device.gpus else None,
                                                       device_ids=list(self.device.gpus) or None,
                                                       capabilities=[["gpu"]])]
        return kwargs

    def shell(self) -> str:
        return shlex.join(self.docker_args())


def _explain(exc: Exception, plan: ContainerRun) -> LaunchError:
    text = str(exc)
    if plan.device.gpus is not None and "device driver" in text:
        return LaunchError(f"the Docker engine cannot pass NVIDIA GPUs in ({text}); "
                           "install the NVIDIA Container Toolkit and restart the engine", ENVIRONMENT)
    return LaunchError(f"could not start the container: {text}", ENVIRONMENT)


def run_container(client: Any, plan: ContainerRun, stdout: TextIO | None = None, stderr: TextIO | None = None) -> int:
    """Start the run, stream its stdout/stderr as it comes, and return the harness's exit code."""
    from docker.errors import APIError, ImageNotFound
    stdout, stderr = stdout or sys.stdout, stderr or sys.stderr
    plan.out.mkdir(parents=True, exist_ok=True)   # created by the caller, so it is theirs
    try:
        container = client.containers.create(**plan.sdk_kwargs())
    except (APIError, ImageNotFound) as exc:
        raise _explain(exc, plan) from exc
    try:
        stream = container.attach(stdout=True, stderr=True, stream=True, logs=True, demux=True)
        try:
            container.start()
        except APIError as exc:
            raise _explain(exc, plan) from exc
        for out, err in stream:
            if out:
                stdout.write(out.decode(errors="replace"))
                stdout.flush()
            if err:
                stderr.write(err.decode(errors="replace"))
                stderr.flush()
        return int(container.wait()["StatusCode"])
    except KeyboardInterrupt:  # the harness turns SIGTERM into a report of what finished (results/interrupt)
        stderr.write(f"interrupted: stopping the container (up to {STOP_GRACE_S} s) so it writes what finished\n")
        container.stop(timeout=STOP_GRACE_S)
        return INTERRUPTED
    finally:
        container.remove(force=True)
