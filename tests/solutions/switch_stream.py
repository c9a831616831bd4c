"""CUDA only: computes its output on the caller's stream, then switches the current stream for good
(`torch.cuda.set_stream`, no context manager) and queues heavy, unasked-for work there, unjoined. A
marker recorded on "the current stream" after the call would land on the solution's stream and time
that work as part of nothing; the harness re-enters its own stream for every step, so the work shows
as escaped from the timed window."""
import torch

_stream = None


def run(x, w):
    global _stream
    if _stream is None:
        _stream = torch.cuda.Stream()
    y = x * w + 1.0
    _stream.wait_stream(torch.cuda.current_stream())
    torch.cuda.set_stream(_stream)
    m = x.view(1024, -1)
    busy = m @ m.T
    for _ in range(24):
        busy = busy @ busy * 1e-3
    return y
