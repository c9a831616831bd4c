"""The timing knobs on the command line, derived from `BenchConfig`'s one table (its fields' `Knob`s).

`add_knob_options` makes the `harness run` options, `knob_overrides` picks the knobs a user set out
of parsed options (or a suite's bench section), `apply_overrides` lays them over a config, and
`knob_argv` turns a report's recorded `bench` back into the flags that pin every knob to its value.
Nothing here lists a knob by name, so a field added to `BenchConfig` gets its option, its override
and its reproduce flag by construction.
"""
from __future__ import annotations

import argparse
import typing
from dataclasses import fields, replace
from typing import Any, Mapping

from harness.spec.model import BenchConfig, Knob

# keys a report's `bench` may hold that are no BenchConfig field: a bench-module run records its mode
# (a `harness run` option) and its module path (which comes back with the same manifest)
RUN_OPTIONS = {"mode": "--mode"}
NOT_FLAGS = frozenset({"bench_module"})


def knobs() -> dict[str, tuple[type, Knob]]:
    """Field name -> (its Python type, its command-line spelling), in BenchConfig's order."""
    hints = typing.get_type_hints(BenchConfig)
    bare = [f.name for f in fields(BenchConfig) if "knob" not in f.metadata]
    assert not bare, f"BenchConfig fields without a command-line spelling (declare them with knob()): {bare}"
    return {f.name: (hints[f.name], f.metadata["knob"]) for f in fields(BenchConfig)}


def add_knob_options(parser: argparse.ArgumentParser,
                     title: str = "timing (override the manifest's bench section)") -> None:
    """One option per value knob, one flag per switch; every dest is the field name, default None
    (= not set). The last of two switches for one knob wins, as for any repeated option."""
    group = parser.add_argument_group(title)
    for name, (kind, k) in knobs().items():
        if k.flag is not None:
            group.add_argument(k.flag, dest=name, type=kind, choices=k.choices or None, default=None,
                               help=k.help or None)
        for s in k.switches:
            group.add_argument(s.flag, dest=name, action="store_const", const=s.value, default=None, help=s.help)


def knob_overrides(options: argparse.Namespace | Mapping[str, Any]) -> dict[str, Any]:
    """The knobs that were set (not None), out of parsed options or a bench mapping; other keys are ignored."""
    values = vars(options) if isinstance(options, argparse.Namespace) else options
    return {name: values[name] for name in knobs() if values.get(name) is not None}


def apply_overrides(config: BenchConfig, overrides: Mapping[str, Any]) -> BenchConfig:
    """`config` with the given knobs replaced; a key that is no knob is a ValueError, not ignored."""
    unknown = sorted(set(overrides) - set(knobs()))
    if unknown:
        raise ValueError(f"not timing knobs: {', '.join(unknown)}")
    return replace(config, **overrides)


def knob_argv(bench: Mapping[str, Any]) -> list[str]:
    """`harness run` flags that pin every knob `bench` records (a report's `bench`) to its value.

    A knob absent (or null) in `bench` is not pinned; a bench module's `mode` becomes `--mode`, its
    `bench_module` path is skipped; a value a flag cannot express or any other key is a ValueError."""
    table = knobs()
    unknown = sorted(set(bench) - set(table) - set(RUN_OPTIONS) - NOT_FLAGS)
    if unknown:
        raise ValueError(f"bench records unknown knobs: {', '.join(unknown)}")
    argv: list[str] = []
    for name, (kind, k) in table.items():
        value = bench.get(name)
        if value is None:
            continue
        if k.switches:
            flag = next((s.flag for s in k.switches if s.value == value and type(s.value) is type(value)), None)
            if flag is None:
                raise ValueError(f"bench {name}={value!r}: expected one of {[s.value for s in k.switches]}")
            argv.append(flag)
        elif k.choices and value not in k.choices:
            raise ValueError(f"bench {name}={value!r}: expected one of {list(k.choices)}")
        else:
            argv += [k.flag, _spell(name, kind, value)]
    for name, flag in RUN_OPTIONS.items():
        if bench.get(name) is not None:
            argv += [flag, str(bench[name])]
    return argv


def _spell(name: str, kind: type, value: Any) -> str:
    """The value as text its option's type reads back exactly (repr keeps every digit of a float)."""
    if isinstance(value, bool) or not isinstance(value, (kind, int) if kind is float else kind):
        raise ValueError(f"bench {name}={value!r}: expected {kind.__name__}")
    return repr(value) if isinstance(value, float) else str(value)
