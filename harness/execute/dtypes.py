"""Manifest dtype names <-> torch dtypes, in one table."""
from __future__ import annotations

import torch

_TABLE = {
    "float64": torch.float64, "float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16,
    "float8_e4m3fn": getattr(torch, "float8_e4m3fn", None), "float8_e5m2": getattr(torch, "float8_e5m2", None),
    "int64": torch.int64, "int32": torch.int32, "int16": torch.int16, "int8": torch.int8, "uint8": torch.uint8,
    "bool": torch.bool, "float4_e2m1fn_x2": getattr(torch, "float4_e2m1fn_x2", None),
}
# E2M1 values by 3-bit code (the 4th bit is the sign): a packed fp4 byte holds two, low nibble first.
FP4_VALUES = (0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0)


def is_packed_fp4(dtype: torch.dtype) -> bool:
    """Two E2M1 values per byte: torch can hold and copy these but not fill, compare or convert them."""
    return dtype == getattr(torch, "float4_e2m1fn_x2", object())


def fp4_to_float(t: torch.Tensor) -> torch.Tensor:
    """A packed fp4 tensor as float32, two values per byte (last dimension doubled, low nibble first)."""
    b = t.view(torch.uint8)
    table = torch.tensor(FP4_VALUES + tuple(-v for v in FP4_VALUES), dtype=torch.float32, device=t.device)
    pair = torch.stack((table[(b & 0xF).long()], table[(b >> 4).long()]), dim=-1)
    return pair.reshape(*t.shape[:-1], t.shape[-1] * 2) if t.dim() else pair.reshape(2)


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
