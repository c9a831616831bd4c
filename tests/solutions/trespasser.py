"""Hostile: at import, reaches for everything outside its sandbox and prints one line per attempt,
`TRESPASS <what>: allowed|denied`, into its log; then computes y = x * w + 1 honestly.

Targets: the harness source (a planted .pyc), the manifest tree (found from the parent's command
line), the output folder (found from its own log's path), the site-packages, the build cache's
listing, the parent's memory, and a signal to every sibling worker (signal 0: permission only)."""
import os
import signal
from pathlib import Path


def _try(what, action):
    try:
        action()
        print(f"TRESPASS {what}: allowed", flush=True)
    except OSError:
        print(f"TRESPASS {what}: denied", flush=True)


def _parent_paths():
    raw = Path(f"/proc/{os.getppid()}/cmdline").read_bytes().split(b"\0")
    return [Path(a.decode()) for a in raw if a.endswith((b".yaml", b".yml"))]


def _write(path):
    def action():
        with open(path, "w") as fh:
            fh.write("trespass\n")
    return action


def _attempts():
    import harness
    import torch
    _try("harness source", _write(Path(harness.__file__).parent / "__pycache__" / "opbench_trespass.cpython.pyc"))
    _try("site-packages", _write(Path(torch.__file__).parent / "opbench_trespass.txt"))
    for manifest in _parent_paths():
        _try("manifest tree", _write(manifest.resolve().parent / "opbench_trespass.txt"))
    log = Path(os.readlink("/proc/self/fd/1"))
    _try("output folder", _write(log.parent.parent / "opbench_trespass.json"))
    _try("own log by path", _write(log))
    cache = os.environ.get("OPBENCH_BUILD_DIR")
    if cache:
        _try("build cache listing", lambda: os.listdir(Path(cache).parent.parent))
    _try("parent memory", lambda: open(f"/proc/{os.getppid()}/mem", "rb").close())
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) != os.getpid():
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            if ppid == os.getppid():
                _try("signal a sibling worker", lambda pid=int(entry.name): os.kill(pid, 0))
    _try("signal the parent", lambda: os.kill(os.getppid(), 0))


_attempts()


def run(x, w):
    return x * w + 1.0
