"""Leaves a process behind that escapes its worker's session (a double fork and setsid), and writes
its pid where the test can find it: the harness must kill it before the run returns."""
import os
import subprocess
import sys

import torch

ESCAPE = """
import os, sys, time
os.setsid()
pid = os.fork()
if pid:
    with open(sys.argv[1], "w") as fh:
        fh.write(str(pid))
    os._exit(0)
time.sleep(600)
"""
if os.environ.get("OPBENCH_TEST_PIDFILE"):
    subprocess.run([sys.executable, "-c", ESCAPE, os.environ["OPBENCH_TEST_PIDFILE"]], check=True)


def run(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    return x * w + 1.0
