"""Correct but about 8x the reference's work: it must never be reported faster than the reference."""
import torch


def run(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    y = x * w + 1.0
    for _ in range(7):
        y = (x * w + 1.0) + (y - y)  # the same value, recomputed
    return y
