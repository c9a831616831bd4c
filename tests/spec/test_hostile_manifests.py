"""Hostile manifests: `validate` exits 2 with a message naming the file and field, never a hang, a
traceback or a file written outside the import cache.

Each input is built in tmp_path and checked through the real command line (`harness.cli.main`).
No test measures wall-clock time (that belongs in bench/); a hang fails by pytest-timeout instead.
"""
from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
import yaml

from harness.cli import main
from harness.results.html import render_html
from harness.results.render import render_markdown, render_table
from harness.results.trace import Status
from harness.spec.text import clean

from factories import axpy_document, solution
from opbench_data import report, trace

pytestmark = pytest.mark.timeout(60)


def validate(path: Path, capsys: pytest.CaptureFixture) -> tuple[int, str]:
    """`opbench validate PATH`: its exit code and what it wrote to stderr."""
    code = main(["validate", str(path)])
    return code, capsys.readouterr().err


def write(path: Path, doc: dict[str, Any]) -> Path:
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path


def axpy(tmp_path: Path, edit: Any = None, name: str = "manifest.yaml") -> Path:
    doc = axpy_document([solution("good", "good.py")])
    if edit:
        edit(doc)
    return write(tmp_path / name, doc)


# --- YAML and JSON files ---------------------------------------------------------------------------

def test_alias_bomb_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    lines = ["a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    for i in range(1, 10):  # 9 ** 10 strings once expanded
        lines.append(f"{chr(97 + i)}: &{chr(97 + i)} [" + ", ".join([f"*{chr(96 + i)}"] * 9) + "]")
    path = tmp_path / "bomb.yaml"
    path.write_text("\n".join(lines) + "\n")
    code, err = validate(path, capsys)
    assert code == 2
    assert "bomb.yaml" in err and "YAML alias" in err


def test_merge_key_bomb_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    lines = ["a: &a {x: 1, y: 2}"]  # `<<` merges copy their source's pairs: a bomb of its own
    lines += [f"k{i}: &k{i} {{<<: [{', '.join([f'*k{i - 1}' if i else '*a'] * 9)}]}}" for i in range(12)]
    path = tmp_path / "merge.yaml"
    path.write_text("\n".join(lines) + "\n")
    code, err = validate(path, capsys)
    assert code == 2 and "YAML alias" in err


def test_recursive_alias_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    path = tmp_path / "loop.yaml"
    path.write_text("definition: &d {name: x, again: *d}\n")
    code, err = validate(path, capsys)
    assert code == 2 and "recursive" in err


@pytest.mark.parametrize("suffix, text", [(".yaml", "[" * 10000 + "]" * 10000),
                                          (".yaml", "".join(" " * i + "a:\n" for i in range(1000)) + " " * 1000 + "1\n"),
                                          (".json", "[" * 10000 + "]" * 10000),
                                          (".json", "[" * 500 + "]" * 500)],  # below Python's recursion limit
                         ids=["yaml-flow", "yaml-block", "json-deep", "json-500"])
def test_deep_nesting_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture, suffix: str, text: str) -> None:
    path = tmp_path / f"deep{suffix}"
    path.write_text(text)
    code, err = validate(path, capsys)
    assert code == 2
    assert f"deep{suffix}" in err and "nesting is deeper than" in err


def test_deep_nesting_inside_a_manifest_names_the_file(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    path = axpy(tmp_path)
    path.write_text(path.read_text() + "nested: " + "[" * 10000 + "]" * 10000 + "\n")
    code, err = validate(path, capsys)
    assert code == 2 and "manifest.yaml" in err and "nesting is deeper than" in err


def test_non_utf8_bytes_are_refused(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    data = axpy(tmp_path).read_bytes()
    line = data[:data.index(b"y = x * w + 1")].count(b"\n") + 1
    (tmp_path / "manifest.yaml").write_bytes(data.replace(b"y = x * w + 1", b"y = x \xff\xfe w"))
    code, err = validate(tmp_path / "manifest.yaml", capsys)
    assert code == 2
    assert "manifest.yaml" in err and "UTF-8" in err and "0xff" in err and f"line {line}" in err


def test_non_utf8_included_file_names_that_file(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    (tmp_path / "workloads.yaml").write_bytes(b"- id: \xc3\x28\n  axes: {n: 4}\n")
    path = axpy(tmp_path, lambda d: d.update(workloads={"$include": "workloads.yaml"}))
    code, err = validate(path, capsys)
    assert code == 2 and "workloads.yaml" in err and "UTF-8" in err


def test_oversized_file_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    path = axpy(tmp_path, lambda d: d["definition"].update(description="x" * (1 << 20)))
    code, err = validate(path, capsys)
    assert code == 2 and "larger than 1 MiB" in err


# --- $include ---------------------------------------------------------------------------------------

def test_include_diamond_is_bounded(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """Each level includes the next one twice: 2 ** 20 reads if nothing counts them."""
    for level in range(20):
        write(tmp_path / f"level{level}.yaml", [{"$include": f"level{level + 1}.yaml"}] * 2)  # type: ignore[arg-type]
    write(tmp_path / "level20.yaml", [{"id": "w", "axes": {"n": 4}}])  # type: ignore[arg-type]
    path = axpy(tmp_path, lambda d: d.update(workloads={"$include": "level0.yaml"}))
    code, err = validate(path, capsys)
    assert code == 2
    assert "$include" in err and "workloads" in err
    assert "more than 64" in err and "nested more than 8 files deep" in err  # both limits, reported at once


def test_include_glob_matching_too_many_files_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    (tmp_path / "w").mkdir()
    for i in range(100):
        write(tmp_path / "w" / f"{i:03}.yaml", {"id": f"w{i}", "axes": {"n": 4}})
    path = axpy(tmp_path, lambda d: d.update(workloads=[{"$include": "w/*.yaml"}]))
    code, err = validate(path, capsys)
    assert code == 2 and "matches more than 64 files" in err and "workloads[0]" in err


# --- flops / bytes formulas -------------------------------------------------------------------------

@pytest.mark.parametrize("field, formula, where, problem", [
    ("flops", "9**9**9", "definition.flops", "exponent 3.8742e+08 is out of range"),  # constant parts: once
    ("flops", "n ** 400", "definition.flops", "exponent 400 is out of range"),
    ("flops", "n ** (n * 100)", "workloads[0]", "exponent 409600 is out of range"),
    ("bytes", "2 / (1 - 1) * n", "definition.bytes", "division by zero"),
    ("bytes", "n ** 60 * n ** 60", "workloads[0]", "not a finite number"),
    ("flops", "n / (n - n)", "workloads[0]", "division by zero"),
    ("bytes", "n % (n - 4096)", "workloads[0]", "division by zero"),
    ("flops", "0 - n", "workloads[0]", "negative"),
    ("flops", "+".join(["n"] * 300), "definition.flops", "syntax nodes"),
    ("flops", "n * __import__('os')", "definition.flops", "unsupported syntax"),
])
def test_formula_is_evaluated_on_every_workload(tmp_path: Path, capsys: pytest.CaptureFixture, field: str,
                                                formula: str, where: str, problem: str) -> None:
    path = axpy(tmp_path, lambda d: d["definition"].update({field: formula}))
    code, err = validate(path, capsys)
    assert code == 2
    assert f"manifest.yaml: {where}:" in err and problem in err
    if where.startswith("workloads"):
        assert f"definition.{field}" in err


def test_formula_fine_on_one_workload_is_reported_on_the_other(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    def edit(d: dict[str, Any]) -> None:
        d["definition"]["flops"] = "n / (n - 4)"
        d["workloads"] = [{"id": "big", "axes": {"n": 4096}}, {"id": "four", "axes": {"n": 4}}]
    code, err = validate(axpy(tmp_path, edit), capsys)
    assert code == 2 and "workloads[1]" in err and "workloads[0]" not in err and "n=4" in err


# --- names and the FlashInfer importer --------------------------------------------------------------

def test_unsafe_and_reserved_solution_names(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    def edit(d: dict[str, Any]) -> None:
        d["solutions"] = [solution("reference", "good.py"), solution("../x", "good.py"), solution("Reference", "good.py")]
    code, err = validate(axpy(tmp_path, edit), capsys)
    assert code == 2
    assert "solutions[1].name: expected a string matching" in err  # the schema pass reports first
    code, err = validate(axpy(tmp_path, lambda d: d.update(solutions=[solution("reference", "good.py"),
                                                                      solution("Reference", "good.py")])), capsys)
    assert code == 2
    assert "solutions[0].name: the name 'reference' is reserved" in err
    assert "solutions[1].name: the name 'Reference' is reserved" in err


def test_unsafe_definition_name(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    code, err = validate(axpy(tmp_path, lambda d: d["definition"].update(name="../../report")), capsys)
    assert code == 2 and "definition.name: expected a string matching" in err


FI_DEFINITION = {"name": "axpy", "axes": {"n": {"type": "var"}},
                 "inputs": {"x": {"shape": ["n"], "dtype": "float32"}}, "outputs": {"y": {"shape": ["n"], "dtype": "float32"}},
                 "reference": "def run(x):\n    return x\n"}


def flashinfer_dir(root: Path, solutions: list[dict[str, Any]]) -> Path:
    root.mkdir()
    (root / "definition.json").write_text(json.dumps(FI_DEFINITION))
    (root / "workload.jsonl").write_text(json.dumps({"workload": {"uuid": "w", "axes": {"n": 8}}}) + "\n")
    (root / "solutions").mkdir()
    for i, sol in enumerate(solutions):
        (root / "solutions" / f"s{i}.json").write_text(json.dumps(sol))
    return root


def fi_solution(name: str, *paths: str) -> dict[str, Any]:
    return {"name": name, "spec": {"language": "python", "entry_point": "main.py::run"},
            "sources": [{"path": "main.py", "content": "def run(x):\n    return x\n"}]
            + [{"path": p, "content": "import os\n"} for p in paths]}


@pytest.fixture
def import_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The importer's cache below tmp_path, so what it writes (or not) can be seen."""
    root = tmp_path / "tmp"
    root.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(root))
    return root


def test_flashinfer_sources_outside_the_solution_folder_are_refused_and_never_written(
        tmp_path: Path, import_cache: Path, capsys: pytest.CaptureFixture) -> None:
    absolute = tmp_path / "absolute.py"
    folder = flashinfer_dir(tmp_path / "fib", [fi_solution("sneaky", "../../evil.py", "/tmp/x.py", str(absolute)),
                                               fi_solution("fine", "lib/helper.py")])
    code, err = validate(folder, capsys)
    assert code == 2
    assert "s0.json: solutions[0].sources[1].path: source path '../../evil.py' is not a plain relative path" in err
    assert "solutions[0].sources[2].path: source path '/tmp/x.py' is absolute" in err
    assert "solutions[0].sources[3].path" in err
    assert not (import_cache / "evil.py").exists() and not (import_cache.parent / "evil.py").exists()
    assert not absolute.exists()
    written = list(import_cache.rglob("*.py"))
    assert written and all(p.relative_to(import_cache).parts[1].startswith("fine-") for p in written)


def test_flashinfer_solution_name_cannot_pick_the_cache_folder(tmp_path: Path, import_cache: Path,
                                                               capsys: pytest.CaptureFixture) -> None:
    code, err = validate(flashinfer_dir(tmp_path / "up", [fi_solution("../../up")]), capsys)
    assert code == 2 and "s0.json: solutions[0].name: expected a string matching" in err
    written = list(import_cache.rglob("main.py"))
    assert written and all(import_cache / "opbench-import" in p.parents for p in written)
    code, err = validate(flashinfer_dir(tmp_path / "ref", [fi_solution("ok"), fi_solution("reference")]), capsys)
    assert code == 2 and "s1.json: solutions[1].name: the name 'reference' is reserved" in err


def test_flashinfer_bad_bytes_and_lines_are_field_errors(tmp_path: Path, import_cache: Path,
                                                         capsys: pytest.CaptureFixture) -> None:
    folder = flashinfer_dir(tmp_path / "fib", [["not", "a", "solution"], {"name": "s", "spec": ["x"]}])
    (folder / "workload.jsonl").write_bytes(b'{"workload": {"uuid": "w", "axes": {"n": 8}}}\n[1, 2]\n'
                                            + b"[" * 5000 + b"]" * 5000 + b"\n")
    (folder / "solutions" / "bytes.json").write_bytes(b'{"name": "\xff"}')
    code, err = validate(folder, capsys)
    assert code == 2
    assert "workload.jsonl:2: <top level>: expected one JSON object per line" in err
    assert "workload.jsonl:3: <top level>: nesting is deeper than" in err
    assert "bytes.json: <top level>: expected UTF-8 text" in err
    assert "solutions[0]: expected a solution object, got str" in err
    assert "solutions[3].spec: expected an object" in err


# --- control characters -----------------------------------------------------------------------------

ESCAPES = "\x1b[2K\r\x1b[32mPASSED\x1b[0m \x9b31m\x07\x1b]0;title\x07\u202e"


def test_escape_codes_in_a_message_cannot_repaint_a_row() -> None:
    bad = trace("evil\x1b[1A", "w1", status=Status.RUNTIME_ERROR, message=f"boom {ESCAPES}\nsecond line")
    rep = report([bad, trace("ok", "w1", status=Status.INCORRECT_NUMERICAL, message="off")])
    for text in (render_table(rep.traces), render_markdown(rep), render_html(rep)):
        assert not any(ch in text for ch in "\x1b\r\x07\x9b\u202e"), repr(text)
        assert "RUNTIME_ERROR" in text and "second line" not in text
    row = next(line for line in render_table(rep.traces).splitlines() if line.startswith("evil"))
    assert "RUNTIME_ERROR" in row and "boom" in row


def test_escape_codes_in_a_manifest_error_never_reach_the_terminal(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """File names and field names are shown as they are (values are quoted with repr)."""
    path = tmp_path / "bad\x1b[2K\r\x1b[32mOK.yaml"
    path.write_text(axpy(tmp_path).read_text().replace("name: good", "name: reference"))
    code, err = validate(path, capsys)
    assert code == 2 and "bad" in err and "solutions[0].name" in err
    assert "\x1b" not in err and "\r" not in err


def test_clean_keeps_text_tabs_and_newlines() -> None:
    assert clean("a\tb\nc \u00e9 \u4e2d") == "a\tb\nc \u00e9 \u4e2d"
    assert clean(ESCAPES) == "PASSED 31m"
