"""Connecting to the Docker engine, with a message that says what to do when there is none."""
from __future__ import annotations

import os
from typing import Any

from harness.launcher.errors import ENVIRONMENT, LaunchError


def _where() -> str:
    return os.environ.get("DOCKER_HOST") or "unix:///var/run/docker.sock"


def connect(timeout: int = 3600) -> Any:
    """A `docker.DockerClient` that has answered a ping, or LaunchError naming the endpoint tried.

    The timeout is per socket read: a build step that downloads a CUDA torch stack can be silent for minutes.
    """
    try:
        import docker
        from docker.errors import DockerException
    except ImportError as exc:
        raise LaunchError("the `docker` Python package is not installed (pip install docker); "
                          "or run without a container: --device local", ENVIRONMENT) from exc
    try:
        client = docker.from_env(timeout=timeout)
        client.ping()
    except DockerException as exc:
        raise LaunchError(f"no Docker engine reachable at {_where()}\n  ({exc})\n"
                          "  start one (e.g. `sudo systemctl start docker`), set DOCKER_HOST, "
                          "or run without a container: --device local", ENVIRONMENT) from exc
    return client


def probe() -> tuple[Any | None, str]:
    """(client, "") when an engine answers, else (None, one-line reason): what auto mode needs."""
    try:
        return connect(timeout=10), ""
    except LaunchError as exc:
        return None, str(exc).splitlines()[0]
