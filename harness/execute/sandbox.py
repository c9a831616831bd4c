"""Where, and as whom, a worker runs: the only folders it can write are its own.

Each worker gets a scratch folder (its cwd, HOME and TMPDIR) and a build cache keyed by the content
of what it builds (nvcc/ninja and Triton output survive across runs; a solution can only ever write
the cache of code identical to its own). The solution's source files are staged, by the parent, into
the scratch folder, so the worker never needs the manifest tree.

When the harness runs as root (and in the image), each worker also gets an unprivileged uid of its
code's own (derived from the cache key: the reference and each solution differ) and
no supplementary groups beyond those owning device nodes. It then cannot write the workspace, the
harness source, the manifest tree or the output folder, cannot plant bytecode the parent would
import, and cannot signal, ptrace or read the memory of the parent or of another worker (the
reference included). When the interpreter is not readable by other users (a Python under a 0700
home), a separate uid could not even start Python: workers keep the parent's uid and the report says so.
Workers never write bytecode (`sys.dont_write_bytecode`), whatever their uid.
"""
from __future__ import annotations

import hashlib
import os
import shutil
import stat
import sys
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path

from harness.paths import cache_dir
from harness.spec.model import Solution

UID_BASE = 100_000        # worker uids: UID_BASE + a hash of the build-cache key (see make)
UID_SPAN = 1_000_000_000  # keeps uids below 2**31: some tools treat uids as signed
DEVICE_NODES = ("/dev/davinci*", "/dev/davinci_manager", "/dev/devmm_svm", "/dev/hisi_hdc", "/dev/nvidia*", "/dev/dri/*")


CPP_BUILDS = "cuda_cpp"  # a C++ solution's build folders, in its build cache (execute/solutions/cuda_cpp.py)

@dataclass(frozen=True)
class Policy:
    """Decided once per run by the parent: whether workers get their own uid, and why not if not."""

    separate_uid: bool
    why: str
    cache_root: Path

    def to_dict(self) -> dict[str, object]:
        return {"separate_worker_uid": self.separate_uid, "why": self.why, "build_cache": str(self.cache_root)}


def jit_caches(build: Path) -> dict[str, Path]:
    """Where each JIT compiler a solution may use keeps its cache: inside the solution's content-keyed build
    folder, so a warm run loads what the last one compiled (TileLang compiled rmsnorm's 4 shapes again in
    every run, 11.4 s of a 69 s warm make bench on the H100, when these lived in the worker's scratch) and a
    solution can only ever read or poison the cache of code identical to its own."""
    return {"XDG_CACHE_HOME": build / "cache", "TRITON_CACHE_DIR": build / "triton",
            "TORCH_EXTENSIONS_DIR": build / "torch_extensions", "TILELANG_CACHE_DIR": build / "tilelang",
            "TILELANG_TMP_DIR": build / "tilelang" / "tmp", "CUTE_DSL_CACHE_DIR": build / "cute_dsl",
            "TVM_FFI_CACHE_DIR": build / "tvm_ffi", "CUDA_CACHE_PATH": build / "nv_compute_cache"}


@dataclass(frozen=True)
class Sandbox:
    """One worker's box; `enter` runs in the worker before any solution code."""

    scratch: Path
    build: Path
    uid: int | None = None
    groups: tuple[int, ...] = ()

    def enter(self) -> None:
        sys.dont_write_bytecode = True
        env = {"HOME": self.scratch, "TMPDIR": self.scratch / "tmp", "PYTHONDONTWRITEBYTECODE": "1",
               "OPBENCH_BUILD_DIR": self.build / CPP_BUILDS, **jit_caches(self.build)}
        if self.uid is not None:
            env |= {"USER": f"opbench{self.uid}", "LOGNAME": f"opbench{self.uid}"}
            os.setgroups(list(self.groups))
            os.setresgid(self.uid, self.uid, self.uid)
            os.setresuid(self.uid, self.uid, self.uid)
        os.umask(0o077)
        for value in env.values():
            if isinstance(value, Path):
                value.mkdir(parents=True, exist_ok=True)
        os.environ.update({k: str(v) for k, v in env.items()})
        tempfile.tempdir = None  # re-read TMPDIR
        os.chdir(self.scratch)

    def remove(self) -> None:
        shutil.rmtree(self.scratch, ignore_errors=True)


def _readable_by_others(path: Path) -> bool:
    """Whether a user with no relation to the owner can reach and read `path` (mode bits of every folder up)."""
    try:
        path = path.resolve()
        for folder in path.parents:
            if not os.stat(folder).st_mode & stat.S_IXOTH:
                return False
        return bool(os.stat(path).st_mode & stat.S_IROTH)
    except OSError:
        return False


def policy() -> Policy:
    """Separate worker uids when this process is root and the Python stack is readable by other users."""
    root = cache_dir()
    if os.geteuid() != 0:
        return Policy(False, "the harness does not run as root, so workers keep its uid", root / "build")
    import harness
    import torch
    needed = [Path(sys.executable), Path(os.__file__), Path(harness.__file__), Path(torch.__file__)]
    closed = [str(p) for p in needed if not _readable_by_others(p)]
    if closed:
        return Policy(False, f"other users cannot read {', '.join(closed)}, so workers keep the parent's uid "
                             "(install Python where other users can read it, as the image does)", root / "build")
    return Policy(True, "each worker runs as its own unprivileged uid", root / "build")


def safe_name(label: str) -> str:
    """`label` as a plain file name: letters, digits, '-', '_' and '.', at most 40 characters."""
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in label)[:40].lstrip(".") or "_"


def content_key(label: str, parts: list[bytes]) -> str:
    """A build-cache folder name: the label made safe plus a hash of everything that decides the build."""
    h = hashlib.sha256()
    for part in parts:
        h.update(len(part).to_bytes(8, "little"))
        h.update(part)
    return f"{safe_name(label)}-{h.hexdigest()[:16]}"


def _device_groups() -> tuple[int, ...]:
    import glob
    gids = set()
    for pattern in DEVICE_NODES:
        for node in glob.glob(pattern):
            st = os.stat(node)
            if st.st_gid != 0 and st.st_mode & stat.S_IRWXG:
                gids.add(st.st_gid)
    return tuple(sorted(gids))


def make(pol: Policy, label: str, key: str) -> Sandbox:
    """A fresh scratch folder and the build cache for `key`, owned by the worker's uid."""
    scratch = Path(tempfile.mkdtemp(prefix=f"opbench-{safe_name(label)}-"))
    build = pol.cache_root / key
    if not pol.separate_uid:
        build.mkdir(parents=True, exist_ok=True)
        return Sandbox(scratch, build)
    pol.cache_root.mkdir(parents=True, exist_ok=True, mode=0o711)
    st = pol.cache_root.lstat()  # in a shared /var/tmp, another user could have made it first
    if st.st_uid != 0 or stat.S_ISLNK(st.st_mode):
        raise PermissionError(f"build cache folder {pol.cache_root} must be a folder owned by root")
    os.chmod(pol.cache_root, 0o711)  # workers reach their key's folder but cannot list the others
    build.mkdir(exist_ok=True)
    # One uid per content key: two runs of the same code at once (shards, devices) share its cache and
    # its uid; different code never shares either.
    uid = UID_BASE + int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "little") % UID_SPAN
    for path in (scratch, build):
        _chown_tree(path, uid)
    return Sandbox(scratch, build, uid, _device_groups())


def _chown_tree(root: Path, uid: int) -> None:
    os.chown(root, uid, uid, follow_symlinks=False)
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            os.chown(os.path.join(folder, name), uid, uid, follow_symlinks=False)


def stage_files(files: list[Path], box: Sandbox) -> dict[Path, Path]:
    """Copy `files` into the scratch folder, their layout kept (relative to their common folder);
    where each one went."""
    top = Path(os.path.commonpath([str(f.parent) for f in files]))
    dest = box.scratch / "src"
    moved: dict[Path, Path] = {}
    for f in files:
        target = dest / f.relative_to(top)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(f, target)
        moved[f] = target
    if box.uid is not None:
        _chown_tree(dest, box.uid)
    return moved


def stage(solution: Solution, box: Sandbox) -> Solution:
    """The solution with its files staged into the scratch folder (see `stage_files`)."""
    moved = stage_files([solution.entry_file, *solution.sources], box)
    return replace(solution, entry_file=moved[solution.entry_file], sources=tuple(moved[s] for s in solution.sources))


def _file_parts(files: list[Path]) -> list[bytes]:
    return [part for f in files for part in (f.name.encode(), f.read_bytes())]


def files_key(label: str, files: list[Path]) -> str:
    """The build-cache key of code made of `files` (their names and content)."""
    return content_key(label, _file_parts(files))


def solution_key(solution: Solution) -> str:
    """The build-cache key of a solution: its files, language and build options."""
    return content_key(solution.name, [solution.language.encode(), repr(sorted(solution.build.items())).encode(),
                                       *_file_parts([solution.entry_file, *solution.sources])])
