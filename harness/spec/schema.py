"""JSON Schema validation that reports every problem at once, each as file + field path + expectation.

The schemas live in `schemas/` (draft 2020-12); this module only loads them, runs jsonschema and turns
its errors into `FieldError`s a person can act on.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterable, Sequence

from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError, best_match
from referencing import Registry, Resource

from harness.errors import InputError
from harness.paths import SCHEMA_DIR
from harness.spec.text import clean

PathPart = str | int


@dataclass(frozen=True)
class FieldError:
    file: str
    path: tuple[PathPart, ...]
    message: str

    def __str__(self) -> str:
        return f"{self.file}: {format_path(self.path) or '<top level>'}: {self.message}"


class ManifestError(InputError):
    """Raised with all the problems found in a manifest, never only the first."""

    def __init__(self, errors: Sequence[FieldError], subject: str = "manifest"):
        self.errors = list(errors)
        self.subject = subject
        super().__init__("\n".join(str(e) for e in self.errors))

    def lines(self, heading: str | None = None) -> list[str]:
        """Heading and one line per problem, control characters removed (they quote the input)."""
        return [clean(f"{heading or f'invalid {self.subject}'}: {len(self.errors)} problem(s)"),
                *(clean(f"  {e}") for e in self.errors)]


def display(path: Path) -> str:
    """`path` as a user names it in messages: relative to the current folder when it is below it."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def format_path(path: Iterable[PathPart]) -> str:
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out


@lru_cache(maxsize=None)
def _validator(name: str) -> Draft202012Validator:
    resources = []
    for file in SCHEMA_DIR.glob("*.schema.json"):
        schema = json.loads(file.read_text())
        resource = Resource.from_contents(schema)
        resources.append((schema["$id"], resource))
        resources.append((file.name, resource))
    registry = Registry().with_resources(resources)
    schema = json.loads((SCHEMA_DIR / f"{name}.schema.json").read_text())
    return Draft202012Validator(schema, registry=registry)


def _leaf_errors(error: ValidationError) -> list[ValidationError]:
    """Descend into oneOf/anyOf/allOf to the error that says what is actually wrong."""
    if error.context and error.validator in ("oneOf", "anyOf"):
        return _leaf_errors(best_match(error.context))
    if error.context and error.validator == "allOf":
        return [leaf for sub in error.context for leaf in _leaf_errors(sub)]
    return [error]


def _message(error: ValidationError) -> str:
    v, inst = error.validator, error.instance
    if v == "required":
        missing = [name for name in error.validator_value if name not in inst]
        return "missing required field " + ", ".join(repr(m) for m in missing)
    if v in ("additionalProperties", "unevaluatedProperties"):
        return f"unknown field(s): {error.message.split('(')[-1].rstrip(')')}"
    if v == "enum":
        return f"expected one of {list(error.validator_value)}, got {inst!r}"
    if v == "const":
        return f"expected {error.validator_value!r}, got {inst!r}"
    if v == "type":
        return f"expected {error.validator_value}, got {type(inst).__name__} {inst!r}"
    if v == "pattern":
        return f"expected a string matching {error.validator_value!r}, got {inst!r}"
    if v == "propertyNames":
        return f"bad name {inst!r}: {error.message}"
    return f"{error.message}"


def validate(document: Any, schema: str, locate: "Locator") -> list[FieldError]:
    """Validate `document` against `schemas/<schema>.schema.json`; `locate` maps a path to its file."""
    errors: list[FieldError] = []
    seen: set[tuple[tuple[PathPart, ...], str]] = set()
    for top in _validator(schema).iter_errors(document):
        for err in _leaf_errors(top):
            path = tuple(err.absolute_path)
            if err.validator == "propertyNames":
                path = path + (err.instance,)
            msg = _message(err)
            if (path, msg) in seen:
                continue
            seen.add((path, msg))
            errors.append(FieldError(locate(path), path, msg))
    errors.sort(key=lambda e: (e.file, format_path(e.path)))
    return errors


class Locator:
    """Remembers which file each subtree of a composed document came from (for `$include`)."""

    def __init__(self, root_file: str):
        self.root_file = root_file
        self.origins: dict[tuple[PathPart, ...], str] = {(): root_file}

    def add(self, path: tuple[PathPart, ...], file: str) -> None:
        self.origins[path] = file

    def __call__(self, path: tuple[PathPart, ...]) -> str:
        for n in range(len(path), -1, -1):
            hit = self.origins.get(tuple(path[:n]))
            if hit is not None:
                return hit
        return self.root_file
