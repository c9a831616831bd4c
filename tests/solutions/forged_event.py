"""Hostile (CUDA): swaps torch.cuda.Event for a subclass whose elapsed_time reports a third. The
tamper guard compares the functions it captured before the import with what torch.cuda.Event now
holds: TAMPERED (and the default CUPTI timer does not read events at all)."""
import torch


class _Event(torch.cuda.Event):
    def elapsed_time(self, end_event):
        return super().elapsed_time(end_event) / 3


torch.cuda.Event = _Event


def run(x, w):
    return x * w + 1.0
