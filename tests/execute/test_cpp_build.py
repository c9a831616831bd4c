"""C++/CUDA builds: what a failed build says (SOL-ExecBench's troubleshooting list), where CUTLASS's
headers are found, and a missing toolchain as UNSUPPORTED. The compile itself runs on the GPU machine
(`tests/execute/test_handoff.py`'s cuda run and `make bench` there); these are the parts that need none."""
from __future__ import annotations

from pathlib import Path

import pytest

from harness.execute.solutions.common import Unsupported
from harness.execute.solutions.cuda_cpp import cutlass_includes, hint

LOGS = {
    "cuda in cpp": ("main.cpp:12:1: error: '__global__' does not name a type; identifier \"threadIdx\" is undefined",
                    "put it in a .cu file"),
    "arch": ("nvcc fatal   : Unsupported gpu architecture 'compute_100a'", "do not match this GPU"),
    "module name": ("ImportError: dynamic module does not define module export function (PyInit_opbench_x)",
                    "TORCH_EXTENSION_NAME"),
    "cutlass headers": ("kernel.cu:3:10: fatal error: cutlass/gemm/device/gemm.h: No such file or directory", "CUTLASS_DIR"),
    "cudnn link": ("undefined symbol: cudnnCreate", "-lcudnn"),
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

