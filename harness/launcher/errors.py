"""One error type for everything the launcher refuses to do, with the exit code the CLI returns."""
from __future__ import annotations

BAD_INPUT = 2      # same meaning as `harness run`: nothing was run because the request was wrong
ENVIRONMENT = 3    # the machine cannot do it: no engine, image build or push failed


class LaunchError(Exception):
    """A clear, user-facing reason the launch cannot go ahead."""

    def __init__(self, message: str, code: int = BAD_INPUT) -> None:
        super().__init__(message)
        self.code = code
