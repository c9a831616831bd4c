import torch


def run(x, w):
    return (x * w + 1.0).to(torch.float64)
