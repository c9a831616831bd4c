"""A small offline base image for the container tests: Debian minbase + Python + the host's own torch.

No registry is reachable in CI, so the base is made with `debootstrap --variant=minbase` (Debian mirror) and
`docker import`, and the Python packages the harness needs are copied from this host's site-packages
(same Python minor version, so binary wheels fit). The image is tagged by a hash of that recipe, so reruns
reuse it. Run as a script to build it by hand: `python3 tests/launcher/base_image.py`.
"""
from __future__ import annotations

import hashlib
import importlib.metadata as md
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from packaging.requirements import Requirement

from launch_workspace import FAKE_CANN_ENV

RECIPE = "opbench-test-base/5"
SUITE = "bookworm"
# pip (and setuptools, which the harness install needs) come from the host like the rest of the Python stack:
# the python3-pip deb would pull in setuptools, wheel, distutils, ca-certificates and openssl as well.
DEBS = ("python3",)
REPO = "opbench-test-base"
ROOT = Path(__file__).resolve().parents[2]
# Every Dockerfile instruction, and every container run, copies the whole filesystem under vfs (Dockerfile.cuda
# is 8 steps on the base, so ~3 copies of it each), so the base is kept lean: no docs, no apt caches, no torch
# C++ headers, test data, test binaries or test libraries (CPU manifests need none), and the torch shared
# libraries stripped of their static symbol tables where `strip` is installed (-100 MB; the dynamic symbols
# that loading and linking use stay).
PRUNE = ("usr/share/doc", "usr/share/man", "usr/share/locale", "usr/share/info", "var/cache/apt/archives",
         "var/lib/apt/lists")
SITE_PRUNE = ("torch/test", "torch/include", "torch/share")
SITE_PRUNE_GLOBS = ("torch/bin/test_*", "torch/bin/*Test", "torch/bin/protoc*",   # torch_shm_manager stays
                    "torch/lib/lib*test*.so", "torch/lib/libaoti_custom_ops.so", "torch/lib/libbackend_with_compiler.so")
STRIP_GLOBS = ("torch/lib/*.so*", "torch/*.so")


def _requirement_names() -> list[str]:
    names = ["torch", "pip", "setuptools", "packaging"]
    for line in (ROOT / "requirements.txt").read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            names.append(Requirement(line).name)
    return names


def distributions() -> list[md.Distribution]:
    """The named host distributions and everything they require (extras and unmet markers skipped)."""
    seen: dict[str, md.Distribution] = {}
    todo = _requirement_names()
    while todo:
        name = re.sub(r"[-_.]+", "-", todo.pop()).lower()
        if name in seen:
            continue
        dist = md.distribution(name)
        seen[name] = dist
        for raw in dist.requires or []:
            req = Requirement(raw)
            if req.marker is None or req.marker.evaluate({"extra": ""}):
                todo.append(req.name)
    return sorted(seen.values(), key=lambda d: d.metadata["Name"].lower())


def recipe_key() -> str:
    pins = [f"{d.metadata['Name']}=={d.version}" for d in distributions()] + [f"cann-stub={FAKE_CANN_ENV}"]
    salt = os.environ.get("OPBENCH_TEST_BASE_SALT", "")   # set to force a fresh base (and images on it)
    strip = f"strip={shutil.which('strip') is not None}"
    text = "\n".join([RECIPE, SUITE, *DEBS, f"py{sys.version_info[0]}.{sys.version_info[1]}", salt, strip, *pins])
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def _copy_distribution(dist: md.Distribution, dest: Path) -> None:
    for rel in dist.files or []:
        if ".." in Path(str(rel)).parts:
            continue   # console scripts and data outside site-packages: not needed
        src = Path(str(dist.locate_file(rel)))
        if src.is_file():
            target = dest / str(rel)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, target)


def build_rootfs(rootfs: Path, mirror: str) -> None:
    subprocess.run(["debootstrap", "--variant=minbase", f"--include={','.join(DEBS)}", SUITE, str(rootfs), mirror],
                   check=True, stdout=subprocess.DEVNULL)
    py = f"python{sys.version_info[0]}.{sys.version_info[1]}"
    if not (rootfs / "usr/bin" / py).exists():
        raise RuntimeError(f"{SUITE} has no {py}; the host's binary wheels would not fit")
    site = rootfs / "usr/local/lib" / py / "dist-packages"
    for dist in distributions():
        _copy_distribution(dist, site)
    for rel in PRUNE:
        shutil.rmtree(rootfs / rel, ignore_errors=True)
    for rel in SITE_PRUNE:
        shutil.rmtree(site / rel, ignore_errors=True)
    for pattern in SITE_PRUNE_GLOBS:
        for path in site.glob(pattern):
            path.unlink()
    if shutil.which("strip"):
        libs = [str(p) for pattern in STRIP_GLOBS for p in site.glob(pattern) if p.is_file()]
        subprocess.run(["strip", "--strip-unneeded", *libs], check=True)
    # A stand-in for CANN's environment script, so Dockerfile.npu builds on this base too (its entrypoint
    # sources it); its one export shows up in reports, which is how the NPU image test sees it ran.
    stub = rootfs / "usr/local/Ascend/cann/set_env.sh"
    stub.parent.mkdir(parents=True)
    stub.write_text(f"export ASCEND_RT_VISIBLE_DEVICES={FAKE_CANN_ENV}\n")


def host_mirror() -> str:
    """The Debian mirror this host's apt uses (CI machines may have a local one), else deb.debian.org."""
    texts = [p.read_text(errors="replace") for p in [Path("/etc/apt/sources.list"),
             *sorted(Path("/etc/apt/sources.list.d").glob("*"))] if p.is_file()]
    for uri in re.findall(r"^(?:deb\s+(?:\[[^]]*\]\s+)?|URIs:\s*)(\S+)", "\n".join(texts), flags=re.M):
        if "debian" in uri and "security" not in uri:
            return uri
    return "http://deb.debian.org/debian"


def ensure_base_image(client: object, log=print) -> str:
    """The tag of the test base, built now if this engine does not have it yet."""
    from docker.errors import ImageNotFound
    tag = f"{REPO}:{recipe_key()}"
    try:
        client.images.get(tag)  # type: ignore[attr-defined]
        return tag
    except ImageNotFound:
        pass
    if shutil.which("debootstrap") is None:
        raise RuntimeError("debootstrap is not installed (apt-get install debootstrap)")
    mirror = os.environ.get("OPBENCH_DEBIAN_MIRROR") or host_mirror()
    log(f"building test base image {tag} (debootstrap {SUITE} from {mirror})")
    with tempfile.TemporaryDirectory(prefix="opbench-base-") as tmp:
        rootfs = Path(tmp) / "rootfs"
        build_rootfs(rootfs, mirror)
        tar = subprocess.Popen(["tar", "-C", str(rootfs), "-c", "."], stdout=subprocess.PIPE)
        subprocess.run(["docker", "import", "--change", "CMD [\"/bin/bash\"]", "-", tag], stdin=tar.stdout,
                       check=True, stdout=subprocess.DEVNULL)
        if tar.wait() != 0:
            raise RuntimeError("tar of the test rootfs failed")
    return tag


if __name__ == "__main__":
    import docker
    print(ensure_base_image(docker.from_env()))
