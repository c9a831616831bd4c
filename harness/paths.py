"""Where opbench's own files are, found once: the package, its schemas and example manifests.

From a source checkout the schemas and manifests sit beside the package (`schemas/`, `manifests/`,
fixed by the product's layout); an installed wheel carries copies inside the package. Child
processes the harness starts (per-device runs, profiled bench cases) must import this same harness,
installed or not, hence `child_env`. What opbench keeps between runs (build caches, bytecode) lives under
`cache_dir`.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Mapping

PACKAGE_DIR = Path(__file__).resolve().parent
SOURCE_ROOT = PACKAGE_DIR.parent  # the checkout (or site-packages when installed)


def _first_dir(*candidates: Path) -> Path:
    return next((c for c in candidates if c.is_dir()), candidates[0])


SCHEMA_DIR = _first_dir(SOURCE_ROOT / "schemas", PACKAGE_DIR / "schemas")
MANIFESTS_DIR = _first_dir(SOURCE_ROOT / "manifests", PACKAGE_DIR / "manifests")


def child_env(base: Mapping[str, str] | None = None) -> dict[str, str]:
    """An environment in which `python -m harness...` imports this harness, whatever the cwd."""
    env = dict(os.environ if base is None else base)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(SOURCE_ROOT), env.get("PYTHONPATH", "")) if p)
    return env


def cache_dir() -> Path:
    """opbench's cache between runs: $OPBENCH_CACHE_DIR, else /var/tmp/opbench-cache for root (where worker
    uids can reach their build folders, unlike /root), else the user's cache folder."""
    given = os.environ.get("OPBENCH_CACHE_DIR")
    if given:
        return Path(given)
    if os.geteuid() == 0:
        return Path("/var/tmp/opbench-cache")
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "opbench"
