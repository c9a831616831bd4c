"""CUDA C++ solutions, built with torch.utils.cpp_extension (nvcc + ninja) into a Python module.

The entry point is `file.cu::symbol`: the sources define a PYBIND11_MODULE(TORCH_EXTENSION_NAME, m)
that exports `symbol`. The build directory is keyed on the sources' content, so an unchanged
solution is not rebuilt.
"""
from __future__ import annotations

import hashlib
import io
import os
import tempfile
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from typing import Any, Callable

from harness.measure.devices import Device
from harness.spec.model import Solution
from harness.execute.solutions.common import BuildError, entry, require


def _build_dir(name: str, files: list[Path], flags: list[str]) -> Path:
    h = hashlib.sha256()
    for f in files:
        h.update(f.read_bytes())
    h.update(" ".join(flags).encode())
    root = Path(os.environ.get("OPBENCH_BUILD_DIR", Path(tempfile.gettempdir()) / "opbench-build"))
    path = root / f"{name}-{h.hexdigest()[:12]}"
    path.mkdir(parents=True, exist_ok=True)
    return path


def build(solution: Solution, device: Device) -> Callable[..., Any]:
    if device.kind != "cuda":
        raise BuildError(f"cuda_cpp solutions need a CUDA device, not {device.kind}")
    require("ninja", "cuda_cpp")
    from torch.utils.cpp_extension import load

    files = [solution.entry_file] + [s for s in solution.sources if s != solution.entry_file]
    cuda_flags = ["-O3", "--use_fast_math"] + list(solution.build.get("extra_cuda_cflags", []))
    cflags = ["-O3"] + list(solution.build.get("extra_cflags", []))
    safe = "".join(c if c.isalnum() else "_" for c in solution.name)
    build_dir = _build_dir(safe, files, cuda_flags + cflags)
    log = io.StringIO()
    try:
        with redirect_stdout(log), redirect_stderr(log):
            module = load(name=f"opbench_{safe}_{build_dir.name[-12:]}", sources=[str(f) for f in files],
                          extra_cflags=cflags, extra_cuda_cflags=cuda_flags, build_directory=str(build_dir),
                          verbose=False)
    except Exception as exc:
        text = str(exc)
        raise BuildError(f"nvcc/ninja build failed: {text[-4000:]}\n{log.getvalue()[-2000:]}") from exc
    return entry(module, solution.entry_symbol, solution.entry_file.name)
