"""Import a SOL-ExecBench or FlashInfer-Bench problem (definition.json + workload.jsonl + solution JSON).

The files are translated into an opbench manifest document, then validated by the same schema and
cross-checks as a YAML manifest; errors name the JSON/JSONL file (and line) they came from. They are
read as the upstream loaders read them: `spec.languages` (SOL, a list) or `spec.language` (FIB),
nulls as absent, digit-string shape entries as sizes, `expr` axes, `custom` inputs, per-workload
tolerances (`max_atol`, `max_rtol`, `required_matched_ratio`, `max_error_cap`), `compile_options`
and `binding`, destination passing style by default, and sources given by `path` alone (or with
empty `content`) read from beside the solution JSON. A workload line that is a bare workload is
SOL-ExecBench's and gets its default tolerance (atol = rtol = 1e-2, 99% of elements within);
one wrapped in a trace object is FlashInfer-Bench's (every element within).

Embedded solution sources are written to a cache folder keyed on their content, and only when every
source path of the solution is a plain relative path (no absolute path, no `..`): a directory is
untrusted input, and validating it must not write anywhere else.
"""
from __future__ import annotations

import hashlib
import json
import re
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path, PureWindowsPath
from typing import Any

from harness.spec.files import MAX_NODES, parse_json, read_text
from harness.spec.schema import FieldError, Locator, ManifestError, PathPart, display

LANGUAGES = {"triton": "triton", "cuda": "cuda_cpp", "cuda_cpp": "cuda_cpp", "cpp": "cuda_cpp", "python": "pytorch",
             "pytorch": "pytorch", "torch": "pytorch", "tilelang": "tilelang", "cutlass": "cutlass", "cudnn": "cudnn",
             "cublas": "cublas", "cute_dsl": "cute_dsl", "cutile": "cutile", "cudnn_frontend": "cudnn_frontend"}
DTYPES = {"float8_e4m3": "float8_e4m3fn", "float4_e2m1": "float4_e2m1fn_x2"}
SOL_TOLERANCE = {"atol": 1e-2, "rtol": 1e-2, "max_mismatch": 0.01}  # SOL-ExecBench's ToleranceSpec defaults
FIB_TOLERANCE = {"atol": 1e-2, "rtol": 1e-2, "max_mismatch": 0.0}   # FlashInfer-Bench: every element
# SOL-ExecBench's CompileOptions: given (even as {}), its fields default to these; absent, to nothing.
COMPILE_DEFAULTS = {"cflags": [], "cuda_cflags": ["-O3", "--use_fast_math"], "ld_flags": ["-lcuda"]}
COMPILE_KEYS = {"cflags": "extra_cflags", "cuda_cflags": "extra_cuda_cflags", "ld_flags": "extra_ldflags"}
SAFE_PART = re.compile(r"[A-Za-z0-9_.+-]{1,100}")  # one part of an embedded source's path
MAX_SOURCE_DEPTH = 8


def _read_json(path: Path) -> Any:
    return parse_json(read_text(path), display(path))[0]


def _present(d: dict[str, Any], keys: tuple[str, ...]) -> dict[str, Any]:
    """The entries of `d` among `keys` that are not null (upstream's Optional fields)."""
    return {k: d[k] for k in keys if d.get(k) is not None}


def _dim(entry: Any) -> Any:
    return int(entry) if isinstance(entry, str) and entry.isdigit() else entry  # SOL: "1" is a size


def _tensor(spec: Any) -> Any:
    if not isinstance(spec, dict):
        return spec
    out = _present(spec, ("dtype", "description"))
    if "shape" in spec:
        shape = spec["shape"]
        out["shape"] = [_dim(e) for e in shape] if isinstance(shape, list) else shape
    if isinstance(out.get("dtype"), str):
        out["dtype"] = DTYPES.get(out["dtype"], out["dtype"])
    return out


def _mapping(value: Any, convert: Any) -> Any:
    """`convert` applied to each entry of a mapping; anything else is passed on for the schema to name."""
    if value is None:
        return {}
    return {n: convert(v) for n, v in value.items()} if isinstance(value, dict) else value


def _definition(raw: dict[str, Any]) -> dict[str, Any]:
    d: dict[str, Any] = _present(raw, ("name", "description", "tags", "reference", "constraints",
                                       "custom_inputs_entrypoint"))
    if raw.get("op_type", raw.get("type")) is not None:
        d["op_type"] = raw.get("op_type", raw.get("type"))
    d["axes"] = _mapping(raw.get("axes"), lambda a: _present(a, ("type", "value", "expression", "description"))
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


def _fp4_values(definition: dict[str, Any], workloads: list[dict[str, Any]]) -> None:
    """Upstream declares a packed fp4 input's shape in values and draws a random one with the last
    dimension halved (two values a byte); opbench's own manifests declare the packed shape, so the
    imported random generators say which they mean."""
    inputs = definition.get("inputs")
    if not isinstance(inputs, dict):
        return
    packed = [n for n, spec in inputs.items() if isinstance(spec, dict) and spec.get("dtype") == DTYPES["float4_e2m1"]]
    for w in workloads:
        gens = w.setdefault("inputs", {})
        if not isinstance(gens, dict):
            continue
        for name in packed:
            gen = gens.get(name, {"type": "random"})
            if isinstance(gen, dict) and gen.get("type") == "random":
                gens[name] = {**gen, "fp4_shape": "values"}


def _as_upstream_reads(definition: dict[str, Any], workloads: list[dict[str, Any]]) -> None:
    """What upstream's loader lets through and uses: a workload axis the definition does not declare
    still reaches the custom input generator (SOL-ExecBench's L2/032 passes `is_joint_block` so): it
    becomes a var axis of the imported definition. A workload input the definition does not declare is
    never read upstream (L2/068's `bias1`): it is dropped here too."""
    axes, inputs = definition.get("axes"), definition.get("inputs")
    if not isinstance(axes, dict) or not isinstance(inputs, dict):
        return  # the schema says what is wrong
    for w in workloads:
        given, gens = w.get("axes"), w.get("inputs")
        for name in given if isinstance(given, dict) else ():
            if name not in axes:
                axes[name] = {"type": "var", "description": "set by the workloads only (not declared upstream)"}
        if isinstance(gens, dict):
            w["inputs"] = {name: gen for name, gen in gens.items() if name in inputs}


def _tolerance(raw: Any, defaults: dict[str, float]) -> Any:
    """Upstream's ToleranceSpec in opbench's terms: max_atol -> atol, max_rtol -> rtol, a required
    matched ratio r (also spelled required_match_ratio) -> max_mismatch 1 - r; max_error_cap kept."""
    if raw is None:
        return dict(defaults)
    if not isinstance(raw, dict):
        return raw  # the schema says what is wrong with it
    out: dict[str, Any] = dict(defaults)
    for theirs, ours in (("max_atol", "atol"), ("max_rtol", "rtol"), ("atol", "atol"), ("rtol", "rtol"),
                         ("max_error_cap", "max_error_cap")):
        if raw.get(theirs) is not None:
            out[ours] = raw[theirs]
    ratio = raw.get("required_matched_ratio", raw.get("required_match_ratio"))
    if isinstance(ratio, (int, float)) and not isinstance(ratio, bool):
        out["max_mismatch"] = round(1.0 - float(ratio), 12)
    elif ratio is not None:
        out["max_mismatch"] = ratio  # the schema says what is wrong with it
    return out


def _generator(name: str, gen: Any) -> Any:
    if isinstance(gen, dict) and gen.get("type") == "safetensors":
        return {"type": "safetensors", "path": gen.get("path"), "key": gen.get("tensor_key", gen.get("key", name))}
    if isinstance(gen, dict):
        return {k: v for k, v in gen.items() if v is not None}
    return gen


def _workload(line: dict[str, Any], index: int) -> dict[str, Any]:
    w = line.get("workload", line)
    if not isinstance(w, dict):
        return {"id": f"w{index}", "axes": w}  # the schema says what is wrong with it
    out: dict[str, Any] = {"id": str(w.get("uuid", f"w{index}")), "axes": w.get("axes", {})}
    inputs = w.get("inputs") or {}
    if isinstance(inputs, dict):
        inputs = {name: _generator(name, gen) for name, gen in inputs.items()}
    if inputs:
        out["inputs"] = inputs
    out["tolerance"] = _tolerance(w.get("tolerance"), FIB_TOLERANCE if "workload" in line else SOL_TOLERANCE)
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


def _language(spec: dict[str, Any]) -> str:
    """SOL's `languages` (a list: its first) or FIB's `language`, in opbench's names."""
    given = spec.get("languages")
    if isinstance(given, list) and given:
        given = given[0]
    if given is None:
        given = spec.get("language", "")
    name = str(given).lower()
    return LANGUAGES.get(name, name)


def _build_options(spec: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    options = spec.get("compile_options")
    if isinstance(options, dict):
        for theirs, ours in COMPILE_KEYS.items():
            value = options.get(theirs, COMPILE_DEFAULTS[theirs])
            if value:
                out[ours] = value
    if spec.get("binding") is not None:
        out["binding"] = spec["binding"]
    return out


def _sources(raw_sources: list[Any], sol_dir: Path, where: str, sp: tuple[PathPart, ...],
             errors: list[FieldError]) -> list[dict[str, str]]:
    """Each source with its text: its `content`, or, when that is absent, null or empty, the file at
    `path` beside the solution JSON (as upstream's CLI fills it in)."""
    out = []
    for j, src in enumerate(raw_sources):
        if not isinstance(src, dict) or (src.get("content") is not None and not isinstance(src.get("content"), str)):
            errors.append(FieldError(where, sp + ("sources", j), "expected {path, content} with the file's text as content, "
                                     "or {path} naming a file beside the solution JSON"))
            continue
        problem = path_problem(src.get("path"))
        if problem:
            errors.append(FieldError(where, sp + ("sources", j, "path"), f"source {problem}"))
            continue
        content = src.get("content")
        if not content:
            file = sol_dir / src["path"]
            if not file.resolve().is_relative_to(sol_dir.resolve()) or not file.is_file():
                errors.append(FieldError(where, sp + ("sources", j), f"source {src['path']!r} has no content and no file "
                                         f"{src['path']!r} beside the solution JSON (looked in {display(sol_dir)})"))
                continue
            try:
                content = read_text(file)
            except ManifestError as exc:
                errors.extend(exc.errors)
                continue
        out.append({"path": src["path"], "content": content})
    return out


def _solution(raw: Any, sol_dir: Path, cache: Path, where: str, index: int, errors: list[FieldError]) -> dict[str, Any] | None:
    """The solution in opbench's terms, its sources written below `cache` only when every source
    path is a plain relative path; otherwise every problem is added to `errors`."""
    sp: tuple[PathPart, ...] = ("solutions", index)
    if not isinstance(raw, dict):
        errors.append(FieldError(where, sp, f"expected a solution object, got {type(raw).__name__}"))
        return None
    spec = raw.get("spec") or {}
    if not isinstance(spec, dict):
        errors.append(FieldError(where, sp + ("spec",), f"expected an object, got {type(spec).__name__}"))
        return None
    raw_sources = raw.get("sources") or []
    if not isinstance(raw_sources, list):
        errors.append(FieldError(where, sp + ("sources",), f"expected a list of {{path, content}}, got {type(raw_sources).__name__}"))
        return None
    entry = spec.get("entry_point")
    entry_file, _, symbol = entry.rpartition("::") if isinstance(entry, str) else ("", "", "")
    before = len(errors)
    sources = _sources(raw_sources, sol_dir, where, sp, errors)
    if entry_file:
        problem = path_problem(entry_file)
        if problem:
            errors.append(FieldError(where, sp + ("spec", "entry_point"), f"entry point file {problem}"))
    if len(errors) > before:
        return None

    name = raw.get("name")
    h = hashlib.sha256(json.dumps([raw, sources], sort_keys=True).encode()).hexdigest()[:12]
    label = re.sub(r"[^A-Za-z0-9._-]", "_", str(name or "solution"))[:60]  # a label only: the schema checks the name itself
    folder = cache / f"{label}-{h}"
    for src in sources:
        target = (folder / src["path"]).resolve()
        if folder.resolve() not in target.parents:  # a symlink planted in the cache folder
            errors.append(FieldError(where, sp + ("sources",), f"source path {src['path']!r} escapes the solution folder"))
            return None
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(src["content"])
    dps = spec.get("destination_passing_style")
    out: dict[str, Any] = {
        "name": name, "language": _language(spec),
        "entry_point": f"{folder / entry_file}::{symbol}" if entry_file else entry,
        "sources": [str(folder / src["path"]) for src in sources if src["path"] != entry_file],
        "destination_passing_style": True if dps is None else dps,  # both upstreams default to true
    }
    build = _build_options(spec)
    if build:
        out["build"] = build
    # `definition` is not passed on: upstream never checks it against the definition it is run with
    for key in ("description", "author", "expected_status"):  # expected_status: opbench's, for hack samples
        if raw.get(key) is not None:
            out[key] = raw[key]
    return {k: v for k, v in out.items() if v is not None}


@dataclass(frozen=True)
class Problem:
    """Where one upstream problem's files are: a problem directory, or files named one by one
    (`hpc-bench DIR --solution F`, `--definition F --workload F`); a file named wins over the folder's."""

    folder: Path | None = None
    definition: Path | None = None
    workloads: tuple[Path, ...] = ()
    solutions: tuple[Path, ...] = ()
    root: Path | None = None  # the TraceSet this problem is part of: relative blob paths start there

    def files(self) -> tuple[Path, list[Path], list[Path]]:
        """(definition, workload files, solution files); ManifestError when the definition is missing."""
        folder = self.folder
        definition = self.definition or (folder / "definition.json" if folder is not None else None)
        if definition is None or not definition.is_file():
            where = display(definition or folder or Path("."))
            raise ManifestError([FieldError(where, (), "expected a SOL-ExecBench / FlashInfer-Bench problem: a "
                                            "directory with definition.json and workload.jsonl (or --definition FILE)")])
        workloads = list(self.workloads) or (sorted(folder.glob("workload*.jsonl")) if folder is not None else [])
        solutions = list(self.solutions) or ([*sorted(folder.glob("solution*.json")),
                                              *sorted((folder / "solutions").glob("*.json"))] if folder is not None else [])
        return definition, workloads, solutions


def blob_roots(folder: Path, root: Path | None, env: dict[str, str] | None = None) -> list[Path]:
    """Where a relative safetensors path may start, in order: the workload file's folder, the
    TraceSet root (FlashInfer-Bench), $FLASHINFER_TRACE_DIR (SOL-ExecBench)."""
    env = dict(os.environ) if env is None else env
    roots = [folder] + ([root] if root is not None else [])
    if env.get("FLASHINFER_TRACE_DIR"):
        roots.append(Path(env["FLASHINFER_TRACE_DIR"]))
    return roots


def find_blob(path: str, roots: list[Path]) -> Path | None:
    """The file a relative blob path names, as upstream finds it: under each root, the path itself,
    then with leading folders dropped one by one (SOL-ExecBench's data/flashinfer-trace/blob/... is
    found below a root that holds blob/...)."""
    parts = Path(path).parts
    for root in roots:
        for i in range(len(parts)):
            candidate = root.joinpath(*parts[i:])
            if candidate.is_file():
                return candidate.resolve()
    return None


def _resolve_blobs(workload: dict[str, Any], roots: list[Path]) -> dict[str, Any]:
    inputs = workload.get("inputs")
    if isinstance(inputs, dict):
        for gen in inputs.values():
            if isinstance(gen, dict) and gen.get("type") == "safetensors" and isinstance(gen.get("path"), str) \
                    and not Path(gen["path"]).is_absolute():
                found = find_blob(gen["path"], roots)
                if found is not None:
                    gen["path"] = str(found)
    return workload


def is_traceset(path: Path) -> bool:
    """A FlashInfer-Bench TraceSet root: definitions/ (and workloads/, solutions/, blob/) below it."""
    return path.is_dir() and (path / "definitions").is_dir()


def traceset_problems(root: Path) -> list[Problem]:
    """One problem per definition of the TraceSet, with its workloads (workloads/**/<name>.jsonl)
    and the solutions whose `definition` names it (solutions/**/*.json)."""
    by_definition: dict[str, list[Path]] = {}
    for sol in sorted((root / "solutions").rglob("*.json")):
        try:
            name = _read_json(sol).get("definition")
        except (ManifestError, AttributeError):
            name = sol.parent.name  # unreadable: the problem of that folder reports it
        by_definition.setdefault(str(name), []).append(sol)
    problems = []
    for definition in sorted((root / "definitions").rglob("*.json")):
        try:
            name = str(_read_json(definition).get("name", definition.stem))
        except (ManifestError, AttributeError):
            name = definition.stem
        workloads = tuple(sorted(w for w in (root / "workloads").rglob("*.jsonl") if w.stem == name))
        problems.append(Problem(definition=definition, workloads=workloads,
                                solutions=tuple(by_definition.get(name, ())), root=root))
    return problems


def import_directory(folder: Path) -> tuple[dict[str, Any], Locator]:
    """A problem directory as an opbench manifest document plus a locator naming the original files."""
    doc, loc, errors = import_problem(Problem(folder=Path(folder)))
    if errors:
        raise ManifestError(errors)
    return doc, loc


def import_problem(problem: Problem) -> tuple[dict[str, Any], Locator, list[FieldError]]:
    """The problem's files as an opbench manifest document, a locator naming the original files, and
    what could not be translated (a solution that could not be read is left out of the document, so
    the schema and the cross-checks still report everything else at once)."""
    def_file, wl_files, sol_files = problem.files()
    loc = Locator(display(def_file))
    raw_definition = _read_json(def_file)
    if not isinstance(raw_definition, dict):
        raise ManifestError([FieldError(display(def_file), (), f"expected an object, got {type(raw_definition).__name__}")])
    definition = _definition(raw_definition)

    workloads: list[dict[str, Any]] = []
    errors: list[FieldError] = []
    nodes = 0
    for wl_file in wl_files:
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
            workloads.append(_resolve_blobs(_workload(line, len(workloads)), blob_roots(wl_file.parent, problem.root)))
    if not workloads and not errors:
        where = display(wl_files[0] if wl_files else (problem.folder or def_file.parent))
        errors.append(FieldError(where, (), "no workloads: expected workload.jsonl with one workload per line"))

    cache = Path(tempfile.gettempdir()) / "opbench-import"
    solutions: list[dict[str, Any]] = []
    read = 0
    for sol_file in sol_files:
        try:
            raw = _read_json(sol_file)
        except ManifestError as exc:
            errors.extend(exc.errors)
            continue
        for item in raw if isinstance(raw, list) else [raw]:
            read += 1  # errors of a solution left out are numbered by reading order
            solution = _solution(item, sol_file.parent, cache, display(sol_file), read - 1, errors)
            if solution is not None:
                loc.add(("solutions", len(solutions)), display(sol_file))
                solutions.append(solution)
    if errors and not workloads:
        raise ManifestError(errors)  # nothing to check the rest against
    _as_upstream_reads(definition, workloads)
    _scalars_to_python(definition, workloads)
    _fp4_values(definition, workloads)
    return {"schema_version": 1, "definition": definition, "workloads": workloads, "solutions": solutions}, loc, errors
