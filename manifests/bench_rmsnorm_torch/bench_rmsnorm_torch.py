# api-name: rmsnorm
# api-kind: torch-function
# kernels: aten::rms_norm
"""Bench module for rmsnorm_torch.rmsnorm. On the CPU, torch.profiler names ops, so the 'kernel'
counted by the torch-profiler mode is the aten op; device modes would name device kernels."""
import torch

SHAPES = [(16, 512), (256, 4096)]


def _device() -> str:
    if hasattr(torch, "npu") and torch.npu.is_available():
        return "npu"
    return "cuda" if torch.cuda.is_available() else "cpu"


def build_operator_api(operator_module):
    return operator_module.rmsnorm


def build_bench_cases():
    return [{"id": f"b{b}-h{h}-fp32", "batch": b, "hidden": h, "repeats": 30} for b, h in SHAPES]


def build_bench_case_fn(operator_api, case):
    x = torch.randn(case["batch"], case["hidden"], device=_device())
    w = torch.rand(case["hidden"], device=_device()) + 0.5
    return lambda: operator_api(x, w)
