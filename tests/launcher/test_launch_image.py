"""Content tags: the same source gives the same tag, and the build context is exactly what was hashed."""
from __future__ import annotations

import io
import tarfile
from pathlib import Path

import pytest

from harness.launcher.image import BuildError, ImageRecipe, _build_log


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    (tmp_path / "harness" / "sub").mkdir(parents=True)
    (tmp_path / "harness" / "__init__.py").write_text("")
    (tmp_path / "harness" / "sub" / "mod.py").write_text("X = 1\n")
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    (tmp_path / "requirements.txt").write_text("pyyaml\n")
    (tmp_path / "Dockerfile.cuda").write_text("FROM scratch\n")
    (tmp_path / "Dockerfile.npu").write_text("FROM scratch\n")
    (tmp_path / "notes.txt").write_text("not in the image\n")
    return tmp_path


def test_same_source_same_tag(repo: Path) -> None:
    a, b = ImageRecipe("cuda", root=repo), ImageRecipe("cuda", root=repo)
    assert a.tag == b.tag and a.tag.startswith("opbench-cuda:") and len(a.tag.split(":")[1]) == 16
    assert ImageRecipe("cpu", root=repo).tag == a.tag   # cpu runs use the CUDA image
    assert ImageRecipe("npu", root=repo).tag.startswith("opbench-npu:")


def test_tag_follows_source_dockerfile_and_args_only(repo: Path) -> None:
    base = ImageRecipe("cuda", root=repo).tag
    (repo / "notes.txt").write_text("changed\n")
    (repo / "harness" / "__pycache__").mkdir()
    (repo / "harness" / "__pycache__" / "mod.cpython-311.pyc").write_bytes(b"\0")
    (repo / "Dockerfile.npu").write_text("FROM other\n")
    assert ImageRecipe("cuda", root=repo).tag == base
    assert ImageRecipe("cuda", {"TORCH_VERSION": "2.9.0"}, root=repo).tag != base
    (repo / "harness" / "sub" / "mod.py").write_text("X = 2\n")
    changed = ImageRecipe("cuda", root=repo).tag
    assert changed != base
    (repo / "Dockerfile.cuda").write_text("FROM scratch\nLABEL a=b\n")
    assert ImageRecipe("cuda", root=repo).tag not in (base, changed)


def test_context_is_the_hashed_files_and_reproducible(repo: Path) -> None:
    recipe = ImageRecipe("cuda", root=repo)
    first = recipe.context_tar().getvalue()
    assert first == recipe.context_tar().getvalue()
    with tarfile.open(fileobj=io.BytesIO(first)) as tar:
        names = tar.getnames()
    assert names[0] == "Dockerfile.cuda"
    assert sorted(names[1:]) == ["harness/__init__.py", "harness/sub/mod.py", "pyproject.toml", "requirements.txt"]


def test_build_failure_names_the_failing_step() -> None:
    chunks = [{"stream": "Step 1/3 : FROM base\n"}, {"stream": " ---> abc\n"},
              {"stream": "Step 2/3 : RUN make things\n"}, {"stream": "make: *** no rule\n"},
              {"errorDetail": {"message": "The command '/bin/sh -c make things' returned a non-zero code: 2"},
               "error": "The command '/bin/sh -c make things' returned a non-zero code: 2"}]
    seen: list[str] = []
    with pytest.raises(BuildError) as info:
        _build_log(iter(chunks), seen.append)
    assert info.value.step == "Step 2/3 : RUN make things"
    text = str(info.value)
    assert text.startswith("image build failed at Step 2/3 : RUN make things")
    assert "returned a non-zero code: 2" in text and "make: *** no rule" in text
    assert info.value.exit_code == 3 and seen[-1] == "make: *** no rule"
