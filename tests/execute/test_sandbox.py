"""Workers run in their own box (execute/sandbox): a staged copy of the solution, a scratch folder, a
content-keyed build cache, and, when the harness is root and Python is readable by other users, a
uid of their own that can reach nothing of the parent's (real workers, CPU). The container tests in
tests/launcher run the same trespasser in the image, where the separate uid is always available."""
from __future__ import annotations

import os
import re
import shutil
import stat
from pathlib import Path

import pytest
import yaml

import harness
from factories import axpy_document, solution
from harness.execute import sandbox
from harness.results.trace import Status
from harness.run.runner import Runner, RunOptions
from harness.spec.manifest import load_manifest

POLICY = sandbox.policy()


def _run(tmp: Path, sols: list[dict], cache: Path) -> tuple[dict, dict]:
    for folder in [tmp, *tmp.parents]:  # pytest's tmp folders are 0700: let worker uids reach the build cache
        if folder.stat().st_uid == os.geteuid():
            folder.chmod(folder.stat().st_mode | stat.S_IXOTH)
    path = tmp / "manifests" / "axpy.yaml"
    path.parent.mkdir()
    path.write_text(yaml.safe_dump(axpy_document(sols), sort_keys=False))
    os.environ["OPBENCH_CACHE_DIR"] = str(cache)
    try:
        report = Runner(load_manifest(path), RunOptions(device="cpu", run_seed=3, log_dir=tmp / "out" / "logs")).run()
    finally:
        del os.environ["OPBENCH_CACHE_DIR"]
    return {t.solution: t for t in report.traces}, report.environment["containment"]


def trespasses(log: str) -> dict[str, str]:
    return dict(re.findall(r"TRESPASS (.+): (allowed|denied)", log))


def test_the_worker_runs_a_staged_copy_in_its_scratch_folder(tmp_path: Path) -> None:
    where = tmp_path / "where.py"
    where.write_text("import os, pathlib\nprint('FILE', pathlib.Path(__file__).resolve(), 'CWD', os.getcwd(), flush=True)\n"
                     "def run(x, w):\n    return x * w + 1.0\n")
    traces, containment = _run(tmp_path, [{"name": "where", "language": "pytorch", "entry_point": f"{where}::run"}],
                               tmp_path / "cache")
    assert traces["where"].status == Status.PASSED, traces["where"].message
    file, cwd = re.search(r"FILE (\S+) CWD (\S+)", (tmp_path / "out" / "logs" / "where.log").read_text()).groups()
    assert Path(file).parent == Path(cwd) / "src" and Path(file).name == "where.py"
    assert not Path(cwd).exists(), "the scratch folder outlived its worker"
    assert containment["build_cache"] == str(tmp_path / "cache" / "build")
    assert {p.name.split("-")[0] for p in (tmp_path / "cache" / "build").iterdir()} == {"reference", "where"}


def test_jit_caches_live_in_the_solutions_build_folder_and_outlast_the_worker(tmp_path: Path) -> None:
    jit = tmp_path / "jit.py"
    jit.write_text("import os, pathlib\n"
                   f"names = {sorted(sandbox.jit_caches(Path('.')))!r}\n"
                   "build = pathlib.Path(os.environ['OPBENCH_BUILD_DIR']).parent\n"
                   "outside = [n for n in names if build not in pathlib.Path(os.environ[n]).parents]\n"
                   "runs = pathlib.Path(os.environ['TILELANG_CACHE_DIR']) / 'runs'\n"
                   "runs.write_text(str(int(runs.read_text()) + 1 if runs.exists() else 1))\n"
                   "print('OUTSIDE', outside, 'RUNS', runs.read_text(), flush=True)\n"
                   "def run(x, w):\n    return x * w + 1.0\n")
    sols = [{"name": "jit", "language": "pytorch", "entry_point": f"{jit}::run"}]
    for _ in range(2):  # a second run of the same code finds what the first one's JIT left
        traces, _ = _run(tmp_path, sols, tmp_path / "cache")
        assert traces["jit"].status == Status.PASSED, traces["jit"].message
        shutil.rmtree(tmp_path / "manifests")
    log = (tmp_path / "out" / "logs" / "jit.log").read_text()
    assert "OUTSIDE [] RUNS 2" in log, log


def test_build_cache_is_keyed_by_content() -> None:
    assert sandbox.content_key("a b", [b"x"]) == sandbox.content_key("a b", [b"x"])
    assert sandbox.content_key("a b", [b"x"]) != sandbox.content_key("a b", [b"y"])
    assert sandbox.content_key("a", [b"xy"]) != sandbox.content_key("a", [b"x", b"y"])  # parts are length-framed
    assert "/" not in sandbox.content_key("../../etc", [])


def test_python_under_a_closed_home_keeps_the_parents_uid(tmp_path: Path) -> None:
    closed = tmp_path / "home"
    (closed / "lib").mkdir(parents=True)
    (closed / "lib" / "python").write_text("")
    closed.chmod(0o700)
    assert not sandbox._readable_by_others(closed / "lib" / "python")
    closed.chmod(0o755)
    (closed / "lib" / "python").chmod(0o644)
    tmp_path.chmod(tmp_path.stat().st_mode | stat.S_IXOTH)
    ok = all(os.stat(p).st_mode & stat.S_IXOTH for p in tmp_path.parents)
    assert sandbox._readable_by_others(closed / "lib" / "python") == ok


def test_policy_says_why(monkeypatch: pytest.MonkeyPatch) -> None:
    pol = sandbox.policy()
    assert pol.why and pol.to_dict()["separate_worker_uid"] == pol.separate_uid
    if os.geteuid() != 0:
        assert not pol.separate_uid and "root" in pol.why


@pytest.mark.skipif(not POLICY.separate_uid, reason=f"no separate worker uid here: {POLICY.why}")
def test_a_trespasser_reaches_nothing_outside_its_box(tmp_path: Path) -> None:
    before = {p for p in Path(harness.__file__).parent.rglob("*")}
    traces, containment = _run(tmp_path, [solution("trespasser", "trespasser.py"), solution("honest", "good.py")],
                               tmp_path / "cache")
    assert containment["separate_worker_uid"] is True
    assert traces["trespasser"].status == Status.PASSED and traces["honest"].status == Status.PASSED
    tried = trespasses((tmp_path / "out" / "logs" / "trespasser.log").read_text())
    assert {"harness source", "output folder", "own log by path", "parent memory",
            "signal a sibling worker", "signal the parent", "build cache listing"} <= set(tried)
    assert {k for k, v in tried.items() if v == "allowed"} == set(), tried
    assert {p for p in Path(harness.__file__).parent.rglob("*")} == before
    assert sorted(p.name for p in (tmp_path / "out").rglob("*")) == ["honest.log", "logs", "reference.axpy.log",
                                                                     "trespasser.log"]
