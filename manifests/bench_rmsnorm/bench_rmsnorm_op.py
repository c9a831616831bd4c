# api-name: rmsnorm
# api-kind: triton-wrapper
# kernels: rmsnorm
"""Bench module for rmsnorm_op.rmsnorm: the profiler counts `rmsnorm_kernel` (`<name>_kernel` rule)."""
import torch

SHAPES = [(16, 512), (256, 4096), (2048, 8192), (4096, 4096)]


def build_operator_api(operator_module):
    return operator_module.rmsnorm


def build_bench_cases():
    return [{"id": f"b{b}-h{h}-bf16", "batch": b, "hidden": h, "seed": i} for i, (b, h) in enumerate(SHAPES)]


def build_bench_case_fn(operator_api, case):
    device = "npu" if hasattr(torch, "npu") and torch.npu.is_available() else "cuda"
    x = torch.randn(case["batch"], case["hidden"], device=device, dtype=torch.bfloat16)
    w = torch.rand(case["hidden"], device=device, dtype=torch.bfloat16) + 0.5
    return lambda: operator_api(x, w)
