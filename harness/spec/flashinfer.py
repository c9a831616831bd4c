"""Import a FlashInfer-Bench style directory (definition.json + workload.jsonl + solution JSON files).

The directory is translated into an opbench manifest document, then validated by the same schema
and cross-checks as a YAML manifest; errors name the JSON/JSONL file (and line) they came from.
Embedded solution sources are written to a cache folder keyed on their content, and only when every
source path of the solution is a plain relative path (no absolute path, no `..`): a directory is
untrusted input, and validating it must not write anywhere else.
"""
from __future__ import annotations

import hashlib
import json
import re
import tempfile
from pathlib import Path, PureWindowsPath
from typing import Any

from harness.spec.files import MAX_NODES, parse_json, read_text
from harness.spec.schema import FieldError, Locator, ManifestError, PathPart, display

LANGUAGES = {"triton": "triton", "cuda": "cuda_cpp", "cuda_cpp": "cuda_cpp", "cpp": "cuda_cpp", "python": "pytorch",
             "pytorch": "pytorch", "torch": "pytorch", "tilelang": "tilelang"}
DTYPES = {"float8_e4m3": "float8_e4m3fn"}
SAFE_PART = re.compile(r"[A-Za-z0-9_.+-]{1,100}")  # one part of an embedded source's path
MAX_SOURCE_DEPTH = 8


def _read_json(path: Path) -> Any:
    return parse_json(read_text(path), display(path))[0]


def _tensor(spec: Any) -> Any:
    if not isinstance(spec, dict):
        return spec
    out = {k: v for k, v in spec.items() if k in ("shape", "dtype", "description")}
    if isinstance(out.get("dtype"), str):
        out["dtype"] = DTYPES.get(out["dtype"], out["dtype"])
    return out


def _mapping(value: Any, convert: Any) -> Any:
    """`convert` applied to each entry of a mapping; anything else is passed on for the schema to name."""
    if value is None:
        return {}
    return {n: convert(v) for n, v in value.items()} if isinstance(value, dict) else value


def _definition(raw: dict[str, Any]) -> dict[str, Any]:
    d: dict[str, Any] = {k: raw[k] for k in ("name", "description", "tags", "reference") if k in raw}
    if "type" in raw or "op_type" in raw:
        d["op_type"] = raw.get("op_type", raw.get("type"))
    d["axes"] = _mapping(raw.get("axes"), lambda a: {k: v for k, v in a.items() if k in ("type", "value", "description")}
                         if isinstance(a, dict) else a)
    d["inputs"] = _mapping(raw.get("inputs"), _tensor)
    d["outputs"] = _mapping(raw.get("outputs"), _tensor)
    return d


def _scalars_to_python(definition: dict[str, Any], workloads: list[dict[str, Any]]) -> None:
    """FlashInfer passes `shape: []` inputs fed by a scalar generator as Python numbers."""
    def generator(w: dict[str, Any], name: str) -> Any:
        inputs = w.get("inputs")
        return inputs.get(name) if isinstance(inputs, dict) else None

    if not isinstance(definition["inputs"], dict):
        return
    for name, spec in definition["inputs"].items():
        if isinstance(spec, dict) and spec.get("shape") == [] and workloads and all(
                isinstance(generator(w, name), dict) and generator(w, name).get("type") == "scalar" for w in workloads):
            spec["shape"] = None


def _workload(line: dict[str, Any], index: int) -> dict[str, Any]:
    w = line.get("workload", line)
    if not isinstance(w, dict):
        return {"id": f"w{index}", "axes": w}  # the schema says what is wrong with it
    out: dict[str, Any] = {"id": str(w.get("uuid", f"w{index}")), "axes": w.get("axes", {})}
    inputs = w.get("inputs") or {}
    if isinstance(inputs, dict):
        inputs = {name: {"type": "safetensors", "path": gen.get("path"), "key": gen.get("tensor_key", gen.get("key", name))}
                  if isinstance(gen, dict) and gen.get("type") == "safetensors" else gen for name, gen in inputs.items()}
    if inputs:
        out["inputs"] = inputs
    return out


def path_problem(path: Any) -> str | None:
    """Why `path` is not a plain relative file path (written below the solution's folder), or None."""
    if not isinstance(path, str) or not path:
        return f"expected a relative file path, got {path!r}"
    if path.startswith(("/", "\\", "~")) or PureWindowsPath(path).drive:
        return f"path {path!r} is absolute; expected a path relative to the solution folder"
    parts = path.split("/")
    if len(parts) > MAX_SOURCE_DEPTH or any(part in ("", ".", "..") for part in parts):
        return (f"path {path!r} is not a plain relative path (no '..', '.' or empty parts, at most "
                f"{MAX_SOURCE_DEPTH} deep); expected e.g. 'kernel.cu' or 'src/main.py'")
    bad = next((part for part in parts if not SAFE_PART.fullmatch(part)), None)
    if bad is not None:
        return f"path {path!r}: part {bad!r} has characters other than letters, digits, '.', '_', '+' and '-'"
    return None


def _solution(raw: Any, cache: Path, where: str, index: int, errors: list[FieldError]) -> dict[str, Any] | None:
    """The solution in opbench's terms, its embedded sources written below `cache` only when every
    source path is a plain relative path; otherwise every problem is added to `errors`."""
    sp: tuple[PathPart, ...] = ("solutions", index)
    if not isinstance(raw, dict):
        errors.append(FieldError(where, sp, f"expected a solution object, got {type(raw).__name__}"))
        return None
    spec = raw.get("spec") or {}
    if not isinstance(spec, dict):
        errors.append(FieldError(where, sp + ("spec",), f"expected an object, got {type(spec).__name__}"))
        return None
    sources = raw.get("sources") or []
    if not isinstance(sources, list):
        errors.append(FieldError(where, sp + ("sources",), f"expected a list of {{path, content}}, got {type(sources).__name__}"))
        return None
    entry = spec.get("entry_point")
    entry_file, _, symbol = entry.rpartition("::") if isinstance(entry, str) else ("", "", "")
    before = len(errors)
    for j, src in enumerate(sources):
        if not isinstance(src, dict) or not isinstance(src.get("content"), str):
            errors.append(FieldError(where, sp + ("sources", j), "expected {path, content} with the file's text as content"))
            continue
        problem = path_problem(src.get("path"))
        if problem:
            errors.append(FieldError(where, sp + ("sources", j, "path"), f"source {problem}"))
    if entry_file:
        problem = path_problem(entry_file)
        if problem:
            errors.append(FieldError(where, sp + ("spec", "entry_point"), f"entry point file {problem}"))
    if len(errors) > before:
        return None

    name = raw.get("name")
    h = hashlib.sha256(json.dumps(raw, sort_keys=True).encode()).hexdigest()[:12]
    label = re.sub(r"[^A-Za-z0-9._-]", "_", str(name or "solution"))[:60]  # a label only: the schema checks the name itself
    folder = cache / f"{label}-{h}"
    for src in sources:
        target = (folder / src["path"]).resolve()
        if folder.resolve() not in target.parents:  # a symlink planted in the cache folder
            errors.append(FieldError(where, sp + ("sources",), f"source path {src['path']!r} escapes the solution folder"))
            return None
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(src["content"])
    out: dict[str, Any] = {
        "name": name, "language": LANGUAGES.get(str(spec.get("language", "")).lower(), str(spec.get("language", "")).lower()),
        "entry_point": f"{folder / entry_file}::{symbol}" if entry_file else entry,
        "sources": [str(folder / src["path"]) for src in sources if src["path"] != entry_file],
        "destination_passing_style": bool(spec.get("destination_passing_style", False)),
    }
    for key in ("description", "author", "definition"):
        if key in raw:
            out[key] = raw[key]
    return {k: v for k, v in out.items() if v is not None}


def import_directory(folder: Path) -> tuple[dict[str, Any], Locator]:
    """The directory as an opbench manifest document plus a locator naming the original files."""
    folder = Path(folder)
    def_file = folder / "definition.json"
    if not def_file.is_file():
        raise ManifestError([FieldError(display(folder), (), "expected a FlashInfer-Bench directory with definition.json")])
    loc = Locator(display(def_file))
    raw_definition = _read_json(def_file)
    if not isinstance(raw_definition, dict):
        raise ManifestError([FieldError(display(def_file), (), f"expected an object, got {type(raw_definition).__name__}")])
    definition = _definition(raw_definition)

    workloads: list[dict[str, Any]] = []
    errors: list[FieldError] = []
    nodes = 0
    for wl_file in sorted(folder.glob("workload*.jsonl")):
        try:
            text = read_text(wl_file)
        except ManifestError as exc:
            errors.extend(exc.errors)
            continue
        for lineno, line_text in enumerate(text.splitlines(), 1):
            if not line_text.strip():
                continue
            where = f"{display(wl_file)}:{lineno}"
            try:
                line, size = parse_json(line_text, where)
            except ManifestError as exc:
                errors.extend(exc.errors)
                continue
            nodes += size
            if nodes > MAX_NODES:
                errors.append(FieldError(where, (), f"the workload files have more than {MAX_NODES} values"))
                break
            if not isinstance(line, dict):
                errors.append(FieldError(where, (), f"expected one JSON object per line, got {type(line).__name__}"))
                continue
            loc.add(("workloads", len(workloads)), where)
            workloads.append(_workload(line, len(workloads)))
    if not workloads and not errors:
        errors.append(FieldError(display(folder), (), "no workloads: expected workload.jsonl with one workload per line"))

    cache = Path(tempfile.gettempdir()) / "opbench-import"
    solutions: list[dict[str, Any]] = []
    sol_files = [f for f in sorted(folder.glob("solution*.json"))] + sorted((folder / "solutions").glob("*.json"))
    for sol_file in sol_files:
        try:
            raw = _read_json(sol_file)
        except ManifestError as exc:
            errors.extend(exc.errors)
            continue
        for item in raw if isinstance(raw, list) else [raw]:
            loc.add(("solutions", len(solutions)), display(sol_file))
            solution = _solution(item, cache, display(sol_file), len(solutions), errors)
            solutions.append(solution if solution is not None else {})
    if errors:
        raise ManifestError(errors)
    _scalars_to_python(definition, workloads)
    return {"schema_version": 1, "definition": definition, "workloads": workloads, "solutions": solutions}, loc
