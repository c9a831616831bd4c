"""C++/CUDA solutions (cuda_cpp, and cutlass, cudnn, cublas, which are C++/CUDA with a library's
headers and link flags), built with nvcc + ninja into a module, as SOL-ExecBench's build does.

- `binding: torch` (the default): `torch.utils.cpp_extension.load`; the sources define
  PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) exporting the entry symbol.
- `binding: tvm-ffi`: `tvm_ffi.cpp.load` (apache-tvm-ffi); the sources export the entry symbol with
  TVM_FFI_DLL_EXPORT_TYPED_FUNC and take DLPack tensors (torch tensors convert by themselves).

Only .cu/.cpp/.cc/.cxx/.c files are compiled; headers (.h, .hpp, .cuh) are found through the
solution's folder, which is an include path. The build directory is keyed on the sources' content
and flags, so an unchanged solution is not rebuilt. A missing toolchain (nvcc, ninja, CUTLASS
headers, cuDNN, apache-tvm-ffi) is UNSUPPORTED with what to install; a failed build is
COMPILE_ERROR with the compiler's words and a hint for the common causes.
"""
from __future__ import annotations

import hashlib
import importlib.util
import io
import os
import shutil
import tempfile
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from typing import Any, Callable

from harness.execute.solutions.common import BuildError, Unsupported, entry, require
from harness.measure.devices import Device
from harness.spec.model import CPP_COMPILED, Solution

CUDA_SUFFIX = ".cu"


def _build_root() -> Path:
    return Path(os.environ.get("OPBENCH_BUILD_DIR", Path(tempfile.gettempdir()) / "opbench-build"))


def folder_name(solution_name: str) -> str:
    """A solution's name as its build folders start (`<name>-<content hash>`) and its module is named."""
    return "".join(c if c.isalnum() else "_" for c in solution_name)


def _build_dir(name: str, files: list[Path], flags: list[str]) -> tuple[Path, dict[Path, Path]]:
    """The build folder, keyed on the sources (their layout and bytes) and flags, and where each source
    lies in it. The sources are compiled from that copy because ninja keys "up to date" on each command
    line and file path, and the parent stages sources into a scratch folder that is new for every worker:
    built from there, a solution recompiled in every run and once more after its parallel prebuild
    (14.5 s of each cuda_cpp first row on the H100, 2026-12-05)."""
    top = Path(os.path.commonpath([str(f.parent) for f in files]))
    sources = {f: (f.relative_to(top), f.read_bytes()) for f in files}
    h = hashlib.sha256()
    for rel, data in sources.values():
        h.update(rel.as_posix().encode() + b"\0")
        h.update(data)
    h.update(" ".join(flags).encode())
    path = _build_root() / f"{name}-{h.hexdigest()[:12]}"
    copies: dict[Path, Path] = {}
    for f, (rel, data) in sources.items():
        target = path / "src" / rel
        if not target.is_file() or target.read_bytes() != data:  # rewritten only when missing: mtimes stay
            target.parent.mkdir(parents=True, exist_ok=True)
            partial = target.with_name(f".{target.name}.{os.getpid()}")
            partial.write_bytes(data)
            os.replace(partial, target)  # a shard building the same code at once sees the whole file or none
        copies[f] = target
    return path, copies


def cutlass_includes(env: dict[str, str] | None = None) -> list[Path]:
    """CUTLASS's header folders: $CUTLASS_DIR (as SOL-ExecBench reads it, default /usr/local/cutlass),
    else the nvidia-cutlass wheel's copy (cutlass_library/source)."""
    env = dict(os.environ) if env is None else env
    roots = [Path(env.get("CUTLASS_DIR", "/usr/local/cutlass"))]
    try:
        import cutlass_library  # type: ignore[import-not-found]
        roots.append(Path(cutlass_library.__file__).parent / "source")
    except ImportError:
        pass
    for root in roots:
        if (root / "include" / "cutlass" / "cutlass.h").is_file():
            return [root / "include", root / "tools" / "util" / "include"]
    raise Unsupported("cutlass solutions need the CUTLASS headers: set CUTLASS_DIR to a CUTLASS checkout "
                      f"(looked in {roots[0]}) or pip install nvidia-cutlass")


def _library(packages: tuple[str, ...], language: str, lib: str, install: str) -> tuple[list[Path], list[str]]:
    """Include and link flags of a library shipped as an NVIDIA wheel (nvidia.cudnn, nvidia.cu13...),
    or none when it is in the CUDA toolkit's own folders. The wheels hold only versioned files
    (libcudnn.so.9), so a link folder gets an unversioned name for it: `-l<lib>`, also in a
    solution's own ld_flags (SOL-ExecBench's `-lcudnn`), finds the wheel's copy."""
    for package in packages:
        try:
            bases = [Path(b) for b in __import__(package, fromlist=["_"]).__path__]
        except ImportError:
            continue
        # a namespace package (nvidia.cu13) may span several folders: the first that holds the library
        found = next((f for b in bases if (f := sorted((b / "lib").glob(f"lib{lib}.so*")))), None)
        if found is None:
            continue
        base = found[0].parent.parent
        links = _build_root() / "links" / package
        links.mkdir(parents=True, exist_ok=True)
        link = links / f"lib{lib}.so"
        if not link.exists() or link.resolve() != found[0].resolve():
            tmp = links / f".lib{lib}.so.{os.getpid()}"
            tmp.unlink(missing_ok=True)
            tmp.symlink_to(found[0])
            tmp.replace(link)
        return [base / "include"], [f"-L{links}", f"-Wl,-rpath,{base / 'lib'}", f"-l{lib}"]
    cuda_home = os.environ.get("CUDA_HOME", "/usr/local/cuda")
    if any(Path(d, f"lib{lib}.so").exists() for d in (f"{cuda_home}/lib64", "/usr/lib/x86_64-linux-gnu")):
        return [], [f"-l{lib}"]
    raise Unsupported(f"{language} solutions need lib{lib}: pip install {install}, or install it with the CUDA toolkit")


def cudnn_frontend_includes(env: dict[str, str] | None = None) -> list[Path]:
    """The header-only cudnn frontend (cudnn_frontend.h): $CUDNN_FRONTEND_DIR/include, else the copy
    the nvidia-cudnn-frontend wheel installs beside its `cudnn` package (found without importing it)."""
    env = dict(os.environ) if env is None else env
    roots = [Path(env["CUDNN_FRONTEND_DIR"]) / "include"] if env.get("CUDNN_FRONTEND_DIR") else []
    try:
        spec = importlib.util.find_spec("cudnn")
    except (ImportError, ValueError):
        spec = None
    if spec is not None and spec.origin:
        roots.append(Path(spec.origin).parent.parent / "include")
    for root in roots:
        if (root / "cudnn_frontend.h").is_file():
            return [root]
    raise Unsupported("this cudnn solution includes cudnn_frontend.h: pip install nvidia-cudnn-frontend, or set "
                      "CUDNN_FRONTEND_DIR to a cudnn-frontend checkout")


def toolchain(language: str, sources: list[Path] = []) -> tuple[list[Path], list[str]]:
    """Extra include paths and link flags a C++ language needs beyond cuda_cpp (the cudnn frontend's
    headers when a source includes them)."""
    if language == "cutlass":
        return cutlass_includes(), []
    if language == "cudnn":
        includes, ldflags = _library(("nvidia.cudnn",), "cudnn", "cudnn", "nvidia-cudnn-cu13 (or -cu12, as torch's CUDA)")
        if any("cudnn_frontend" in f.read_text(errors="replace") for f in sources if f.is_file()):
            # the frontend calls NVRTC (it compiles some engines at run time): unlinked, the module's
            # import fails on nvrtcGetProgramLogSize (the H100, 2026-12-06)
            _, nvrtc = _library(("nvidia.cu13", "nvidia.cuda_nvrtc"), "cudnn", "nvrtc",
                                "nvidia-cuda-nvrtc (torch's CUDA wheels bring it)")
            includes, ldflags = cudnn_frontend_includes() + includes, ldflags + nvrtc
        return includes, ldflags
    if language == "cublas":
        return _library(("nvidia.cublas", "nvidia.cu13"), "cublas", "cublas", "nvidia-cublas (or nvidia-cublas-cu12, as torch's CUDA)")
    return [], []


def hint(log: str) -> str:
    """What usually causes this build failure (SOL-ExecBench's troubleshooting list), or ''."""
    text = log.lower()
    if "__global__" in log and ".cpp" in log and ("error" in text) and "identifier" in text:
        return "hint: CUDA code (__global__, <<<...>>>) in a .cpp file is compiled by the host compiler; put it in a .cu file"
    if "no kernel image is available" in text or "unsupported gpu architecture" in text:
        return "hint: the -gencode/-arch flags do not match this GPU; leave them out to build for it"
    if "pyinit_" in text or "dynamic module does not define module export function" in text:
        return "hint: PYBIND11_MODULE must use TORCH_EXTENSION_NAME as the module name"
    if "cutlass/" in text and "no such file" in text:
        return "hint: CUTLASS headers not found: set CUTLASS_DIR or pip install nvidia-cutlass"
    if "undefined symbol: nvrtc" in text or "undefined reference to `nvrtc" in text:
        return "hint: link NVRTC: compile_options.ld_flags ['-lnvrtc'] (the cudnn frontend compiles some engines at run time)"
    if "cudnn" in text and ("undefined reference" in text or "undefined symbol" in text or "cannot find -lcudnn" in text):
        return "hint: link cuDNN: compile_options.ld_flags ['-lcudnn'] (and the cudnn wheel or toolkit)"
    if "cuda_home" in text or "nvcc" in text and "not found" in text:
        return "hint: nvcc not found: set CUDA_HOME to the CUDA toolkit"
    return ""


def build(solution: Solution, device: Device) -> Callable[..., Any]:
    if device.kind != "cuda":
        raise BuildError(f"{solution.language} solutions need a CUDA device, not {device.kind}")
    require("ninja", solution.language, "ninja")
    if shutil.which("nvcc") is None and not Path(os.environ.get("CUDA_HOME", "/usr/local/cuda"), "bin", "nvcc").exists():
        raise Unsupported(f"{solution.language} solutions need nvcc (the CUDA toolkit): set CUDA_HOME or put nvcc on PATH")
    binding = solution.build.get("binding", "torch")
    if binding == "tvm-ffi":
        require("tvm_ffi", solution.language, "apache-tvm-ffi")
    every = [solution.entry_file] + [s for s in solution.sources if s != solution.entry_file]
    includes, ldflags = toolchain(solution.language, every)
    if not any(f.suffix in CPP_COMPILED for f in every):
        raise BuildError(f"no file to compile among {[f.name for f in every]}; expected .cu, .cpp, .cc, .cxx or .c")
    cuda_flags = ["-O3", "--use_fast_math"] + list(solution.build.get("extra_cuda_cflags", []))
    cflags = ["-O3"] + list(solution.build.get("extra_cflags", []))
    ldflags = ldflags + list(solution.build.get("extra_ldflags", []))
    safe = folder_name(solution.name)
    build_dir, copies = _build_dir(safe, every, cuda_flags + cflags + ldflags + [binding] + [str(p) for p in includes])
    files = [copies[f] for f in every if f.suffix in CPP_COMPILED]
    include_paths = [str(p) for p in [copies[solution.entry_file].parent, *includes]]
    name = f"opbench_{safe}_{build_dir.name[-12:]}"
    log = io.StringIO()
    try:
        with redirect_stdout(log), redirect_stderr(log):
            if binding == "tvm-ffi":
                from tvm_ffi.cpp import load as ffi_load  # type: ignore[import-not-found]
                # tvm-ffi asks nvidia-smi for the target when this is unset; the worker knows its device
                import torch
                os.environ.setdefault("TVM_FFI_CUDA_ARCH_LIST", "{}.{}".format(*torch.cuda.get_device_capability(device.index)))
                module = ffi_load(name, cpp_files=[str(f) for f in files if f.suffix != CUDA_SUFFIX],
                                  cuda_files=[str(f) for f in files if f.suffix == CUDA_SUFFIX], extra_cflags=cflags,
                                  extra_cuda_cflags=cuda_flags, extra_ldflags=ldflags, extra_include_paths=include_paths,
                                  build_directory=str(build_dir))
            else:
                from torch.utils.cpp_extension import load
                # with_cuda: a solution of .cpp files alone (a cuDNN or cuBLAS call) still needs CUDA's
                # headers and libraries, which torch adds by itself only when a .cu file is present
                module = load(name=name, sources=[str(f) for f in files], extra_cflags=cflags,
                              extra_cuda_cflags=cuda_flags, extra_ldflags=ldflags, extra_include_paths=include_paths,
                              build_directory=str(build_dir), with_cuda=True, verbose=False)
    except Exception as exc:
        text = f"{exc}"[-4000:] + "\n" + log.getvalue()[-2000:]
        raise BuildError("\n".join(x for x in (f"nvcc/ninja build failed: {text}", hint(text)) if x)) from exc
    return entry(module, solution.entry_symbol, solution.entry_file.name)
