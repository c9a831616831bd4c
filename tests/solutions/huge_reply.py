"""Hostile: announces a 1 TiB reply in the worker's pipe and keeps writing. The parent reads the
length, refuses it unread and kills the worker: TAMPERED, and the parent's memory does not grow."""
import os
import struct
import sys


def _local(name):
    frame = sys._getframe(1)
    while frame is not None:
        if name in frame.f_locals:
            return frame.f_locals[name]
        frame = frame.f_back
    return None


def run(x, w):
    fd = _local("conn").fileno()
    os.write(fd, struct.pack("!Q", 1 << 40))
    while True:
        os.write(fd, b"\0" * (1 << 20))
