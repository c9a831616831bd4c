# api-name: Model
# api-kind: torch-module
# kernels: Model
"""Bench module for rmsnorm_model.Model, written by `opbench bench-gen` (edit the cases freely; keep the hooks).

The operator launches no kernel of its own (its device work is torch's), so the header names
the entrypoint: profiler modes time it with `run-bench -m total-op` (all device work of a call).
"""
import torch

CASES = [{'id': 'get_inputs', 'seed': 0}]


def _device():
    if hasattr(torch, "npu") and torch.npu.is_available():
        return "npu"
    return "cuda" if torch.cuda.is_available() else "cpu"


def build_operator_api(operator_module):
    return operator_module.Model


def build_bench_cases():
    return [dict(case) for case in CASES]


def build_bench_case_fn(operator_api, case):
    import importlib
    torch.manual_seed(case["seed"])
    inputs = importlib.import_module(operator_api.__module__).get_inputs()
    args = [a.to(_device()) if isinstance(a, torch.Tensor) else a for a in inputs]
    return lambda: operator_api(*args)
