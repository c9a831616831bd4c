"""Hostile: reports a third of its real time by scaling the CPU timer's elapsed time, a function the
tamper guard does not watch (anything in the process can be patched). The hidden-work probe, which
times one call with the host clock against the same events, sees the difference: HIDDEN_WORK.
(A forger who also patches the probe is the residual risk the README states.)"""
import torch

from harness.measure.devices import cpu

_real = cpu.CpuEvent.elapsed_ms
cpu.CpuEvent.elapsed_ms = lambda self, end: _real(self, end) / 3


def run(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    y = x * w + 1.0
    for _ in range(7):  # eight times the reference's work, reported as a third of it
        y = (y + x * w + 1.0) * 0.5
    return y
