"""Reading the files a manifest is made of, which are untrusted input: bounded, and every failure a
`FieldError` (exit 2), never a traceback or a hang.

The bounds, all checked before the document reaches a recursive walker (`$include` expansion, JSON
Schema, the FlashInfer importer):

- `MAX_FILE_BYTES`: a manifest, included file, FlashInfer JSON/JSONL or reference file is at most
  1 MiB. The shipped manifests are under 2 KiB; parsing 1 MiB of dense YAML takes about 4 s on a
  loaded 2-core machine, so the cap is also what keeps `validate` under 5 seconds.
- `MAX_DEPTH`: 64 levels of nesting (a manifest uses about 8). YAML is composed by a bounded
  composer, so 10000 `[` never reach Python's recursion limit; a JSON parser's RecursionError is
  caught.
- `MAX_NODES`: 50000 nodes once YAML aliases are expanded (about 10000 workloads; JSON Schema
  checks that many in about a second). A "billion laughs" document is a few lines whose aliases
  expand to 10^9 nodes; its size is counted on the alias graph (each shared node once), so the
  count itself is fast. Recursive aliases (`&a [*a]`) are refused.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable

import yaml
from yaml.composer import Composer
from yaml.constructor import SafeConstructor
from yaml.nodes import MappingNode, Node, SequenceNode
from yaml.resolver import Resolver

from harness.spec.schema import FieldError, ManifestError, display

MAX_FILE_BYTES = 1 << 20
MAX_DEPTH = 64
MAX_NODES = 50_000

try:  # libyaml's event parser is five times faster; composing stays in Python, where it is bounded
    from yaml._yaml import CParser as _Parser
except ImportError:  # pragma: no cover - PyYAML built without libyaml
    from yaml.parser import Parser
    from yaml.reader import Reader
    from yaml.scanner import Scanner

    class _Parser(Reader, Scanner, Parser):  # type: ignore[no-redef]
        def __init__(self, stream: str) -> None:
            Reader.__init__(self, stream)
            Scanner.__init__(self)
            Parser.__init__(self)


class _Shape(Exception):
    """The document is too large or too deep once aliases are expanded."""


def _measure(root: Any, children: Callable[[Any], list[Any] | None]) -> int:
    """Nodes of `root` with shared (aliased) parts counted every time they appear, but computed once
    per shared container; raises _Shape past `MAX_NODES` or `MAX_DEPTH`, or on a cycle.
    `children(node)` is None for a leaf."""
    known: dict[int, tuple[int, int] | None] = {}  # id -> (expanded size, height); None while visiting

    def visit(node: Any, depth: int) -> tuple[int, int]:
        kids = children(node)
        if kids is None:
            return 1, 0
        if depth >= MAX_DEPTH:
            raise _Shape(f"nesting is deeper than {MAX_DEPTH} levels")
        key = id(node)
        if key in known:
            hit = known[key]
            if hit is None:
                raise _Shape("a YAML alias refers to a node that contains it (a recursive document)")
            if depth + hit[1] > MAX_DEPTH:
                raise _Shape(f"nesting is deeper than {MAX_DEPTH} levels once YAML aliases are expanded")
            return hit
        known[key] = None
        size, height = 1, 0
        for child in kids:
            s, h = visit(child, depth + 1)
            size, height = size + s, max(height, h + 1)
            if size > MAX_NODES:
                raise _Shape(f"document has more than {MAX_NODES} values (each use of a YAML alias counted), "
                             f"at most {MAX_NODES} are allowed")
        known[key] = (size, height)
        return size, height

    return visit(root, 0)[0]


def _yaml_children(node: Node) -> list[Any] | None:
    if isinstance(node, MappingNode):  # keys count too, and so do `<<` merges, which copy their source
        return [part for pair in node.value for part in pair]
    return node.value if isinstance(node, SequenceNode) else None


def _data_children(node: Any) -> list[Any] | None:
    if isinstance(node, dict):
        return [part for pair in node.items() for part in pair]
    return node if isinstance(node, list) else None


class _Loader(Composer, _Parser, SafeConstructor, Resolver):
    """A SafeLoader whose composer refuses nesting deeper than `MAX_DEPTH` before it recurses, and
    whose document is measured with aliases expanded before anything is constructed from it."""

    def __init__(self, stream: str) -> None:
        _Parser.__init__(self, stream)
        Composer.__init__(self)
        SafeConstructor.__init__(self)
        Resolver.__init__(self)
        self.depth = 0
        self.nodes = 0

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.depth >= MAX_DEPTH:
            raise _Shape(f"nesting is deeper than {MAX_DEPTH} levels (line {self.peek_event().start_mark.line + 1})")
        self.nodes += 1  # nodes as written; stops a dense file early, before the expanded count below
        if self.nodes > MAX_NODES:
            raise _Shape(f"document has more than {MAX_NODES} values, at most {MAX_NODES} are allowed")
        self.depth += 1
        try:
            return super().compose_node(parent, index)
        finally:
            self.depth -= 1

    def get_single_node(self) -> Any:
        node = super().get_single_node()
        if node is not None:
            self.nodes = _measure(node, _yaml_children)
        return node


def read_text(path: Path) -> str:
    """The file as text: a regular file of at most `MAX_FILE_BYTES` bytes of UTF-8."""
    where = display(path)
    if not path.is_file():
        raise ManifestError([FieldError(where, (), "expected a regular file: it does not exist or is not a file")])
    try:
        with path.open("rb") as fh:
            data = fh.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        raise ManifestError([FieldError(where, (), f"cannot read file: {exc.strerror}")])
    if len(data) > MAX_FILE_BYTES:
        raise ManifestError([FieldError(where, (), f"file is larger than {MAX_FILE_BYTES >> 20} MiB, "
                                                   "the most a manifest file may be")])
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[:exc.start].count(b"\n") + 1
        raise ManifestError([FieldError(where, (), f"expected UTF-8 text: byte 0x{data[exc.start]:02x} at line {line} "
                                                   f"(offset {exc.start}) is not")])


def parse_json(text: str, where: str) -> tuple[Any, int]:
    """A JSON document and its node count, or ManifestError naming what is wrong."""
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ManifestError([FieldError(where, (), f"invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}")])
    except RecursionError:
        raise ManifestError([FieldError(where, (), f"nesting is deeper than {MAX_DEPTH} levels")])
    try:
        return doc, _measure(doc, _data_children)
    except _Shape as exc:
        raise ManifestError([FieldError(where, (), str(exc))])


def parse_yaml(text: str, where: str) -> tuple[Any, int]:
    """A YAML document (safe tags only) and its node count once aliases are expanded."""
    loader = _Loader(text)
    try:
        doc = loader.get_single_data()
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or str(exc)
        raise ManifestError([FieldError(where, (), f"invalid YAML{at}: {problem}")])
    except _Shape as exc:
        raise ManifestError([FieldError(where, (), str(exc))])
    except RecursionError:  # the bounded composer makes this unreachable; kept so it is never a traceback
        raise ManifestError([FieldError(where, (), f"nesting is deeper than {MAX_DEPTH} levels")])
    finally:
        loader.dispose()
    return doc, loader.nodes


def read_structured(path: Path) -> Any:
    """Parse a YAML or JSON file within the bounds above; every problem is a FieldError naming the file."""
    path = Path(path)
    text = read_text(path)
    parse = parse_json if path.suffix == ".json" else parse_yaml
    return parse(text, display(path))[0]
