"""What keeps a solution's processes inside the box the parent drew for them (Linux; elsewhere no-ops).

- Each worker leads its own session (`os.setsid` before any solution code runs), so the parent can
  stop, resume and kill it with everything it started as one process group.
- The parent is a child subreaper: a process a solution double-forks away from its worker is
  re-parented to the harness instead of init, so the parent can still find it and kill it.
- The parent is not dumpable: a worker of the same user cannot open `/proc/<parent>/mem` or ptrace it.
- `kill_strays` kills every descendant of the parent that is not a live worker; the run path calls it
  before a report is written, so nothing a solution left behind can touch the report afterwards.
"""
from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import time
from typing import Iterable, Iterator

PR_SET_DUMPABLE = 4
PR_SET_CHILD_SUBREAPER = 36


def _prctl(option: int, value: int) -> bool:
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(option, value, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def guard_parent() -> dict[str, bool]:
    """Make this (the trusted) process a subreaper that no worker can read or ptrace; what took effect."""
    return {"child_subreaper": _prctl(PR_SET_CHILD_SUBREAPER, 1), "not_dumpable": _prctl(PR_SET_DUMPABLE, 0)}


def _stat(pid: int) -> tuple[str, int, int, int] | None:
    """(state, parent pid, process group, session) from /proc/<pid>/stat; None if it is gone. Raw reads:
    the parent scans every process at each sweep and each idle side's re-scan, and pathlib made a scan of
    200 processes cost 14 ms of the parent's time on the H100 host (5.6 s of a 36 s run, 2026-12-07)."""
    try:
        fd = os.open(f"/proc/{pid}/stat", os.O_RDONLY)
        try:
            raw = os.read(fd, 4096)
        finally:
            os.close(fd)
        fields = raw[raw.rindex(b")") + 2:].split(None, 4)  # the command name may hold spaces and parentheses
        return fields[0].decode(), int(fields[1]), int(fields[2]), int(fields[3])
    except (OSError, ValueError, IndexError):
        return None


def _processes() -> dict[int, tuple[str, int, int, int]]:
    try:
        names = os.listdir("/proc")
    except OSError:
        return {}
    return {int(name): st for name in names if name.isdigit() and (st := _stat(int(name))) is not None}


def descendants(root: int, table: dict[int, tuple[str, int, int, int]] | None = None) -> set[int]:
    """Every live process below `root` in the process tree (`table`: one scan of /proc, else a new one)."""
    table = _processes() if table is None else table
    children: dict[int, list[int]] = {}
    for pid, (_, ppid, _, _) in table.items():
        children.setdefault(ppid, []).append(pid)
    found: set[int] = set()
    todo = list(children.get(root, ()))
    while todo:
        pid = todo.pop()
        if pid not in found:
            found.add(pid)
            todo.extend(children.get(pid, ()))
    return found


def session_members(sid: int) -> set[int]:
    """Live processes of session `sid` (a worker's session: its pid), wherever they were re-parented."""
    return {pid for pid, (_, _, _, s) in _processes().items() if s == sid}


def _kill_and_reap(pids: Iterable[int], wait_s: float = 5.0) -> None:
    pids = set(pids)
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + wait_s
    while pids and time.monotonic() < deadline:
        for pid in list(pids):
            with contextlib.suppress(ChildProcessError):
                if os.waitpid(pid, os.WNOHANG)[0]:  # our child (or re-parented to us): reap it
                    pids.discard(pid)
                    continue
            st = _stat(pid)
            if st is None or st[0] == "Z":  # gone, or dead and waiting for a parent that is not us
                pids.discard(pid)
        time.sleep(0.01)


def _own_helpers() -> set[int]:
    """Processes the harness itself starts lazily: multiprocessing's resource tracker (spawned workers)."""
    from multiprocessing import resource_tracker
    pid = getattr(getattr(resource_tracker, "_resource_tracker", None), "_pid", None)
    return {pid} if isinstance(pid, int) else set()


def kill_session(leader: int) -> None:
    """Kill worker `leader` and everything it started that still belongs to its session."""
    _kill_and_reap({leader} | session_members(leader))


def kill_strays(keep: Iterable[int] = ()) -> list[int]:
    """Kill every descendant of this process not in `keep` (with their own descendants); the pids killed.

    Called with no live workers before a report is written: a process a solution left behind (a
    daemon, a double fork the subreaper caught) must not outlive the run it could still tamper with."""
    me = os.getpid()
    keep = set(keep) | _own_helpers()
    killed: set[int] = set()
    for _ in range(3):
        # this process's tree first, the kept ones after: a child a kept process (a build's ninja) starts
        # between the two scans is in the second only, not taken for a stray (the other order killed 10
        # of a build's children in 1,800 sweeps on the dev VM). A kept worker leads its own session, which
        # no other process can join: what it started and then orphaned (re-parented to this subreaper) is
        # still its session's. A stray's child started meanwhile comes back as an orphan: the next round.
        found = descendants(me)
        table = _processes()
        spared = set(keep) | {pid for pid, (_, _, _, sid) in table.items() if sid in keep}
        for pid in keep:
            spared |= descendants(pid, table)
        strays = found - spared - killed
        if not strays:
            break
        _kill_and_reap(strays)
        killed |= strays
    return sorted(killed)


@contextlib.contextmanager
def stopped(leader: int | None, members: Iterable[int] = ()) -> Iterator[None]:
    """The worker `leader`, its process group and `members` (its session, as last scanned) frozen
    (SIGSTOP) for the block: an idle worker's threads, or work a solution hid in processes it started,
    cannot take CPU or device time from the one being timed."""
    if leader is None:
        yield
        return
    pids = {leader, *members}
    _signal(leader, pids, signal.SIGSTOP)
    _until_stopped(pids)
    try:
        yield
    finally:
        _signal(leader, pids, signal.SIGCONT)


# How long `stopped` waits for its processes to take the stop: one in uninterruptible sleep (D) takes it only
# when its call returns, and the block must not wait on that.
STOP_WAIT_S = 0.02


def _until_stopped(pids: set[int]) -> None:
    """Return once each of `pids` is stopped or gone, or after STOP_WAIT_S. SIGSTOP is taken when the
    process next runs: one the SIGCONT before had just woken, or one waiting for a core, reads R for a while
    (a build seen running at the first timed call after a thaw on the 2-core CI machine, 2026-12-07)."""
    deadline = time.monotonic() + STOP_WAIT_S
    while True:
        pids = {pid for pid in pids if (st := _stat(pid)) is not None and st[0] not in "TtZX"}
        if not pids or time.monotonic() > deadline:
            return
        time.sleep(0.0002)  # a core for them to take the signal on


def _signal(leader: int, pids: set[int], sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(leader, sig)  # one call for the worker's own process group
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, sig)
