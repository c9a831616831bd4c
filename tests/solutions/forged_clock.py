"""Hostile: reports a third of its real time by scaling the CPU timer's elapsed time, a function the
tamper guard does not watch (anything in the process can be patched). Only the parent's own clock,
in another process, can tell: TAMPERED on the CPU."""
import torch

from harness.measure.devices import cpu

_real = cpu.CpuEvent.elapsed_ms
cpu.CpuEvent.elapsed_ms = lambda self, end: _real(self, end) / 3


def run(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    y = x * w + 1.0
    for _ in range(3):  # three times the reference's work, reported as one
        y = (y + x * w + 1.0) * 0.5
    return y
