"""Manifest loading: YAML (with `$include`) or a FlashInfer-Bench directory -> validated `Manifest`.

Loading is two passes so every problem is reported at once: the JSON Schema pass (shape of the
document) and a cross-check pass (names that must agree across sections, files that must exist,
throughput formulas that must give a count on every workload). A manifest is untrusted input: files
are read within the bounds of `harness/spec/files.py`, and `$include`s within the ones below.
"""
from __future__ import annotations

import glob as globlib
import itertools
from dataclasses import replace
from pathlib import Path
from typing import Any

from harness.spec.expressions import (ExpressionError, axis_value, check_constraint, check_expression, evaluate,
                                     holds)
from harness.spec.files import MAX_DEPTH, MAX_NODES, read_structured, read_text
from harness.spec.knobs import apply_overrides, knob_overrides
from harness.spec.model import (CPP_COMPILED, CPP_HEADERS, CPP_LANGUAGES, Axis, BenchConfig, Definition, Generator,
                                Manifest, Reference, Solution, TensorSpec, Tolerance, Workload)
from harness.spec.schema import FieldError, Locator, ManifestError, PathPart, display, validate

INCLUDE = "$include"
MAX_INCLUDES = 64       # `$include`s resolved for one manifest, each use of a file counted (a diamond doubles per level)
MAX_INCLUDE_DEPTH = 8   # files included from included files; a manifest uses one or two levels
RESERVED_NAMES = {"reference"}  # a solution's log is logs/<name>.log; the reference's logs/reference.<definition>.log
DEFAULT_TOLERANCE = {  # (atol, rtol) by the output's dtype, as KernelBench/SOL-ExecBench use
    "float64": (1e-6, 1e-6), "float32": (1e-4, 1e-4), "float16": (1e-2, 1e-2),
    "bfloat16": (2e-2, 2e-2), "float8_e4m3fn": (1e-1, 1e-1), "float8_e5m2": (2e-1, 2e-1),
}


class _Expansion:
    """One manifest's `$include` expansion: where each part came from, every problem found, and the
    budgets it spends. A diamond of includes (each file including the next one twice) doubles per
    level, so what is bounded is the number of includes resolved, not only the depth."""

    def __init__(self, loc: Locator):
        self.loc = loc
        self.errors: list[FieldError] = []
        self.includes = 0
        self.nodes = 0
        self.reported: set[str] = set()

    def refuse(self, limit: str, path: tuple[PathPart, ...], message: str) -> None:
        """Report a limit once, at the first place it is hit; the expansion stops there."""
        if limit not in self.reported:
            self.reported.add(limit)
            self.errors.append(FieldError(self.loc(path), path, message))

    def expand(self, node: Any, base: Path, path: tuple[PathPart, ...], stack: tuple[Path, ...]) -> Any:
        """Replace `{$include: file}` nodes by the file's content; in a list, a glob splices every match."""
        self.nodes += 1
        if self.nodes > MAX_NODES:
            self.refuse("nodes", path, f"the manifest has more than {MAX_NODES} values with its includes expanded")
            return None
        if len(path) > MAX_DEPTH:
            self.refuse("depth", path, f"nesting is deeper than {MAX_DEPTH} levels with includes expanded")
            return None
        if isinstance(node, dict) and INCLUDE in node:
            return self.include(node, base, path, stack)
        if isinstance(node, dict):
            return {k: self.expand(v, base, path + (k,), stack) for k, v in node.items()}
        if isinstance(node, list):
            out: list[Any] = []
            for item in node:
                if isinstance(item, dict) and set(item) == {INCLUDE} and isinstance(item[INCLUDE], str) \
                        and any(ch in item[INCLUDE] for ch in "*?["):
                    matches = list(itertools.islice(globlib.iglob(str(base / item[INCLUDE])), MAX_INCLUDES + 1))
                    if not matches:
                        self.errors.append(FieldError(self.loc(path), path + (len(out),),
                                                      f"include pattern {item[INCLUDE]!r} matches no file"))
                    if len(matches) > MAX_INCLUDES:
                        self.refuse("includes", path + (len(out),), f"include pattern {item[INCLUDE]!r} matches more "
                                    f"than {MAX_INCLUDES} files, the most one manifest may include")
                        continue
                    for match in sorted(matches):
                        out.append(self.expand({INCLUDE: match}, base, path + (len(out),), stack))
                else:
                    out.append(self.expand(item, base, path + (len(out),), stack))
            return out
        return node

    def include(self, node: dict[str, Any], base: Path, path: tuple[PathPart, ...], stack: tuple[Path, ...]) -> Any:
        target = node[INCLUDE]
        if len(node) != 1 or not isinstance(target, str):
            self.errors.append(FieldError(self.loc(path), path, f"'{INCLUDE}' must be the only key and name a file"))
            return None
        file = (base / target).resolve()
        if file in stack:
            self.errors.append(FieldError(self.loc(path), path, f"include cycle through {display(file)}"))
            return None
        if not file.is_file():
            self.errors.append(FieldError(self.loc(path), path, f"included file {target!r} does not exist"))
            return None
        if len(stack) > MAX_INCLUDE_DEPTH:
            self.refuse("include depth", path, f"includes are nested more than {MAX_INCLUDE_DEPTH} files deep "
                        f"(at {display(file)})")
            return None
        self.includes += 1
        if self.includes > MAX_INCLUDES:
            self.refuse("includes", path, f"more than {MAX_INCLUDES} '{INCLUDE}'s (each use of a file counted), "
                        "the most one manifest may have")
            return None
        try:
            content = read_structured(file)
        except ManifestError as exc:
            self.errors.extend(exc.errors)
            return None
        self.loc.add(path, display(file))
        return self.expand(content, file.parent, path, stack + (file,))


def load_document(path: Path) -> tuple[dict[str, Any], Locator]:
    """The manifest as one plain document plus where each part came from (YAML file or FlashInfer dir)."""
    path = Path(path)
    if path.is_dir():
        from harness.spec.flashinfer import import_directory
        return import_directory(path)
    if not path.exists():
        raise ManifestError([FieldError(display(path), (), "manifest file does not exist")])
    loc = Locator(display(path))
    raw = read_structured(path)
    expansion = _Expansion(loc)
    doc = expansion.expand(raw, path.resolve().parent, (), (path.resolve(),))
    if expansion.errors:
        raise ManifestError(expansion.errors)
    if not isinstance(doc, dict):
        raise ManifestError([FieldError(display(path), (), f"expected a mapping at the top level, got {type(doc).__name__}")])
    return doc, loc


def _base_dir(loc: Locator, path: tuple[PathPart, ...]) -> Path:
    return Path(loc(path)).resolve().parent


def resolve_axes(axes: dict[str, Any], given: dict[str, int]) -> dict[str, int]:
    """Every axis's size on a workload: const values, the workload's own, then each expr axis in
    declaration order (it may use any const or var axis and the expr axes before it); raises
    ExpressionError naming the expr axis that does not give a size."""
    values = {n: a["value"] for n, a in axes.items() if a["type"] == "const"}
    values.update((n, v) for n, v in given.items() if n in axes and axes[n]["type"] != "expr")
    for name, a in axes.items():
        if a["type"] == "expr":
            try:
                values[name] = axis_value(a["expression"], values)
            except ExpressionError as exc:
                raise ExpressionError(f"expr axis {name!r} = {a['expression']!r}: {exc}") from None
    return values


def _about_tensors(constraint: str, axes: set[str], inputs: set[str]) -> bool:
    """Whether a constraint that is not axis arithmetic is well-formed Python over axes and inputs
    (upstream constraints may read tensor values, which no load-time check can)."""
    import ast
    try:
        tree = ast.parse(constraint, mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    return bool(names & inputs) and names <= axes | inputs


def _reference_functions(source: str) -> set[str] | None:
    """Names of the top-level functions of a reference's source, or None when it does not parse."""
    import ast
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    return {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}


def _cross_check(doc: dict[str, Any], loc: Locator) -> list[FieldError]:
    """Checks JSON Schema cannot express: names that must agree between sections, files that must exist."""
    errs: list[FieldError] = []

    def err(path: tuple[PathPart, ...], msg: str) -> None:
        errs.append(FieldError(loc(path), path, msg))

    d = doc["definition"]
    axes: dict[str, Any] = d["axes"]
    tensors = {**d["inputs"], **d["outputs"]}
    for section in ("inputs", "outputs"):
        for name, spec in d[section].items():
            for i, dim in enumerate(spec.get("shape") or []):
                if isinstance(dim, str) and dim not in axes:
                    err(("definition", section, name, "shape", i), f"unknown axis {dim!r}; declared axes: {sorted(axes)}")
    for name in set(d["inputs"]) & set(d["outputs"]):
        err(("definition", "outputs", name), f"{name!r} is declared both as input and output")
    before: set[str] = {n for n, a in axes.items() if a["type"] != "expr"}
    for name, a in axes.items():
        if a["type"] == "expr":
            problem = check_expression(a["expression"], before)
            if problem:
                err(("definition", "axes", name, "expression"), problem + " (const and var axes, and expr axes declared above)")
            before.add(name)
    constraints: list[str] = []
    for i, constraint in enumerate(d.get("constraints", [])):
        problem = check_constraint(constraint, set(axes))
        if problem is None:
            constraints.append(constraint)
        elif not _about_tensors(constraint, set(axes), set(d["inputs"])):
            err(("definition", "constraints", i), problem)
        # else it reads input values (kv_indptr[-1].item()): not decidable from the axes, so not checked
    formulas: dict[str, str] = {}  # well-formed ones, evaluated on every workload below
    for key in ("flops", "bytes"):
        if key in d:
            problem = check_expression(d[key], set(axes))
            if problem:
                err(("definition", key), problem)
            else:
                formulas[key] = d[key]
    ref = d["reference"]
    ref_source: str | None = ref if isinstance(ref, str) else ref.get("source")
    if isinstance(ref, dict) and "file" in ref:
        ref_file = _base_dir(loc, ("definition", "reference")) / ref["file"]
        if not ref_file.is_file():
            err(("definition", "reference", "file"), f"reference file {ref['file']!r} does not exist")
        else:
            try:
                ref_source = read_text(ref_file)
            except ManifestError as exc:
                errs.extend(FieldError(e.file, ("definition", "reference", "file"), e.message) for e in exc.errors)
    custom = d.get("custom_inputs_entrypoint")
    if custom is not None and ref_source is not None:
        functions = _reference_functions(ref_source)
        if functions is not None and custom not in functions:
            err(("definition", "custom_inputs_entrypoint"), f"the reference defines no top-level function {custom!r} "
                f"(it defines {sorted(functions)})")

    var_axes = {n for n, a in axes.items() if a["type"] == "var"}
    seen_ids: dict[str, int] = {}
    for i, w in enumerate(doc["workloads"]):
        wp: tuple[PathPart, ...] = ("workloads", i)
        given = w.get("axes", {})
        for name in sorted(var_axes - set(given)):
            err(wp + ("axes",), f"missing value for var axis {name!r}")
        for name, value in given.items():
            if name not in axes:
                err(wp + ("axes", name), f"unknown axis {name!r}; declared axes: {sorted(axes)}")
            elif axes[name]["type"] == "const" and value != axes[name]["value"]:
                err(wp + ("axes", name), f"const axis {name!r} is {axes[name]['value']}, got {value}")
            elif axes[name]["type"] == "expr":
                err(wp + ("axes", name), f"axis {name!r} is computed ({axes[name]['expression']}); a workload cannot set it")
        for name in w.get("inputs", {}):
            if name not in d["inputs"]:
                err(wp + ("inputs", name), f"unknown input {name!r}; declared inputs: {sorted(d['inputs'])}")
            elif w["inputs"][name]["type"] == "custom" and custom is None:
                err(wp + ("inputs", name, "type"), "a 'custom' input needs definition.custom_inputs_entrypoint, "
                    "the reference's function that makes it")
            elif d["inputs"][name].get("shape", []) is None and w["inputs"][name]["type"] not in ("scalar", "custom"):
                err(wp + ("inputs", name, "type"), f"input {name!r} is a scalar: expected type 'scalar' "
                    "(or 'custom', made by the custom_inputs_entrypoint)")
        for name in d["inputs"]:
            if d["inputs"][name].get("shape", []) is None and name not in w.get("inputs", {}):
                err(wp + ("inputs",), f"scalar input {name!r} needs a 'scalar' generator with a value")
        for name in w.get("dtypes", {}):
            if name not in tensors:
                err(wp + ("dtypes", name), f"unknown tensor {name!r}; declared: {sorted(tensors)}")
        if not var_axes - set(given):  # else a missing axis is reported above
            try:
                values = resolve_axes(axes, given)
            except ExpressionError as exc:
                err(wp + ("axes",), str(exc))
                values = {}
            for field, formula in formulas.items() if values else ():
                try:
                    evaluate(formula, values)
                except ExpressionError as exc:
                    err(wp, f"definition.{field} = {formula!r} at {_axes_text(values)}: {exc}")
            for constraint in constraints if values else ():
                try:
                    if not holds(constraint, values):
                        err(wp + ("axes",), f"constraint {constraint!r} does not hold at {_axes_text(values)}")
                except ExpressionError as exc:
                    err(wp + ("axes",), f"constraint {constraint!r} at {_axes_text(values)}: {exc}")
        wid = str(w.get("id", i))
        if wid in seen_ids:
            err(wp + ("id",), f"duplicate workload id {wid!r} (also workloads[{seen_ids[wid]}])")
        seen_ids[wid] = i
        for name, gen in w.get("inputs", {}).items():
            if gen.get("type") == "safetensors" and not (_base_dir(loc, wp + ("inputs", name)) / gen["path"]).is_file():
                err(wp + ("inputs", name, "path"), f"safetensors file {gen['path']!r} does not exist (a relative path is "
                    "looked for below the workload file's folder, the TraceSet root and $FLASHINFER_TRACE_DIR, "
                    "where upstream's flashinfer-trace data goes)")

    names: dict[str, int] = {}
    for i, s in enumerate(doc["solutions"]):
        sp: tuple[PathPart, ...] = ("solutions", i)
        base = _base_dir(loc, sp)
        key = s["name"].casefold()  # names that differ only in case share a log file on some file systems
        if key in RESERVED_NAMES or key.startswith("reference."):
            err(sp + ("name",), f"the name {s['name']!r} is reserved: the reference's log is logs/reference.<definition>.log")
        elif key in names:
            err(sp + ("name",), f"duplicate solution name {s['name']!r} (also solutions[{names[key]}])")
        names[key] = i
        if "definition" in s and s["definition"] != d["name"]:
            err(sp + ("definition",), f"solution is for {s['definition']!r}, this manifest defines {d['name']!r}")
        entry_file, _, symbol = s["entry_point"].partition("::")
        if not (base / entry_file).is_file():
            err(sp + ("entry_point",), f"entry file {entry_file!r} does not exist (looked in {display(base)})")
        elif s.get("expected_status", "PASSED") != "COMPILE_ERROR":
            sources = [base / src for src in s.get("sources", []) if (base / src).is_file()]
            problem = entry_problem(base / entry_file, symbol, s["language"], sources)
            if problem:
                err(sp + ("entry_point",), problem)
        for j, src in enumerate(s.get("sources", [])):
            if not (base / src).is_file():
                err(sp + ("sources", j), f"source file {src!r} does not exist (looked in {display(base)})")
    return errs


def _near(name: str, names: Any) -> str:
    import difflib
    close = difflib.get_close_matches(name, sorted(names), n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


def entry_problem(file: Path, symbol: str, language: str, sources: list[Path]) -> str | None:
    """Why `symbol` cannot be the entry point of `file`, found without running it: a Python file's
    top-level names (AST), or, for C++, the symbol anywhere in its sources (the export names it);
    None when it is there or cannot be told (a syntax error is the build's to report, `import *`)."""
    import ast
    import re
    try:
        text = read_text(file)
    except ManifestError:
        return None  # reported where the file is read for the run
    if language in CPP_LANGUAGES:
        texts = [text] + [read_text(p) for p in sources if p.suffix in CPP_COMPILED + CPP_HEADERS]
        if any(re.search(rf"\b{re.escape(symbol)}\b", t) for t in texts):
            return None
        exported = {m for t in texts for m in re.findall(r'm\.def\(\s*"([A-Za-z_][A-Za-z0-9_]*)"', t)}
        return (f"no {symbol!r} in {file.name} or its sources: the extension must export it "
                f"(m.def(\"{symbol}\", ...)){_near(symbol, exported)}")
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    names: set[str] = set()
    todo = list(tree.body)
    while todo:  # top-level statements, and those in top-level if/try/with/for blocks (maybe defined)
        node = todo.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names |= {n.id for t in node.targets for n in ast.walk(t) if isinstance(n, ast.Name)}
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign)) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            if any(a.name == "*" for a in node.names):
                return None  # names only running it would tell
            names |= {(a.asname or a.name).split(".")[0] for a in node.names}
        elif isinstance(node, (ast.If, ast.Try, ast.With, ast.For, ast.While)):
            todo += [n for field in ("body", "orelse", "finalbody") for n in getattr(node, field, [])]
            todo += [n for h in getattr(node, "handlers", []) for n in h.body]
    if symbol in names:
        return None
    return f"{file.name} defines no top-level {symbol!r}{_near(symbol, names)}"


def _axes_text(values: dict[str, Any]) -> str:
    text = ", ".join(f"{k}={v}" for k, v in values.items())
    return text if len(text) <= 200 else text[:200] + "..."


def _build(doc: dict[str, Any], loc: Locator, path: Path) -> Manifest:
    d = doc["definition"]
    ref = d["reference"]
    if isinstance(ref, str):
        reference = Reference(ref, "run", loc(("definition", "reference")))
    elif "file" in ref:
        file = _base_dir(loc, ("definition", "reference")) / ref["file"]
        reference = Reference(read_text(file), ref.get("entry", "run"), display(file))
    else:
        reference = Reference(ref["source"], ref.get("entry", "run"), loc(("definition", "reference")))

    def specs(section: str) -> dict[str, TensorSpec]:
        out = {}
        for name, s in d[section].items():
            shape = s.get("shape", [])
            out[name] = TensorSpec(name, None if shape is None else tuple(shape), s["dtype"])
        return out

    definition = Definition(
        name=d["name"], description=d.get("description", ""),
        axes={n: Axis(n, a["type"], a.get("value"), a.get("expression")) for n, a in d["axes"].items()},
        inputs=specs("inputs"), outputs=specs("outputs"), reference=reference,
        flops=d.get("flops"), bytes=d.get("bytes"), constraints=tuple(d.get("constraints", ())),
        custom_inputs=d.get("custom_inputs_entrypoint"))

    workloads = []
    for i, w in enumerate(doc["workloads"]):
        axes = resolve_axes(d["axes"], w["axes"])
        dtypes = {n: s.dtype for n, s in {**definition.inputs, **definition.outputs}.items()}
        dtypes.update(w.get("dtypes", {}))
        seed = int(w.get("seed", i))
        gens = {}
        for name in definition.inputs:
            g = dict(w.get("inputs", {}).get(name, {"type": "random"}))
            kind = g.pop("type")
            if kind == "safetensors":
                g["path"] = str(_base_dir(loc, ("workloads", i, "inputs", name)) / g["path"])
            gens[name] = Generator(kind, g)
        out_dtypes = [dtypes[n] for n in definition.outputs]
        atol, rtol = max((DEFAULT_TOLERANCE.get(t, (0.0, 0.0)) for t in out_dtypes), key=lambda p: p[0])
        tol = w.get("tolerance", {})
        cap = tol.get("max_error_cap")
        tolerance = Tolerance(float(tol.get("atol", atol)), float(tol.get("rtol", rtol)), float(tol.get("max_mismatch", 0.0)),
                              None if cap is None else float(cap))
        wid = str(w.get("id") or "_".join(f"{k}={v}" for k, v in w["axes"].items()) or f"w{i}")
        workloads.append(Workload(wid, axes, dtypes, gens, tolerance, seed))

    solutions = []
    for i, s in enumerate(doc["solutions"]):
        base = _base_dir(loc, ("solutions", i))
        file, symbol = s["entry_point"].split("::")
        default_devices = ("cpu", "cuda", "npu") if s["language"] == "pytorch" else ("cuda",)
        solutions.append(Solution(
            name=s["name"], language=s["language"], entry_file=(base / file).resolve(), entry_symbol=symbol,
            sources=tuple((base / src).resolve() for src in s.get("sources", [])),
            destination_passing_style=bool(s.get("destination_passing_style", False)),
            devices=tuple(s.get("devices", default_devices)), origin=loc(("solutions", i)),
            description=s.get("description", ""), expected_status=s.get("expected_status", "PASSED"),
            build=dict(s.get("build", {}))))

    bench = BenchConfig(**doc.get("bench", {}))
    return Manifest(path=path, definition=definition, workloads=tuple(workloads), solutions=tuple(solutions), bench=bench)


def load_manifest(path: str | Path, problem: Any = None) -> Manifest:
    """Load, validate and cross-check; raises ManifestError listing every problem found. With
    `problem` (a `flashinfer.Problem`: upstream files named one by one) those files are read."""
    path = Path(path)
    first: list[FieldError] = []  # what an upstream problem's import could not translate
    if problem is not None or path.is_dir():
        from harness.spec.flashinfer import Problem, import_problem
        doc, loc, first = import_problem(problem if problem is not None else Problem(folder=path))
    else:
        doc, loc = load_document(path)
    schema = validate(doc, "manifest", loc)
    try:  # cross-checks on a document the schema refused still say what they can (all problems at once)
        cross = _cross_check(doc, loc)
    except Exception:  # noqa: BLE001
        cross = []  # the schema's errors are why: a part the cross-checks need is missing or malformed
    errors = first + schema + [e for e in cross if e not in schema]
    if errors:
        raise ManifestError(errors)
    return _build(doc, loc, path)


def with_bench_overrides(manifest: Manifest, overrides: dict[str, Any]) -> Manifest:
    """Command-line timing options win over the manifest's `bench` section."""
    return replace(manifest, bench=apply_overrides(manifest.bench, knob_overrides(overrides)))


def resolve_manifest_path(name: str, manifests_dir: Path) -> Path:
    """`make bench MANIFEST=rmsnorm.yaml` names a file in manifests/; an existing path is taken as is."""
    path = Path(name)
    if path.exists() or path.is_absolute():
        return path
    candidate = manifests_dir / name
    return candidate if candidate.exists() else path


def has_top_level_key(path: str | Path, key: str) -> bool:
    """Cheap sniff of what a YAML/JSON file is: a suite has `problems:`, a bench-module manifest
    `bench_module:`, a manifest neither. Unreadable files are none of them (loading says why)."""
    path = Path(path)
    if not path.is_file() or path.suffix not in (".yaml", ".yml", ".json"):
        return False
    try:
        doc = read_structured(path)
    except ManifestError:
        return False
    return isinstance(doc, dict) and key in doc


def is_suite(path: str | Path) -> bool:
    """A suite file (`problems:`) or a FlashInfer-Bench TraceSet root (many problems)."""
    from harness.spec.flashinfer import is_traceset
    return has_top_level_key(path, "problems") or is_traceset(Path(path))


def _load_all(problems: list[tuple[Path, Any]], where: str) -> list[Manifest]:
    """Every problem loaded, every problem of every one reported at once."""
    errors: list[FieldError] = []
    manifests = []
    for path, problem in problems:
        try:
            manifests.append(load_manifest(path, problem))
        except ManifestError as exc:
            errors.extend(exc.errors)
    if not problems:
        errors.append(FieldError(where, (), "the TraceSet has no definitions (definitions/**/*.json)"))
    if errors:
        raise ManifestError(errors)
    return manifests


def load_suite(path: str | Path) -> list[Manifest]:
    """The problems of a suite (schemas/suite.schema.json), each loaded as a manifest and cut down to
    the workloads/solutions its entry names; a plain manifest is a suite of one. Every problem of
    every manifest is reported at once."""
    path = Path(path)
    from harness.spec.flashinfer import is_traceset, traceset_problems
    if is_traceset(path):
        return _load_all([(path, p) for p in traceset_problems(path)], display(path))
    if not is_suite(path):
        return [load_manifest(path)]
    where = display(path)
    doc = read_structured(path)
    errors = validate(doc, "suite", Locator(where))
    if errors:
        raise ManifestError(errors)
    base = path.resolve().parent
    manifests: list[Manifest] = []
    seen: dict[str, int] = {}
    for i, entry in enumerate(doc["problems"]):
        spec = {"path": entry} if isinstance(entry, str) else entry
        pattern = spec["path"]
        files = sorted(globlib.glob(str(base / pattern))) if any(c in pattern for c in "*?[") else [str(base / pattern)]
        if not files:
            errors.append(FieldError(where, ("problems", i), f"pattern {pattern!r} matches no manifest"))
        for file in files:
            try:
                m = load_manifest(file)
            except ManifestError as exc:
                errors.extend(exc.errors)
                continue
            name = m.definition.name
            if name in seen:
                errors.append(FieldError(where, ("problems", i),
                                         f"definition {name!r} is already in the suite (problems[{seen[name]}])"))
                continue
            seen[name] = i
            for key, have in (("workloads", [w.id for w in m.workloads]), ("solutions", [s.name for s in m.solutions])):
                unknown = sorted(set(spec.get(key, [])) - set(have))
                if unknown:
                    errors.append(FieldError(where, ("problems", i, key), f"{name} has no {key} {unknown}; it has {have}"))
            keep_w, keep_s = spec.get("workloads"), spec.get("solutions")
            m = replace(m, workloads=tuple(w for w in m.workloads if not keep_w or w.id in keep_w),
                        solutions=tuple(s for s in m.solutions if not keep_s or s.name in keep_s))
            manifests.append(with_bench_overrides(m, doc.get("bench", {})))
    if errors:
        raise ManifestError(errors)
    return manifests
