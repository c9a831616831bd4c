"""Writes the start of a reply frame (a length, then a few of the bytes it promises) into the
worker's reply pipe and stops: the parent must not wait past its deadline. Must end as TIMEOUT."""
import os
import struct
import sys
import time


def _local(name):
    frame = sys._getframe(1)
    while frame is not None:
        if name in frame.f_locals:
            return frame.f_locals[name]
        frame = frame.f_back
    return None


def run(x, w):
    os.write(_local("conn").fileno(), struct.pack("!Q", 1000) + b"0123456789")
    time.sleep(3600)
