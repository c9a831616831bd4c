"""Images named by their content: the tag is a hash of the Dockerfile, the build args and the harness source.

The build context is assembled here from the same file list the hash covers, so the tag and the image
can never disagree (and `.dockerignore` only matters for hand-run `docker build`).
"""
from __future__ import annotations

import hashlib
import io
import tarfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator

from harness.launcher.errors import ENVIRONMENT, LaunchError
from harness.paths import SOURCE_ROOT

REPO_ROOT = SOURCE_ROOT
CONTEXT = ("pyproject.toml", "requirements.txt", "requirements-cuda.txt", "README.md", "harness", "opbench", "schemas", "manifests")  # what the images COPY
SKIP_PARTS = {"__pycache__", ".pytest_cache"}
SKIP_SUFFIXES = (".pyc", ".pyo", ".so")
DOCKERFILES = {"cpu": "Dockerfile.cuda", "cuda": "Dockerfile.cuda", "npu": "Dockerfile.npu"}
REPOS = {"cpu": "opbench-cuda", "cuda": "opbench-cuda", "npu": "opbench-npu"}
HASH_LEN = 16


class BuildError(LaunchError):
    """The image build failed; `step` is the Dockerfile step that failed."""

    def __init__(self, step: str, error: str, tail: list[str]) -> None:
        lines = [f"image build failed at {step or 'the start'}", f"  {error.strip()}"]
        if tail:
            lines += ["  last output:"] + [f"    {t}" for t in tail]
        super().__init__("\n".join(lines), ENVIRONMENT)
        self.step, self.error = step, error


@dataclass(frozen=True)
class ImageRef:
    tag: str
    id: str
    digest: str   # registry digest (repo@sha256:...) once pushed, else the local image id


@dataclass(frozen=True)
class ImageRecipe:
    kind: str
    build_args: dict[str, str] = field(default_factory=dict)
    root: Path = REPO_ROOT
    repo: str | None = None

    @property
    def dockerfile(self) -> str:
        return DOCKERFILES[self.kind]

    @property
    def repository(self) -> str:
        return self.repo or REPOS[self.kind]

    def context_files(self) -> list[tuple[str, Path]]:
        """(name in the context, host path), sorted; the Dockerfile first."""
        files: list[tuple[str, Path]] = []
        for entry in CONTEXT:
            path = self.root / entry
            if path.is_file():
                files.append((entry, path))
            elif path.is_dir():
                for p in sorted(path.rglob("*")):
                    rel = p.relative_to(self.root)
                    if p.is_file() and not SKIP_PARTS & set(rel.parts) and not p.name.endswith(SKIP_SUFFIXES):
                        files.append((rel.as_posix(), p))
        dockerfile = self.root / self.dockerfile
        if not dockerfile.is_file():
            raise LaunchError(f"{dockerfile} not found")
        return [(self.dockerfile, dockerfile)] + sorted(files)

    def content_hash(self) -> str:
        h = hashlib.sha256()
        for key, value in sorted(self.build_args.items()):
            h.update(f"arg {key}={value}\n".encode())
        for name, path in self.context_files():
            data = path.read_bytes()
            h.update(f"file {name} {len(data)} {_mode(path):o}\n".encode())
            h.update(data)
        return h.hexdigest()[:HASH_LEN]

    @property
    def tag(self) -> str:
        return f"{self.repository}:{self.content_hash()}"

    def context_tar(self) -> io.BytesIO:
        """A reproducible tar (fixed owner and mtime) of exactly the hashed files."""
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w") as tar:
            for name, path in self.context_files():
                data = path.read_bytes()
                info = tarfile.TarInfo(name)
                info.size, info.mode, info.mtime = len(data), _mode(path), 0
                tar.addfile(info, io.BytesIO(data))
        buf.seek(0)
        return buf


def _mode(path: Path) -> int:
    return 0o755 if path.stat().st_mode & 0o111 else 0o644


def _describe(client: Any, ref: str) -> ImageRef | None:
    from docker.errors import ImageNotFound
    try:
        image = client.images.get(ref)
    except ImageNotFound:
        return None
    tags = image.tags or [ref]
    tag = ref if ref in tags else tags[0]
    digests = image.attrs.get("RepoDigests") or []
    mine = [d for d in digests if d.split("@")[0] == tag.rsplit(":", 1)[0]]
    return ImageRef(tag=tag, id=image.id, digest=(mine or digests or [image.id])[0])


def find(client: Any, ref: str) -> ImageRef | None:
    return _describe(client, ref)


def _build_log(chunks: Iterator[dict[str, Any]], log: Callable[[str], None]) -> None:
    """Follow the engine's build stream; raise BuildError naming the failing `Step i/n`."""
    step, tail = "", []
    for chunk in chunks:
        if "error" in chunk:
            detail = chunk.get("errorDetail", {}).get("message") or chunk["error"]
            raise BuildError(step, detail, tail[-15:])
        for line in str(chunk.get("stream", "")).splitlines():
            if not line.strip():
                continue
            if line.startswith("Step "):
                step = line.strip()
            tail.append(line.rstrip())
            log(line.rstrip())


def ensure(client: Any, recipe: ImageRecipe, rebuild: bool = False,
           log: Callable[[str], None] = lambda _line: None) -> ImageRef:
    """Reuse the image with this content tag, or build it (streaming the build log to `log`)."""
    tag = recipe.tag
    if not rebuild and (found := _describe(client, tag)):
        log(f"reusing image {tag} ({found.id[:19]})")
        return found
    log(f"building {tag} from {recipe.dockerfile}")
    args = {**recipe.build_args, "OPBENCH_REVISION": recipe.content_hash()}
    chunks = client.api.build(fileobj=recipe.context_tar(), custom_context=True, dockerfile=recipe.dockerfile,
                              tag=tag, buildargs=args, rm=True, forcerm=True, pull=False, decode=True)
    _build_log(chunks, log)
    built = _describe(client, tag)
    if built is None:
        raise LaunchError(f"the engine reported no error but image {tag} is missing", ENVIRONMENT)
    return built


def push(client: Any, image: ImageRef, registry: str, log: Callable[[str], None] = lambda _line: None) -> ImageRef:
    """Tag the image into `registry` under the same content tag and push it; returns the registry digest."""
    repo_tag = image.tag.rsplit("/", 1)[-1]
    name, _, version = repo_tag.partition(":")
    target = f"{registry.rstrip('/')}/{name}"
    client.images.get(image.id).tag(target, version)
    for chunk in client.api.push(target, tag=version, stream=True, decode=True):
        if "error" in chunk:
            raise LaunchError(f"push of {target}:{version} failed: {chunk['error']}", ENVIRONMENT)
        if chunk.get("status") and not chunk.get("progressDetail"):
            log(f"{chunk.get('id', '')} {chunk['status']}".strip())
    pushed = _describe(client, f"{target}:{version}")
    if pushed is None or "@" not in pushed.digest:
        raise LaunchError(f"push of {target}:{version} gave no registry digest", ENVIRONMENT)
    return pushed
