import torch


def run(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    return x * w + 1.0
