"""CUDA only, honest: captures its computation in a CUDA graph on the first call and replays it,
copying the graph's static output out. Inputs are redrawn in place, so the graph (which holds their
addresses) computes on each call's values; replay runs on the current stream, inside the window."""
import torch

_graphs = {}


def run(x, w):
    key = (x.data_ptr(), w.data_ptr(), x.numel())
    if key not in _graphs:
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            x * w + 1.0  # warm up the kernels outside the capture
        torch.cuda.current_stream().wait_stream(s)
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            out = x * w + 1.0
        _graphs[key] = (g, out)
    g, out = _graphs[key]
    g.replay()
    return out.clone()
