"""RMSNorm as a torch-module operator (a no-argument Model), for `opbench bench-gen` and `run-bench`."""
import torch


class Model(torch.nn.Module):
    def __init__(self, hidden: int = 4096, eps: float = 1e-6):
        super().__init__()
        self.eps = eps
        self.weight = torch.nn.Parameter(torch.ones(hidden))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def get_inputs():
    """One case's inputs, on the device the bench runs on (KernelBench's convention)."""
    device = "cuda" if torch.cuda.is_available() else "cpu"
    return [torch.randn(2048, 4096, device=device)]
