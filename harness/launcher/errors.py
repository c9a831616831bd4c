"""What the launcher refuses to do, with the exit code the command line returns (`harness.errors`)."""
from __future__ import annotations

from harness.errors import BAD_INPUT, MACHINE, OpbenchError

ENVIRONMENT = MACHINE  # the machine cannot do it: no engine, image build or push failed


class LaunchError(OpbenchError):
    """A clear, user-facing reason the launch cannot go ahead; `code` is 2 (bad request) or 3 (machine)."""

    def __init__(self, message: str, code: int = BAD_INPUT) -> None:
        super().__init__(message)
        self.exit_code = code
