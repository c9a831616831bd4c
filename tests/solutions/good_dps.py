import torch


def run(x: torch.Tensor, w: torch.Tensor, y: torch.Tensor) -> None:
    torch.addcmul(torch.ones_like(x), x, w, out=y)
