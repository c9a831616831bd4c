"""Shared fixtures: small manifests built in tmp_path so tests own their data and stay fast."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml


@pytest.fixture
def write_manifest(tmp_path: Path):
    def write(doc: dict[str, Any], name: str = "manifest.yaml") -> Path:
        path = tmp_path / name
        path.write_text(yaml.safe_dump(doc, sort_keys=False))
        return path
    return write
