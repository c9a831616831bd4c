"""CUDA only: does the real work on a private high-priority stream and never joins it back, so the
harness stream's events see almost nothing. Few, heavy launches: the host returns long before the
device is done, as in the cheats seen on public leaderboards."""
import torch

_stream = None


def run(x, w):
    global _stream
    if _stream is None:
        _stream = torch.cuda.Stream(priority=-1)
    y = torch.empty_like(x)
    _stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(_stream):
        m = x.view(1024, -1)
        busy = m @ m.T
        for _ in range(24):  # ~1 ms of matmuls nobody asked for: visible work, on the wrong stream
            busy = busy @ busy * 1e-3
        torch.add(x * w, 1.0, out=y)
    return y
