"""A 16-element copy in cuTile, compiled before a cutile solution runs: cuda.tile compiles on a
solution's first call, so a compiler that cannot work here (the tileiras wheel without the libnvvm and
ptxas of its own version beside it: exit 5, "failed to compile Tile IR program", on the H100 on
2026-12-05) would make every call the solution's RUNTIME_ERROR; compiled first, it is the machine's
UNSUPPORTED with the reason."""
from __future__ import annotations

import io

import cuda.tile as ct


@ct.kernel
def opbench_copy(x, y):
    ct.store(y, index=(0,), tile=ct.load(x, index=(0,), shape=(16,)))


def compile_error(arch: str) -> str | None:
    """None when cuda.tile's compiler turns the copy into a cubin for `arch` (e.g. "sm_90"), else its
    words. A cuda-tile without the export API (before 1.7) is not probed."""
    try:
        from cuda.tile.compilation import ArrayConstraint, CallingConvention, KernelSignature, export_kernel
    except ImportError:
        return None
    array = ArrayConstraint(ct.float32, 1, index_dtype=ct.int32, stride_lower_bound_incl=0, alias_groups=(),
                            may_alias_internally=False)
    signature = KernelSignature([array, array], CallingConvention.cutile_python_v1())
    try:
        export_kernel(opbench_copy, [signature], io.BytesIO(), gpu_code=arch, output_format="cubin")
    except Exception as exc:  # the compiler's own error types differ between cuda-tile versions
        return f"{type(exc).__name__}: {exc}".strip()
    return None
