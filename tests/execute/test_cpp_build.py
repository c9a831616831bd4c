"""C++/CUDA builds: what a failed build says (SOL-ExecBench's troubleshooting list), where CUTLASS's
headers are found, and a missing toolchain as UNSUPPORTED. The compile itself runs on the GPU machine
(`tests/execute/test_handoff.py`'s cuda run and `make bench` there); these are the parts that need none."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from harness.execute.solutions.common import BuildError, Unsupported
from harness.execute.solutions.cuda_cpp import _build_dir, cutlass_includes, hint

LOGS = {
    "cuda in cpp": ("main.cpp:12:1: error: '__global__' does not name a type; identifier \"threadIdx\" is undefined",
                    "put it in a .cu file"),
    "arch": ("nvcc fatal   : Unsupported gpu architecture 'compute_100a'", "do not match this GPU"),
    "module name": ("ImportError: dynamic module does not define module export function (PyInit_opbench_x)",
                    "TORCH_EXTENSION_NAME"),
    "cutlass headers": ("kernel.cu:3:10: fatal error: cutlass/gemm/device/gemm.h: No such file or directory", "CUTLASS_DIR"),
    "cudnn link": ("undefined symbol: cudnnCreate", "-lcudnn"),
    "nvrtc link": ("opbench_cudnn_graph.so: undefined symbol: nvrtcGetProgramLogSize", "-lnvrtc"),
}


@pytest.mark.parametrize("name", list(LOGS))
def test_a_failed_build_says_what_usually_causes_it(name: str) -> None:
    log, words = LOGS[name]
    assert words in hint(log)


def test_an_unrelated_failure_gets_no_hint() -> None:
    assert hint("kernel.cu(10): error: expected a \";\"") == ""


def test_cutlass_headers_come_from_cutlass_dir(tmp_path: Path) -> None:
    (tmp_path / "include" / "cutlass").mkdir(parents=True)
    (tmp_path / "include" / "cutlass" / "cutlass.h").write_text("// header\n")
    assert cutlass_includes({"CUTLASS_DIR": str(tmp_path)})[0] == tmp_path / "include"


def test_no_cutlass_is_unsupported_with_what_to_do(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    try:
        import cutlass_library  # noqa: F401
        pytest.skip("nvidia-cutlass is installed here")
    except ImportError:
        pass
    with pytest.raises(Unsupported, match="set CUTLASS_DIR .* or pip install nvidia-cutlass"):
        cutlass_includes({"CUTLASS_DIR": str(tmp_path / "none")})



def test_a_wheel_library_links_by_its_plain_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """NVIDIA's wheels hold only versioned files (libcudnn.so.9): a link folder gives `-lcudnn` (ours, and a
    solution's own ld_flags) something to find, and the rpath the wheel's folder."""
    from harness.execute.solutions.cuda_cpp import _library
    pkg = tmp_path / "site" / "opbench_fake_wheel"
    (pkg / "lib").mkdir(parents=True)
    (pkg / "include").mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "lib" / "libfoo.so.9").write_text("not really a library")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    monkeypatch.setenv("OPBENCH_BUILD_DIR", str(tmp_path / "build"))
    includes, flags = _library(("opbench_absent_wheel", "opbench_fake_wheel"), "foo", "foo", "foo-wheel")
    assert includes == [pkg / "include"]
    link_dir = Path(flags[0].removeprefix("-L"))
    assert (link_dir / "libfoo.so").resolve() == (pkg / "lib" / "libfoo.so.9").resolve()
    assert flags[1:] == [f"-Wl,-rpath,{pkg / 'lib'}", "-lfoo"]
    assert _library(("opbench_fake_wheel",), "foo", "foo", "foo-wheel") == (includes, flags)  # again: the link stays
    with pytest.raises(Unsupported, match="pip install bar-wheel"):
        _library(("opbench_absent_wheel",), "bar", "opbench_no_such_lib", "bar-wheel")


def test_the_cudnn_frontend_headers_are_found_or_the_row_is_unsupported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util
    from harness.execute.solutions.cuda_cpp import cudnn_frontend_includes
    (tmp_path / "fe" / "include").mkdir(parents=True)
    (tmp_path / "fe" / "include" / "cudnn_frontend.h").write_text("// header\n")
    assert cudnn_frontend_includes({"CUDNN_FRONTEND_DIR": str(tmp_path / "fe")}) == [tmp_path / "fe" / "include"]
    if importlib.util.find_spec("cudnn") is not None:
        pytest.skip("nvidia-cudnn-frontend is installed here")
    with pytest.raises(Unsupported, match="pip install nvidia-cudnn-frontend"):
        cudnn_frontend_includes({})


def test_a_cutile_solution_without_tileiras_is_unsupported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """cuTile compiles on first call; without its compiler every call would fail as the solution's
    runtime error, so the build says UNSUPPORTED first (and finds the wheel's tileiras when present)."""
    import importlib
    from types import SimpleNamespace
    from harness.execute.solutions import build_solution, tileiras
    site = tmp_path / "site"
    (site / "cuda" / "tile").mkdir(parents=True)
    (site / "cuda" / "tile" / "__init__.py").write_text("")  # cuda.tile importable, as after pip install cuda-tile
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.setenv("PATH", str(tmp_path / "nothing"))
    monkeypatch.setenv("CUDA_HOME", str(tmp_path / "no-cuda"))
    for name in [m for m in sys.modules if m == "nvidia" or m.startswith(("nvidia.", "cuda"))]:
        monkeypatch.delitem(sys.modules, name)
    importlib.invalidate_caches()
    if tileiras() is not None:
        pytest.skip(f"a tileiras is installed here: {tileiras()}")
    solution = SimpleNamespace(language="cutile")
    with pytest.raises(Unsupported, match="pip install nvidia-cuda-tileiras"):
        build_solution(solution, SimpleNamespace(kind="cuda"))  # type: ignore[arg-type]
    compiler = site / "nvidia" / "cu13" / "bin" / "tileiras"
    compiler.parent.mkdir(parents=True)
    compiler.write_text("#!/bin/sh\n")
    compiler.chmod(0o644)  # there, but not for this process (as a root-only 0744 copy is for a worker's uid)
    with pytest.raises(Unsupported, match=r"is at .*tileiras \(mode 644, not executable by uid \d+: chmod a\+x\)"):
        build_solution(solution, SimpleNamespace(kind="cuda"))  # type: ignore[arg-type]
    compiler.chmod(0o755)
    importlib.invalidate_caches()
    assert tileiras() == compiler
    with pytest.raises(BuildError, match="need a CUDA device"):  # found: past the check, and on PATH for cuda.tile
        build_solution(solution, SimpleNamespace(kind="cpu"))  # type: ignore[arg-type]
    assert shutil.which("tileiras") == str(compiler)


def test_a_dsl_package_that_does_not_load_is_unsupported_with_its_words(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """nvidia-cutlass-dsl without its libraries imports as far as "No CTK flavor installed" (the H100,
    2026-12-05): the machine lacks part of the toolchain, so the row is UNSUPPORTED, not COMPILE_ERROR."""
    from types import SimpleNamespace
    from harness.execute.solutions import build_solution
    site = tmp_path / "site"
    (site / "cutlass").mkdir(parents=True)
    (site / "cutlass" / "__init__.py").write_text("raise RuntimeError('No CTK flavor installed: expected one or more of ...')\n")
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.delitem(sys.modules, "cutlass", raising=False)
    with pytest.raises(Unsupported, match=r"'cutlass' package, which is installed here but does not load \(RuntimeError: "
                                          r"No CTK flavor installed.*pip install 'nvidia-cutlass-dsl\[cu13\]'"):
        build_solution(SimpleNamespace(language="cute_dsl"), SimpleNamespace(kind="cuda"))  # type: ignore[arg-type]


def test_a_tileiras_that_cannot_compile_makes_cutile_unsupported_with_the_versions(tmp_path: Path) -> None:
    """The tileiras wheel alone, beside a CUDA 13.0 toolkit, exits 5 ("failed to compile Tile IR
    program") on every kernel (the H100, 2026-12-05): the build compiles a probe first and says
    UNSUPPORTED with the compiler's words and the wheel versions, instead of a RUNTIME_ERROR per call.
    The compiler here is a stand-in that fails as that one did; cuda.tile, which runs it, is real."""
    pytest.importorskip("cuda.tile")
    from importlib import metadata
    try:
        pytest.skip(f"nvidia-cuda-tileiras {metadata.version('nvidia-cuda-tileiras')} is installed: cuda.tile runs that one")
    except metadata.PackageNotFoundError:
        pass
    stub = tmp_path / "bin" / "tileiras"
    stub.parent.mkdir()
    stub.write_text("#!/bin/sh\necho 'error: failed to compile Tile IR program' >&2\nexit 5\n")
    stub.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if k not in ("CUDA_HOME", "CUDA_PATH")}
    env["PATH"] = f"{stub.parent}{os.pathsep}{env.get('PATH', '')}"
    code = ("from pathlib import Path; from harness.execute.solutions import check_tileiras, Unsupported\n"
            "try:\n    check_tileiras(Path('STUB'), 'sm_90')\nexcept Unsupported as exc:\n    print('UNSUPPORTED', exc)")
    out = subprocess.run([sys.executable, "-c", code.replace("STUB", str(stub))], env=env, cwd=Path(__file__).parents[2],
                         capture_output=True, text=True, timeout=120).stdout
    assert out.startswith(f"UNSUPPORTED the cuTile compiler at {stub} cannot compile for sm_90 here"), out
    assert "failed to compile Tile IR program" in out and "nvidia-nvvm not installed" in out
    assert "cuda-tile wants cuda-toolkit" in out and "pip install 'cuda-tile[tileiras]'" in out


def test_the_same_sources_staged_twice_build_from_one_unchanged_copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each worker gets its sources in a new scratch folder; ninja would rebuild from a new path, so the
    build compiles a copy in the content-keyed folder, written once (its mtime kept for ninja)."""
    monkeypatch.setenv("OPBENCH_BUILD_DIR", str(tmp_path / "cache"))

    def staged(scratch: str, body: str = "int f() { return 1; }\n") -> list[Path]:
        (tmp_path / scratch / "inc").mkdir(parents=True)
        (tmp_path / scratch / "kernel.cu").write_text(body)
        (tmp_path / scratch / "inc" / "k.cuh").write_text("#pragma once\n")
        return [tmp_path / scratch / "kernel.cu", tmp_path / scratch / "inc" / "k.cuh"]

    first, copies = _build_dir("sol", staged("a"), ["-O3"])
    mtime = copies[tmp_path / "a" / "kernel.cu"].stat().st_mtime_ns
    again, copies2 = _build_dir("sol", staged("b"), ["-O3"])
    assert again == first and copies2[tmp_path / "b" / "inc" / "k.cuh"] == first / "src" / "inc" / "k.cuh"
    assert copies2[tmp_path / "b" / "kernel.cu"].stat().st_mtime_ns == mtime
    assert _build_dir("sol", staged("c", "int f() { return 2; }\n"), ["-O3"])[0] != first
    assert _build_dir("sol", staged("d"), ["-O2"])[0] != first
