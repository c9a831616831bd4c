"""One family of errors, each knowing the exit code the command line returns for it.

Code raises the most specific error where the problem is found; `cli.main` maps it to a message
and an exit code once. 1 is never an error's code: it means a run finished and some solution got a
status it was not expected to get.
"""
from __future__ import annotations

BAD_INPUT = 2    # nothing was run because the request was wrong: manifest, options, device, report
MACHINE = 3      # the machine cannot do it: no Docker engine, image build or push failed


class OpbenchError(Exception):
    """Base of every error opbench reports to a user; `lines()` is what the terminal shows."""

    exit_code = BAD_INPUT

    def lines(self) -> list[str]:
        return [f"error: {self}"]


class InputError(OpbenchError):
    """The user's input is wrong (manifest, suite, option, device request, report file)."""


class MachineError(OpbenchError):
    """This machine cannot do what was asked (missing engine, toolchain, failed build)."""

    exit_code = MACHINE


def require_torch(what: str) -> None:
    """Running needs torch; reading reports does not, so the package does not pull it in."""
    import importlib.util
    try:
        found = importlib.util.find_spec("torch") is not None
    except (ImportError, ValueError):
        found = False
    if not found:
        raise MachineError(f"{what} needs torch, which is not installed here: pip install 'opbench[torch]', or the "
                           "CUDA / torch_npu build for this device (report, merge, compare and validate need none)")
