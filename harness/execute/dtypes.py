"""Manifest dtype names <-> torch dtypes, in one table."""
from __future__ import annotations

import torch

_TABLE = {
    "float64": torch.float64, "float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16,
    "float8_e4m3fn": getattr(torch, "float8_e4m3fn", None), "float8_e5m2": getattr(torch, "float8_e5m2", None),
    "int64": torch.int64, "int32": torch.int32, "int16": torch.int16, "int8": torch.int8, "uint8": torch.uint8,
    "bool": torch.bool,
}


def to_torch(name: str) -> torch.dtype:
    dtype = _TABLE.get(name)
    if dtype is None:
        raise ValueError(f"dtype {name!r} is not supported by this torch build")
    return dtype


def name_of(dtype: torch.dtype) -> str:
    for name, value in _TABLE.items():
        if value == dtype:
            return name
    return str(dtype).replace("torch.", "")
