"""A command ends without the interpreter's teardown, but with its exit handlers run and its output
flushed: what a caller reads (the exit code, the last lines in a pipe) is the same as with `sys.exit`."""
from __future__ import annotations

import subprocess
import sys

from harness.paths import child_env

CODE = """import atexit, sys
from harness.cli.exit import exit_with
atexit.register(lambda: print("handler ran"))
sys.stdout.write("buffered, no newline")
sys.stderr.write("err too")
exit_with(3)
"""


def test_exit_with_runs_the_handlers_and_flushes_into_a_pipe() -> None:
    proc = subprocess.run([sys.executable, "-c", CODE], capture_output=True, text=True, env=child_env(), timeout=120)
    assert proc.returncode == 3
    assert proc.stdout == "buffered, no newlinehandler ran\n" and proc.stderr == "err too"


def test_python_m_harness_exits_with_the_commands_code() -> None:
    proc = subprocess.run([sys.executable, "-m", "harness", "validate", "no-such.yaml"], capture_output=True,
                          text=True, env=child_env(), timeout=120)
    assert proc.returncode == 2 and "no-such.yaml" in proc.stderr
