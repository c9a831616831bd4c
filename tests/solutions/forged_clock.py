"""Hostile: reports a third of its real time by scaling the CPU timer's elapsed time. The tamper guard
watches every function on the path from a sample to the reply, this one included: TAMPERED at import.
(Before it did, the hidden-work probe caught it as HIDDEN_WORK; a forger patching memory under the
watched functions is the residual risk the README states.)"""
import torch

from harness.measure.devices import cpu

_real = cpu.CpuEvent.elapsed_ms
cpu.CpuEvent.elapsed_ms = lambda self, end: _real(self, end) / 3


def run(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    y = x * w + 1.0
    for _ in range(7):  # eight times the reference's work, reported as a third of it
        y = (y + x * w + 1.0) * 0.5
    return y
