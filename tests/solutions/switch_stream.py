"""CUDA only: switches the current stream for good (`torch.cuda.set_stream`, no context manager) and
queues its real work there, unjoined: a bracket recorded on "the current stream" after the call would
sit on the solution's stream. The harness re-enters its own stream for every step, so the work shows
as escaped from the timed window."""
import torch

_stream = None


def run(x, w):
    global _stream
    if _stream is None:
        _stream = torch.cuda.Stream()
    _stream.wait_stream(torch.cuda.current_stream())
    torch.cuda.set_stream(_stream)
    m = x.view(1024, -1)
    busy = m @ m.T
    for _ in range(24):  # heavy, unasked-for work on the switched-to stream
        busy = busy @ busy * 1e-3
    return torch.add(x * w, 1.0)
