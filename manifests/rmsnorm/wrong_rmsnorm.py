import torch


def rmsnorm(x: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    xf = x.float()
    scale = xf.abs().mean(dim=-1, keepdim=True) + 1e-6  # bug on purpose: mean |x| is not the RMS
    return (xf / scale * weight.float()).to(x.dtype)
