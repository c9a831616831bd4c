import ctypes


def run(x, w):
    ctypes.string_at(0)  # segmentation fault: the worker dies, the harness must not
