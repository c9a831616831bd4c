"""Compiled Python kept in opbench's cache when torch's cannot be kept beside its source.

Every process of a run imports torch: the parent and each worker. Where torch's folder holds no
bytecode (an image built with PYTHONDONTWRITEBYTECODE=1, or a read-only install), every one of those
imports compiles torch's source again, about 2.5 s of each process's start on the GPU machine (py-spy,
2026-12-07). `keep` then points imports at `pycache/` in opbench's cache folder (Python's own
`sys.pycache_prefix`), for this process and, through the environment, for every process it starts.

Only the parent writes there; workers start with PYTHONDONTWRITEBYTECODE (`execute/spawn.WORKER_ENV`)
and read. Bytecode a solution planted there would run in the next run's parent, so the folder is used
only when it, the cache folder above it and every folder Python makes below it (the umask) are this
user's alone. That keeps out a worker on its own uid (a root parent, as in the images); a worker on the
parent's uid can write the folder, as it can write everything else that user owns (the report says which
of the two a run had). A machine whose torch has its bytecode is left exactly as it is.

What only workers import (the harness's worker side, torch's C++ extension loader, each language's
toolchain: Triton, setuptools, the DSLs) the parent compiles into the folder too, in a process of its own
at the lowest CPU priority (`compile_behind`), so the next run's workers load those compiled as well.
"""
from __future__ import annotations

import importlib.util
import os
import stat
import subprocess
import sys
from pathlib import Path
from typing import Iterable

from harness.paths import cache_dir

PYCACHE = "pycache"


def _compiled_beside_source(module: str) -> bool:
    """Whether `module` is missing, not Python source, or has its bytecode in its own __pycache__ (asked with
    no prefix set: `cache_from_source` then names the folder beside the source)."""
    spec = importlib.util.find_spec(module)
    if spec is None or not spec.origin or not spec.origin.endswith(".py"):
        return True
    return os.path.exists(importlib.util.cache_from_source(spec.origin))


def _private(path: Path) -> bool:
    """A real folder owned by this user that no group or other user can write."""
    st = path.lstat()
    return stat.S_ISDIR(st.st_mode) and st.st_uid == os.geteuid() and not st.st_mode & (stat.S_IWGRP | stat.S_IWOTH)


def use_cache(root: Path, probe: str = "torch") -> Path | None:
    """Keep bytecode under `root/pycache` when `probe` (torch) has none beside its source and no prefix
    was chosen by the user; returns the folder, or None when things stay as they are."""
    if sys.pycache_prefix is not None or _compiled_beside_source(probe):
        return None
    umask = os.umask(0o022)
    os.umask(umask)
    if umask & 0o022 != 0o022:  # the folders Python makes below the prefix would be writable by others
        return None
    root = root.absolute()  # one folder for every process, whatever its working directory
    folder = root / PYCACHE
    try:
        for path in (root, folder):
            path.mkdir(parents=True, exist_ok=True, mode=0o755)
            if not _private(path):
                return None
    except OSError:
        return None
    sys.pycache_prefix = str(folder)
    sys.dont_write_bytecode = False  # this process only: workers are started with PYTHONDONTWRITEBYTECODE
    os.environ["PYTHONPYCACHEPREFIX"] = str(folder)
    return folder


def keep() -> Path | None:
    """`use_cache` in opbench's cache folder, first thing in a command (`harness/__main__`, `cli.exit.command`);
    a home that cannot be found leaves things as they are."""
    try:
        return use_cache(cache_dir())
    except (OSError, RuntimeError, KeyError):  # Path.home() with no HOME and no passwd entry
        return None


# compileall writes each file as Python's imports do (a temporary name, then a rename): one cut short leaves
# no half-written bytecode
COMPILE = ("import compileall, os, sys; os.nice(19)\n"
           "for p in sys.argv[1:]: (compileall.compile_dir if os.path.isdir(p) else compileall.compile_file)(p, quiet=2)")


def sources(packages: Iterable[str]) -> list[str]:
    """Where each top-level package (or module) is, found without importing it; those not installed are left out."""
    found: list[str] = []
    for name in dict.fromkeys(packages):
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            continue
        if spec is None:
            continue
        found += list(spec.submodule_search_locations or []) or ([spec.origin] if spec.origin and spec.origin.endswith(".py") else [])
    return found


def compile_behind(packages: Iterable[str]) -> subprocess.Popen[bytes] | None:
    """Where this process keeps bytecode in a prefix folder (`use_cache`, or the user's own PYTHONPYCACHEPREFIX),
    a process at the lowest CPU priority, in a session of its own, compiling `packages` into it; None where
    there is none. Workers never write bytecode, so whatever only they import was compiled from source at every
    worker's start, in every run (torch's extension loader and setuptools 0.23-0.32 s of a C++ worker's build on
    the CPU VM, against 0.04 s compiled). Files already compiled are only checked (0.4 s for torch's 2,285 there).
    The caller stops it while a host clock is read, as it stops builds, and kills it when the run ends."""
    if sys.pycache_prefix is None or sys.dont_write_bytecode:
        return None
    paths = sources(packages)
    if not paths:
        return None
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = sys.pycache_prefix
    return subprocess.Popen([sys.executable, "-c", COMPILE, *paths], env=env, stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
