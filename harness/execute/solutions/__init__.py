"""Turn a Solution into a callable for one device; one module per language family says how it is built.

Build errors are raised as `BuildError` so the worker reports COMPILE_ERROR with the compiler's words;
a machine without the language's toolchain raises `Unsupported` (UNSUPPORTED, with what to install).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from harness.measure.devices import Device
from harness.spec.model import CPP_LANGUAGES, Solution
from harness.execute.solutions.common import BuildError, Unsupported, require

# Python modules that drive a CUDA DSL or library: imported like a pytorch solution once the package is here.
PYTHON_DSLS = {"cute_dsl": ("cutlass", "'nvidia-cutlass-dsl[cu13]'"), "cutile": ("cuda.tile", "cuda-tile"),
               "cudnn_frontend": ("cudnn", "nvidia-cudnn-frontend")}
LANGUAGES = ("pytorch", "triton", "tilelang", *CPP_LANGUAGES, *PYTHON_DSLS)


def runtime_module(language: str) -> str | None:
    """The package a `language` solution's code imports first, heavy to load (TileLang brings TVM, the CuTe
    DSL its MLIR libraries, a C++ build torch's extension loader and setuptools): a prepared worker imports it
    ahead of the turn (`Worker.prepare`)."""
    own = {"triton": "triton", "tilelang": "tilelang", **dict.fromkeys(CPP_LANGUAGES, "torch.utils.cpp_extension")}
    return own.get(language) or PYTHON_DSLS.get(language, (None,))[0]


def worker_packages(language: str) -> tuple[str, ...]:
    """The top-level packages a `language` worker imports beyond the harness and torch: whose bytecode the
    parent keeps for workers, which write none (`bytecode.compile_behind`). A C++ build loads through torch's
    loader (setuptools) or apache-tvm-ffi's."""
    module = runtime_module(language)
    tops = ([module.split(".")[0]] if module else []) + (["setuptools", "tvm_ffi"] if language in CPP_LANGUAGES else [])
    return tuple(dict.fromkeys(tops))


def tileiras_places() -> list[Path]:
    """Where cuda.tile looks for the compiler it runs on first call: the nvidia-cuda-tileiras wheel,
    PATH, the CUDA toolkit."""
    import importlib.util
    import os
    import shutil
    places: list[Path] = []
    try:
        spec = importlib.util.find_spec("nvidia")
    except (ImportError, ValueError):
        spec = None
    for root in (spec.submodule_search_locations or []) if spec is not None else []:
        places.append(Path(root) / "cu13" / "bin" / "tileiras")
    on_path = shutil.which("tileiras")
    places += [Path(on_path)] if on_path else []
    places.append(Path(os.environ.get("CUDA_HOME", "/usr/local/cuda")) / "bin" / "tileiras")
    return places


def tileiras() -> Path | None:
    """The tileiras this process can execute: missing, every cuTile call would fail as the solution's
    runtime error."""
    import os
    return next((p for p in tileiras_places() if p.is_file() and os.access(p, os.X_OK)), None)


def _no_tileiras() -> str:
    """Why there is none to run, naming a copy this process may not execute (a worker on its own uid
    cannot run a root-only 0744 tileiras, as an archive unpacked by root can leave it)."""
    import os
    found = [f"{p} (mode {p.stat().st_mode & 0o777:o}, not executable by uid {os.getuid()}: chmod a+x)"
             for p in tileiras_places() if p.is_file()]
    return ("cutile solutions need the tileiras compiler, which " + (f"is at {found[0]}" if found else
            "is not installed here (pip install nvidia-cuda-tileiras, or a CUDA toolkit of 13.1 or later)"))


def _put_on_path(compiler: Path) -> None:
    """cuda.tile runs the nvidia-cuda-tileiras wheel's compiler only when the nvcc and nvvm wheels of the
    same version are installed too; else it looks on $PATH and in $CUDA_HOME/bin. A compiler found
    elsewhere (the wheel alone, or unpacked by hand) goes first on this worker's PATH, so that the one
    the build judged present is the one the first call runs (on the H200 such a copy gave every cuTile
    call a RUNTIME_ERROR, 2026-12-04)."""
    import os
    import shutil
    if shutil.which("tileiras") is None:
        os.environ["PATH"] = os.pathsep.join(filter(None, (str(compiler.parent), os.environ.get("PATH"))))


def _toolkit_versions() -> str:
    """The versions of the wheels tileiras runs with, and the range cuda-tile asks for."""
    from importlib import metadata
    have = []
    for pkg in ("nvidia-cuda-tileiras", "nvidia-nvvm", "nvidia-cuda-nvcc"):
        try:
            have.append(f"{pkg} {metadata.version(pkg)}")
        except metadata.PackageNotFoundError:
            have.append(f"{pkg} not installed")
    try:
        wanted = next((r.split(";")[0] for r in metadata.requires("cuda-tile") or [] if "tileiras" in r), "")
    except metadata.PackageNotFoundError:
        wanted = ""
    return ", ".join(have) + (f"; cuda-tile wants {wanted}" if wanted else "")


def check_tileiras(compiler: Path, arch: str) -> None:
    """UNSUPPORTED, with the compiler's words and what to install, when tileiras cannot compile a
    16-element copy for this GPU (`arch`, e.g. "sm_90"; cutile_probe)."""
    from harness.execute.solutions.cutile_probe import compile_error
    error = compile_error(arch)
    if error is not None:
        raise Unsupported(
            f"the cuTile compiler at {compiler} cannot compile for {arch} here ({error}); the "
            "nvidia-cuda-tileiras wheel runs with the libnvvm and ptxas of nvidia-nvvm and nvidia-cuda-nvcc of "
            f"its own version ({_toolkit_versions()}): pip install 'cuda-tile[tileiras]', or the three wheels "
            "at one version that cuda-tile accepts (requirements-cuda.txt)")


def _importable(language: str) -> None:
    """The DSL's package imported before the solution's code: a package that is there but cannot load
    (nvidia-cutlass-dsl without its libraries: "No CTK flavor installed", on the H100 on 2026-12-05)
    is the machine's UNSUPPORTED, not the solution's COMPILE_ERROR."""
    import importlib
    module, install = PYTHON_DSLS[language]
    try:
        importlib.import_module(module)
    except Exception as exc:  # whatever the package raises while loading itself
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        raise Unsupported(f"{language} solutions need the '{module}' package, which is installed here but does not "
                          f"load ({type(exc).__name__}: {first[:300]}); reinstall it (pip install {install})")


def build_solution(solution: Solution, device: Device) -> Callable[..., Any]:
    language = solution.language
    if language in CPP_LANGUAGES:
        from harness.execute.solutions.cuda_cpp import build
    elif language == "pytorch":
        from harness.execute.solutions.pytorch import build
    elif language == "triton":
        from harness.execute.solutions.triton import build
    elif language == "tilelang":
        from harness.execute.solutions.tilelang import build
    elif language in PYTHON_DSLS:
        require(PYTHON_DSLS[language][0], language, PYTHON_DSLS[language][1])
        _importable(language)
        if language == "cutile":
            compiler = tileiras()
            if compiler is None:
                raise Unsupported(_no_tileiras())
            _put_on_path(compiler)
        if device.kind != "cuda":
            raise BuildError(f"{language} solutions need a CUDA device, not {device.kind}")
        if language == "cutile":
            import torch
            major, minor = torch.cuda.get_device_capability(device.torch_device)
            check_tileiras(compiler, f"sm_{major}{minor}")
        from harness.execute.solutions.pytorch import build
    else:
        raise BuildError(f"unknown language {language!r}; expected one of {LANGUAGES}")
    return build(solution, device)


__all__ = ["BuildError", "LANGUAGES", "Unsupported", "build_solution"]
