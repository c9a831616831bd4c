"""The package's layers: each sub-package imports only the layers below it, and no module imports
itself back through a cycle. Read from the source (AST), function-local imports included, so a
lazy import cannot hide an upward edge."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

from harness.paths import PACKAGE_DIR

# lowest first; a module may import its own layer and those before it
LAYERS = [{"paths", "errors", "logs", "bytecode"}, {"spec"}, {"results"}, {"measure"}, {"execute"}, {"benchmod"}, {"run"},
          {"launcher"}, {"cli"}, {"__main__"}]


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE_DIR.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path: Path) -> set[str]:
    """Every harness module `path` imports, absolute or relative, at any depth of the file."""
    me = module_name(path)
    package = me if path.name == "__init__.py" else me.rpartition(".")[0]
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names if a.name.split(".")[0] == "harness"}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            if base.split(".")[0] != "harness":
                continue
            out.add(base)
            out |= {f"{base}.{a.name}" for a in node.names}  # `from harness.x import module`
    return out


def graph() -> dict[str, set[str]]:
    files = {module_name(p): p for p in PACKAGE_DIR.rglob("*.py")}
    return {m: {i for i in imports_of(p) if i in files and i != m} for m, p in files.items()}


def layer_of(module: str) -> int:
    parts = module.split(".")
    return next(i for i, names in enumerate(LAYERS) if parts[1] in names) if len(parts) > 1 else -1


def test_every_subpackage_has_a_layer() -> None:
    tops = {p.name.removesuffix(".py") for p in PACKAGE_DIR.iterdir() if p.name != "__init__.py"
            and (p.suffix == ".py" or (p / "__init__.py").is_file())}
    assert tops <= set().union(*LAYERS), tops - set().union(*LAYERS)


def test_layers_import_only_downward() -> None:
    upward = sorted(f"{m} -> {i}" for m, deps in graph().items() for i in deps if layer_of(i) > layer_of(m))
    assert not upward, "\n".join(upward)


def test_no_import_cycles() -> None:
    g = graph()
    state: dict[str, int] = {}
    cycles: list[str] = []

    def visit(m: str, stack: list[str]) -> None:
        state[m] = 1
        for d in sorted(g[m]):
            if state.get(d) == 1:
                cycles.append(" -> ".join(stack[stack.index(d):] + [d]) if d in stack else f"{m} -> {d}")
            elif d not in state:
                visit(d, stack + [d])
        state[m] = 2

    for m in sorted(g):
        if m not in state:
            visit(m, [m])
    assert not cycles, "\n".join(cycles)


@pytest.mark.parametrize("layer", ["spec", "results"])
def test_lower_layers_need_no_torch(layer: str) -> None:
    """Reports can be merged, compared and rendered (and manifests validated) where torch is not installed."""
    heavy = sorted(f"{module_name(p)} imports {name}" for p in (PACKAGE_DIR / layer).rglob("*.py")
                   for node in ast.walk(ast.parse(p.read_text())) if isinstance(node, (ast.Import, ast.ImportFrom))
                   for name in ([a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""])
                   if name.split(".")[0] in ("torch", "numpy"))
    assert not heavy, heavy
