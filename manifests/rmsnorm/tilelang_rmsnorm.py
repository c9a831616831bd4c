"""RMSNorm in TileLang: one block of 128 threads per row, the row staged in shared memory, the sum of
squares reduced in fp32 registers, the result scaled by rsqrt(mean + eps) and the weight. One kernel
per (hidden, dtype), compiled on first use (tilelang caches it across runs); rows are a dynamic axis."""
import functools

import tilelang
import tilelang.language as T
import torch

EPS = 1e-6
DTYPES = {torch.bfloat16: "bfloat16", torch.float16: "float16", torch.float32: "float32"}


@functools.cache
def rmsnorm_kernel(hidden: int, dtype: str):
    rows = T.dynamic("rows")

    @T.prim_func
    def kernel(x: T.Tensor((rows, hidden), dtype), w: T.Tensor((hidden,), dtype), y: T.Tensor((rows, hidden), dtype)):
        with T.Kernel(rows, threads=128) as row:
            x_shared = T.alloc_shared((1, hidden), dtype)
            xf = T.alloc_fragment((1, hidden), "float32")
            squares = T.alloc_fragment((1, hidden), "float32")
            total = T.alloc_fragment((1,), "float32")
            T.copy(x[row:row + 1, :], x_shared)
            T.copy(x_shared, xf)
            for i, j in T.Parallel(1, hidden):
                squares[i, j] = xf[i, j] * xf[i, j]
            T.reduce_sum(squares, total, dim=1)
            for i in T.Parallel(1):
                total[i] = T.rsqrt(total[i] / hidden + EPS)
            for i, j in T.Parallel(1, hidden):
                x_shared[i, j] = T.cast(xf[i, j] * total[i] * T.cast(w[j], "float32"), dtype)
            T.copy(x_shared, y[row:row + 1, :])

    return tilelang.compile(kernel, out_idx=[2], target="cuda")


def rmsnorm(x: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    x, weight = x.contiguous(), weight.contiguous()
    return rmsnorm_kernel(x.shape[1], DTYPES[x.dtype])(x, weight)
