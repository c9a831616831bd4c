"""Honest: torch.compile, whose inductor keeps a thread pool alive after compiling. That pool's
idle thread must not be taken for hidden work (a busy one would be)."""
import torch


@torch.compile
def run(x, w):
    return x * w + 1.0
