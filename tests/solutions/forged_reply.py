"""Forges a timing reply: the first time it is called inside a `TimeChunk`, it writes a chunk of
negative samples (a kernel "faster than free") straight into the worker's reply pipe, found by
walking up the stack, so the parent reads it before the real reply. Must end as TAMPERED."""
import sys

from harness.execute import protocol

_sent = False


def _local(name):
    frame = sys._getframe(1)
    while frame is not None:
        if name in frame.f_locals:
            return frame.f_locals[name]
        frame = frame.f_back
    return None


def run(x, w):
    global _sent
    command = _local("command")
    if not _sent and isinstance(command, protocol.TimeChunk):
        forged = protocol.Chunk(samples=[-1.0] * command.n, clocks={})
        protocol.write_frame(_local("conn").fileno(), protocol.encode(forged))
        _sent = True
    return x * w + 1.0
