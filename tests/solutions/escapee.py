"""Leaves a process behind that escapes its worker's session (a double fork and setsid), and prints
its pid into its log (`ESCAPEE <pid>`), where the test finds it: the harness must kill it before the
run returns."""
import subprocess
import sys

import torch

ESCAPE = """
import os, sys, time
os.setsid()
pid = os.fork()
if pid:
    print(f"ESCAPEE {pid}", flush=True)
    os._exit(0)
time.sleep(600)
"""
subprocess.run([sys.executable, "-c", ESCAPE], check=True)


def run(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    return x * w + 1.0
