"""Fixtures for the launcher tests: a tiny CPU manifest in its own workspace, and (for the container tests)
a Docker engine, an offline base image and the harness image built on it.

Without an engine the container tests skip, saying why; under CI (CI=true) they fail instead, because
.ci/run starts dockerd and a skip there would hide a broken setup.
"""
from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import pytest

from harness.launcher.image import ImageRecipe, ensure
from launch_workspace import write_workspace


@pytest.fixture
def axpy_manifest(tmp_path: Path) -> Path:
    return write_workspace(tmp_path / "ws")


def _unavailable(reason: str) -> None:
    if os.environ.get("CI") == "true":
        pytest.fail(f"CI=true but {reason} (.ci/run should have started dockerd)")
    pytest.skip(reason)


@pytest.fixture(scope="session")
def docker_client() -> Any:
    try:
        import docker
        client = docker.from_env(timeout=600)
        client.ping()
    except Exception as exc:  # ImportError, DockerException: both mean "no engine here"
        _unavailable(f"no Docker engine reachable: {str(exc).splitlines()[0][:200]}")
    return client


@pytest.fixture(scope="session")
def base_image(docker_client: Any) -> str:
    from base_image import ensure_base_image
    start = time.monotonic()
    tag = ensure_base_image(docker_client)
    print(f"\ntest base image {tag} ready in {time.monotonic() - start:.0f}s")
    return tag


@pytest.fixture(scope="session")
def cpu_build_args(base_image: str) -> dict[str, str]:
    """Dockerfile.cuda on the offline base; empty TORCH_VERSION keeps the base's CPU torch (no network)."""
    return {"BASE_IMAGE": base_image, "TORCH_VERSION": ""}


@pytest.fixture(scope="session")
def cpu_image(docker_client: Any, cpu_build_args: dict[str, str]) -> Any:
    start = time.monotonic()
    ref = ensure(docker_client, ImageRecipe("cpu", cpu_build_args), log=lambda line: None)
    print(f"\nharness image {ref.tag} ready in {time.monotonic() - start:.0f}s")
    return ref


@pytest.fixture(scope="session")
def npu_image(docker_client: Any, base_image: str) -> Any:
    """Dockerfile.npu on the test base, whose stub CANN set_env.sh exports FAKE_CANN_ENV."""
    return ensure(docker_client, ImageRecipe("npu", {"BASE_IMAGE": base_image, "TORCH_VERSION": ""}))
