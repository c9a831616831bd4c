"""Honest but careless: returns a view into a 256 MiB buffer. The worker sends only the view's
elements (the parent refuses replies far larger than the declared outputs), so this PASSES."""
import torch


def run(x, w):
    big = torch.empty(64 << 20, dtype=x.dtype)
    big[: x.numel()] = x * w + 1.0
    return big[: x.numel()]
