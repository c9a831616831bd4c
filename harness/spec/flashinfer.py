"""Import a FlashInfer-Bench style directory (definition.json + workload.jsonl + solution JSON files).

The directory is translated into an opbench manifest document, then validated by the same schema
and cross-checks as a YAML manifest; errors name the JSON/JSONL file (and line) they came from.
Embedded solution sources are written to a cache folder keyed on their content.
"""
from __future__ import annotations

import hashlib
import json
import tempfile
from pathlib import Path
from typing import Any

from harness.spec.schema import FieldError, Locator, ManifestError, display

LANGUAGES = {"triton": "triton", "cuda": "cuda_cpp", "cuda_cpp": "cuda_cpp", "cpp": "cuda_cpp", "python": "pytorch",
             "pytorch": "pytorch", "torch": "pytorch", "tilelang": "tilelang"}
DTYPES = {"float8_e4m3": "float8_e4m3fn"}


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text())
    except json.JSONDecodeError as exc:
        raise ManifestError([FieldError(display(path), (), f"invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}")])


def _tensor(spec: Any) -> Any:
    if not isinstance(spec, dict):
        return spec
    out = {k: v for k, v in spec.items() if k in ("shape", "dtype", "description")}
    if isinstance(out.get("dtype"), str):
        out["dtype"] = DTYPES.get(out["dtype"], out["dtype"])
    return out


def _definition(raw: dict[str, Any]) -> dict[str, Any]:
    d: dict[str, Any] = {k: raw[k] for k in ("name", "description", "tags", "reference") if k in raw}
    if "type" in raw or "op_type" in raw:
        d["op_type"] = raw.get("op_type", raw.get("type"))
    d["axes"] = {n: {k: v for k, v in a.items() if k in ("type", "value", "description")} if isinstance(a, dict) else a
                 for n, a in (raw.get("axes") or {}).items()}
    d["inputs"] = {n: _tensor(s) for n, s in (raw.get("inputs") or {}).items()}
    d["outputs"] = {n: _tensor(s) for n, s in (raw.get("outputs") or {}).items()}
    return d


def _scalars_to_python(definition: dict[str, Any], workloads: list[dict[str, Any]]) -> None:
    """FlashInfer passes `shape: []` inputs fed by a scalar generator as Python numbers."""
    for name, spec in definition["inputs"].items():
        if isinstance(spec, dict) and spec.get("shape") == [] and workloads and all(
                w.get("inputs", {}).get(name, {}).get("type") == "scalar" for w in workloads):
            spec["shape"] = None


def _workload(line: dict[str, Any], index: int) -> dict[str, Any]:
    w = line.get("workload", line)
    out: dict[str, Any] = {"id": str(w.get("uuid", f"w{index}")), "axes": w.get("axes", {})}
    inputs = {}
    for name, gen in (w.get("inputs") or {}).items():
        if isinstance(gen, dict) and gen.get("type") == "safetensors":
            inputs[name] = {"type": "safetensors", "path": gen.get("path"), "key": gen.get("tensor_key", gen.get("key", name))}
        else:
            inputs[name] = gen
    if inputs:
        out["inputs"] = inputs
    return out


def _solution(raw: dict[str, Any], cache: Path) -> dict[str, Any]:
    spec = raw.get("spec") or {}
    language = str(spec.get("language", "")).lower()
    sources = raw.get("sources") or []
    h = hashlib.sha256(json.dumps(raw, sort_keys=True).encode()).hexdigest()[:12]
    folder = cache / f"{raw.get('name', 'solution')}-{h}"
    for src in sources:
        target = (folder / src["path"]).resolve()
        if folder.resolve() not in target.parents:
            raise ManifestError([FieldError("solution", ("sources",), f"source path {src['path']!r} escapes the solution folder")])
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(src["content"])
    out: dict[str, Any] = {
        "name": raw.get("name"), "language": LANGUAGES.get(language, language),
        "entry_point": str(folder / spec["entry_point"].split("::")[0]) + "::" + spec["entry_point"].split("::")[-1]
        if "::" in str(spec.get("entry_point", "")) else spec.get("entry_point"),
        "sources": [str(folder / s["path"]) for s in sources if s["path"] != spec.get("entry_point", "").split("::")[0]],
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
    definition = _definition(_read_json(def_file))

    workloads: list[dict[str, Any]] = []
    errors: list[FieldError] = []
    for wl_file in sorted(folder.glob("workload*.jsonl")):
        for lineno, text in enumerate(wl_file.read_text().splitlines(), 1):
            if not text.strip():
                continue
            try:
                line = json.loads(text)
            except json.JSONDecodeError as exc:
                errors.append(FieldError(f"{display(wl_file)}:{lineno}", (), f"invalid JSON: {exc.msg}"))
                continue
            loc.add(("workloads", len(workloads)), f"{display(wl_file)}:{lineno}")
            workloads.append(_workload(line, len(workloads)))
    if not workloads and not errors:
        errors.append(FieldError(display(folder), (), "no workloads: expected workload.jsonl with one workload per line"))

    cache = Path(tempfile.gettempdir()) / "opbench-import"
    solutions: list[dict[str, Any]] = []
    sol_files = [f for f in sorted(folder.glob("solution*.json"))] + sorted((folder / "solutions").glob("*.json"))
    for sol_file in sol_files:
        raw = _read_json(sol_file)
        for item in raw if isinstance(raw, list) else [raw]:
            loc.add(("solutions", len(solutions)), display(sol_file))
            solutions.append(_solution(item, cache))
    if errors:
        raise ManifestError(errors)
    _scalars_to_python(definition, workloads)
    return {"schema_version": 1, "definition": definition, "workloads": workloads, "solutions": solutions}, loc
