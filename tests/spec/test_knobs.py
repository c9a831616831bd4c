"""One knob table: BenchConfig's fields, the schemas' bench sections, the `harness run` options and the
flags `harness reproduce` pins all agree, because the options and flags are derived from the fields."""
from __future__ import annotations

import json
import shlex
import typing
from dataclasses import asdict, fields
from typing import Any

import pytest

from harness.cli import build_parser
from harness.paths import SCHEMA_DIR
from harness.spec.knobs import apply_overrides, knob_argv, knob_overrides, knobs
from harness.spec.model import BenchConfig

JSON_TYPES = {"number": float, "integer": int, "boolean": bool, "string": str}


def bench_sections() -> dict[str, dict[str, Any]]:
    """schema file name -> its top-level `bench` object, `$ref`s followed (local or into another schema)."""
    out = {}
    for path in sorted(SCHEMA_DIR.glob("*.schema.json")):
        section = json.loads(path.read_text()).get("properties", {}).get("bench")
        while section is not None and "$ref" in section:
            file, _, pointer = section["$ref"].partition("#")
            node = json.loads((SCHEMA_DIR / (file or path.name)).read_text())
            for part in pointer.strip("/").split("/"):
                node = node[part]
            section = node
        if section is not None:
            out[path.name] = section
    return out


def run_options(argv: list[str]) -> Any:
    """`argv` parsed as `harness run`'s options, by the real command-line parser."""
    return build_parser().parse_args(["run", "m.yaml", *argv])


def test_every_schema_with_a_bench_section_is_checked() -> None:
    assert {"manifest.schema.json", "suite.schema.json", "benchmodule.schema.json"} <= set(bench_sections())


@pytest.mark.parametrize("schema", sorted(bench_sections()))
def test_schema_bench_properties_are_the_config_fields(schema: str) -> None:
    props = bench_sections()[schema]["properties"]
    hints = typing.get_type_hints(BenchConfig)
    assert list(props) and set(props) == {f.name for f in fields(BenchConfig)}
    for name, (kind, k) in knobs().items():
        prop, default = props[name], BenchConfig.__dataclass_fields__[name].default
        if "type" in prop:
            assert JSON_TYPES[prop["type"]] is kind is hints[name], name
        if "enum" in prop:  # the flags spell exactly the values the schema allows
            assert kind is str and set(prop["enum"]) == set(k.choices) | {s.value for s in k.switches}, name
            assert default in prop["enum"], name
        if kind is bool:
            assert {s.value for s in k.switches} == {True, False}, f"{name} cannot be pinned both ways"


# every flag a user or a script may already pass keeps its meaning, and the new ones exist
@pytest.mark.parametrize("argv, expected", [
    ("--warm-cache", {"cache": "warm"}), ("--cold-cache", {"cache": "cold"}),
    ("--timer cupti", {"timer": "cupti"}), ("--timer events", {"timer": "events"}),
    ("--cuda-graph", {"cuda_graph": True}), ("--no-cuda-graph", {"cuda_graph": False}),
    ("--graph-batch 7", {"graph_batch": 7}), ("--warmup-ms 1.5", {"warmup_ms": 1.5}),
    ("--warmup-count 2", {"warmup_count": 2}), ("--min-samples 4", {"min_samples": 4}),
    ("--max-samples 9", {"max_samples": 9}), ("--min-time-ms 0.25", {"min_time_ms": 0.25}),
    ("--max-time-s 2", {"max_time_s": 2.0}), ("--rse-threshold 0.01", {"rse_threshold": 0.01}),
    ("--rounds 5", {"correctness_rounds": 5}), ("--compile-timeout-s 30", {"compile_timeout_s": 30.0}),
    ("--run-timeout-s 12.5", {"run_timeout_s": 12.5}), ("--no-fresh-inputs", {"fresh_inputs": False}),
    ("--fresh-inputs", {"fresh_inputs": True}), ("--chunk 4", {"chunk": 4}),
    ("--suspicious-speedup 50", {"suspicious_speedup": 50.0}),
    ("--warm-cache --cold-cache", {"cache": "cold"}),  # the last switch wins, as for any repeated option
    ("--seed 3 --mode events --quiet", {}),           # run options are no knobs
])
def test_parser_accepts_every_flag_and_overrides_hold_only_what_was_set(argv: str, expected: dict[str, Any]) -> None:
    got = knob_overrides(run_options(shlex.split(argv)))
    assert got == expected and all(type(got[k]) is type(v) for k, v in expected.items())


def test_bad_values_are_refused_by_the_parser(capsys: pytest.CaptureFixture) -> None:
    for argv in (["--timer", "ncu"], ["--chunk", "2.5"], ["--warmup-ms", "fast"]):
        with pytest.raises(SystemExit):
            run_options(argv)
    assert "invalid choice: 'ncu'" in capsys.readouterr().err


def test_overrides_from_a_bench_mapping_and_apply() -> None:
    suite_bench = {"max_time_s": 3, "cache": "warm", "mode": "events", "bench_module": "x.py", "chunk": None}
    assert knob_overrides(suite_bench) == {"max_time_s": 3, "cache": "warm"}
    cfg = apply_overrides(BenchConfig(), knob_overrides(suite_bench))
    assert cfg == BenchConfig(max_time_s=3, cache="warm")
    with pytest.raises(ValueError, match="not timing knobs: mode"):
        apply_overrides(BenchConfig(), {"mode": "events"})


def changed_config() -> BenchConfig:
    """A config with every knob away from its default; floats that only an exact spelling keeps."""
    cfg = BenchConfig(warmup_ms=0.1 + 0.2, warmup_count=0, min_samples=1, max_samples=123457, min_time_ms=1e-7,
                      max_time_s=2.5, rse_threshold=1 / 3, chunk=1, correctness_rounds=9, cache="warm",
                      cuda_graph=True, graph_batch=3, compile_timeout_s=12345.678901234567, run_timeout_s=7.0,
                      suspicious_speedup=1.5, timer="cupti", exact_repeats=True, fresh_inputs=False)
    assert all(getattr(cfg, f.name) != f.default for f in fields(BenchConfig)), "every field must differ"
    return cfg


@pytest.mark.parametrize("cfg", [changed_config(), BenchConfig()], ids=["every-knob-changed", "defaults"])
def test_knob_argv_round_trips_through_the_parser(cfg: BenchConfig) -> None:
    overrides = knob_overrides(run_options(knob_argv(asdict(cfg))))
    assert set(overrides) == {f.name for f in fields(BenchConfig)}  # every knob pinned, defaults included
    back = apply_overrides(BenchConfig(), overrides)
    assert back == cfg
    assert all(type(getattr(back, f.name)) is type(getattr(cfg, f.name)) for f in fields(BenchConfig))


def test_knob_argv_of_a_bench_module_report() -> None:
    bench = {**asdict(BenchConfig()), "mode": "torch-profiler", "bench_module": "/ws/bench_op.py"}
    argv = knob_argv(bench)
    assert argv[-2:] == ["--mode", "torch-profiler"] and "/ws/bench_op.py" not in argv
    assert run_options(argv).mode == "torch-profiler"


@pytest.mark.parametrize("bench, message", [
    ({"cache": "lukewarm"}, "cache='lukewarm'"), ({"cuda_graph": 1}, "cuda_graph=1"),
    ({"timer": "ncu"}, "timer='ncu'"), ({"chunk": 2.5}, "chunk=2.5"), ({"warmup_ms": True}, "warmup_ms=True"),
    ({"flush_l3": True}, "unknown knobs: flush_l3"),
])
def test_knob_argv_refuses_what_no_flag_can_say(bench: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message.replace("(", r"\(")):
        knob_argv(bench)
