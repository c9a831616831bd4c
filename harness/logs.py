"""Reading the end of a log a solution wrote: by seeking, so a huge log costs what the tail costs."""
from __future__ import annotations

import os
from pathlib import Path


def tail_of(path: Path, limit: int = 2000) -> str:
    """The last `limit` characters (about) of `path`, decoded leniently; '' when it cannot be read."""
    try:
        with open(path, "rb") as fh:
            fh.seek(0, os.SEEK_END)
            size = fh.tell()
            fh.seek(max(0, size - limit * 4))
            return fh.read().decode(errors="replace")[-limit:].strip()
    except OSError:
        return ""
