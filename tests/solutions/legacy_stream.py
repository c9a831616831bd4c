"""CUDA only, honest: computes on the legacy default stream (stream 0), as a `kernel<<<grid, block>>>`
launch with no stream argument or a CuTe DSL call with none does (SOL-ExecBench's flux_rope and
jamba_attn_proj examples). That work is the call's own and joins nothing explicitly; the harness
stream waits for stream 0 implicitly, so it must be timed inside the call: PASSED, not HIDDEN_WORK."""
import torch


def run(x, w):
    with torch.cuda.stream(torch.cuda.default_stream()):
        y = x * w + 1.0
    return y
