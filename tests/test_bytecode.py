"""Bytecode kept in opbench's cache where torch has none beside its source: the parent compiles once and
every later process (the next run's parent, its workers) reads it; a folder others could write is never
used, and a machine whose modules have their bytecode is left as it is. Each case runs in its own
interpreter, since `use_cache` sets this process's import state."""
from __future__ import annotations

import os
import py_compile
import subprocess
import sys
from pathlib import Path

from harness.paths import child_env

USE = """import os, sys
sys.path.insert(0, {src!r})
from pathlib import Path
from harness import bytecode
folder = bytecode.use_cache(Path({root!r}), probe="probe_mod")
import probe_mod
print(folder, sys.pycache_prefix, os.environ.get("PYTHONPYCACHEPREFIX"), sys.dont_write_bytecode, probe_mod.VALUE)
"""


def use(src: Path, root: Path) -> str:
    """The script that keeps bytecode under `root` and imports `src`'s probe module."""
    return USE.format(src=str(src), root=str(root))


def run(code: str, **env: str | None) -> list[str]:
    """`code`'s printed words; `env` over this environment (None: unset) with PYTHONDONTWRITEBYTECODE=1, as
    on a machine whose torch has no bytecode beside it."""
    merged = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "PYTHONPYCACHEPREFIX": None, **env}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          env=child_env({k: v for k, v in merged.items() if v is not None}))
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.split()


def module(tmp_path: Path) -> Path:
    src = tmp_path / "src"
    src.mkdir()
    (src / "probe_mod.py").write_text("VALUE = 1\n")
    return src


def test_the_parent_compiles_once_into_the_cache_and_the_next_process_reads_it(tmp_path: Path) -> None:
    src, root = module(tmp_path), tmp_path / "cache"
    folder, prefix, env, no_write, value = run(use(src, root))
    assert folder == prefix == env == str(root / "pycache") and no_write == "False" and value == "1"
    assert len(list((root / "pycache").rglob("probe_mod.*.pyc"))) == 1 and not (src / "__pycache__").exists()
    # new source of the same size and mtime: Python takes the kept bytecode as current, so the next process,
    # reading it rather than compiling the source, still sees the old value
    source = src / "probe_mod.py"
    stamp = source.stat()
    source.write_text("VALUE = 2\n")
    os.utime(source, ns=(stamp.st_atime_ns, stamp.st_mtime_ns))
    assert run(use(src, root))[-1] == "1"


def test_a_worker_reads_the_cache_but_never_writes(tmp_path: Path) -> None:
    src, root = module(tmp_path), tmp_path / "cache"
    (src / "child_probe.py").write_text(
        "import sys\ndef report(conn):\n    conn.send((sys.flags.dont_write_bytecode, sys.pycache_prefix))\n")
    code = use(src, root) + (
        "import child_probe\nfrom harness.execute import spawn\n"
        "proc, conn = spawn.process(child_probe.report, (), 'probe')\nprint(*conn.recv())\nproc.join(60)\n")
    out = run(code, PYTHONDONTWRITEBYTECODE=None)
    assert out[-2:] == ["1", str(root / "pycache")]


def test_modules_with_their_bytecode_and_a_users_own_prefix_are_left_as_they_are(tmp_path: Path) -> None:
    src, root = module(tmp_path), tmp_path / "cache"
    py_compile.compile(str(src / "probe_mod.py"), doraise=True)
    assert run(use(src, root))[:2] == ["None", "None"]
    (src / "__pycache__").rename(tmp_path / "elsewhere")
    mine = str(tmp_path / "mine")
    assert run(use(src, root), PYTHONPYCACHEPREFIX=mine)[:2] == ["None", mine]
    assert not root.exists()


def test_a_cache_folder_others_can_write_is_not_used(tmp_path: Path) -> None:
    src, root = module(tmp_path), tmp_path / "cache"
    root.mkdir()
    root.chmod(0o777)
    assert run(use(src, root))[:2] == ["None", "None"]
    assert not (root / "pycache").exists()
    root.chmod(0o755)
    (root / "pycache").mkdir()
    (root / "pycache").chmod(0o775)
    assert run(use(src, root))[:2] == ["None", "None"]
    (root / "pycache").chmod(0o755)  # a umask that lets others write the folders Python makes below it
    assert run("import os; os.umask(0o002)\n" + use(src, root))[:2] == ["None", "None"]
    assert run(use(src, root))[0] == str(root / "pycache")


def test_what_only_workers_import_is_compiled_into_the_cache_behind_the_parent(tmp_path: Path) -> None:
    src, root = module(tmp_path), tmp_path / "cache"
    (src / "worker_pkg").mkdir()
    (src / "worker_pkg" / "__init__.py").write_text("")
    (src / "worker_pkg" / "deep.py").write_text("X = 1\n")
    behind = ("proc = bytecode.compile_behind(['worker_pkg', 'not_installed_anywhere'])\n"
              "print(proc.wait() if proc else 'none')\n")
    assert run(use(src, root) + behind)[-1] == "0"
    assert len(list((root / "pycache").rglob("deep.*.pyc"))) == 1 and not (src / "worker_pkg" / "__pycache__").exists()
    # where nothing is kept in a prefix (the modules have their bytecode beside them) nothing is started
    py_compile.compile(str(src / "probe_mod.py"), doraise=True)
    assert run(use(src, tmp_path / "other") + behind)[-1] == "none"
