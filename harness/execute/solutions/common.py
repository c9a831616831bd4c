"""Loading Python entry points from files, shared by every Python-hosted language."""
from __future__ import annotations

import hashlib
import importlib.util
import sys
import traceback
from pathlib import Path
from types import ModuleType
from typing import Any, Callable


class BuildError(Exception):
    """The solution could not be built or loaded: reported as COMPILE_ERROR."""


class Unsupported(BuildError):
    """This machine lacks what the solution's language needs (a package, headers, a library):
    reported as UNSUPPORTED with what to install, never as the solution's COMPILE_ERROR."""


def load_module(file: Path, label: str) -> ModuleType:
    """Import `file` under a unique name, with its folder importable so sibling modules resolve."""
    name = f"opbench_{label}_{hashlib.sha1(str(file).encode()).hexdigest()[:10]}"
    folder = str(file.parent)
    if folder not in sys.path:
        sys.path.insert(0, folder)
    spec = importlib.util.spec_from_file_location(name, file)
    if spec is None or spec.loader is None:
        raise BuildError(f"cannot import {file}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        raise BuildError(f"importing {file.name} failed: {type(exc).__name__}: {exc}\n{traceback.format_exc(limit=-3)}") from exc
    return module


def entry(module: ModuleType, symbol: str, where: str) -> Callable[..., Any]:
    fn = getattr(module, symbol, None)
    if fn is None or not callable(fn):
        raise BuildError(f"{where} has no callable {symbol!r}")
    return fn


def require(module: str, language: str, install: str | None = None) -> None:
    try:
        found = importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a parent package of a dotted name is missing
        found = False
    if not found:
        raise Unsupported(f"{language} solutions need the '{module}' package, which is not installed here"
                          + (f" (pip install {install})" if install else ""))
