import torch


def run(x, w):
    return torch.empty(1 << 60, dtype=torch.uint8)  # far more memory than any host has
