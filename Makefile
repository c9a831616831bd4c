# opbench entry points. `make bench MANIFEST=rmsnorm.yaml` runs on this machine (CPU if nothing else);
# `make test` runs the test suite. Both install what they need first.
# A Python whose packages the OS manages (Debian/Ubuntu's, PEP 668: pip refuses to install there) gets a
# project virtual environment in .venv instead; any other python3 (pyenv, conda, a venv, CI) is used as it is.
# PEP 668's marker sits in the base interpreter's stdlib and does not apply inside a venv: a python3 that is
# itself a venv (a GPU image's /opt/torch/.venv, with its torch and numpy) must not get a .venv over the
# base interpreter, which would hide everything that venv holds.
SYSTEM_PYTHON ?= python3
MANAGED := $(shell $(SYSTEM_PYTHON) -c "import os, sys, sysconfig; print(int(sys.prefix == sys.base_prefix and os.path.exists(os.path.join(sysconfig.get_paths()['stdlib'], 'EXTERNALLY-MANAGED'))))" 2>/dev/null)
ifeq ($(MANAGED),1)
PYTHON   ?= .venv/bin/python
else
PYTHON   ?= $(SYSTEM_PYTHON)
endif
MANIFEST ?= rmsnorm.yaml
OUT      ?= out
ARGS     ?=
# Containers (harness/launcher): DEVICE=local|cpu|cuda|npu; unset = auto (the host's accelerator in its
# container when a Docker engine is up, else local, said in one line). BUILD_ARGS: e.g. --build-arg TORCH_VERSION=2.12.0
DEVICE     ?=
REGISTRY   ?=
BUILD_ARGS ?=

.PHONY: deps test-deps launch-deps bench image push validate test

# Exits 0 only when every `name==version` line of the given requirements files is installed at that version
# (the files pin exactly, so an import check would accept a stale or newer install).
# Offline (a GPU box with no registry) a failed install falls back to what is installed, in any version,
# when every required package is there, and says which versions differ from the pins; a package that is
# missing is named, with how to install it from carried wheels (exit 3).
PINS = import sys, importlib.metadata as md; pins = [r.split('==') for f in sys.argv[1:] for r in (l.split(chr(35))[0].strip() for l in open(f)) if r]
INSTALLED = $(PYTHON) -c "$(PINS); got = {n: next((d.version for d in md.distributions(name=n)), None) for n, _ in pins}; miss = [n for n, v in got.items() if v is None]; print(f'opbench: could not install {\", \".join(miss)} (offline?): put their wheels in a folder and run again with PIP_FIND_LINKS=<folder> PIP_NO_INDEX=1' if miss else 'opbench: could not install the pinned versions (offline?); using the installed ones: ' + ', '.join(f'{n} {got[n]} (pinned {v})' for n, v in pins if got[n] != v), file=sys.stderr); sys.exit(3 if miss else 0)"
PINNED = $(PYTHON) -c "$(PINS); sys.exit(any(md.version(n) != v for n, v in pins))"
# pip told to use no index and given no folder of wheels cannot install anything: the installed versions are
# checked at once, without pip's own failed attempt (0.5-1 s of every make bench on the offline GPU machine).
# Read from the environment only: a find-links set in pip.conf is not seen (pass it as PIP_FIND_LINKS).
NO_SOURCE := $(if $(PIP_FIND_LINKS),,$(filter 1 true yes on,$(PIP_NO_INDEX)))

# --system-site-packages: a GPU/NPU image's OS Python may already hold the vendor's torch build, which stays
# visible (and is used) instead of a second download.
.venv/bin/python:
	$(SYSTEM_PYTHON) -m venv --system-site-packages .venv || { echo "opbench: could not make .venv: install python3-venv (apt-get install python3-venv)" >&2; exit 3; }

# find_spec, not `import torch`: the check costs milliseconds instead of a torch import (2 s on the GPU machine).
# The harness's own requirements come with launch-deps: checked once per make, not once per target (each check
# is an interpreter's start, and offline a failed pip install, 1-2 s, before the run).
deps: launch-deps
	@$(PYTHON) -c "import importlib.util as u, sys; sys.exit(u.find_spec('torch') is None)" 2>/dev/null || $(PYTHON) -m pip install -q torch==2.13.0

test-deps: deps
	@$(PINNED) requirements-test.txt 2>/dev/null || $(PYTHON) -m pip install -q -r requirements-test.txt
	@$(PINNED) requirements-test-nodeps.txt 2>/dev/null || $(PYTHON) -m pip install -q --no-deps -r requirements-test-nodeps.txt

# The launcher's host side: the harness CLI and the docker SDK (no torch; that lives in the image).
# The SDK is optional: with no SDK (an offline GPU box) the launcher says so and runs locally.
launch-deps: $(if $(filter .venv/bin/python,$(PYTHON)),.venv/bin/python)
	@$(PINNED) requirements.txt 2>/dev/null || $(if $(NO_SOURCE),,$(PYTHON) -m pip install -q -r requirements.txt ||) $(INSTALLED) requirements.txt
	@! command -v docker >/dev/null || $(PYTHON) -c "import docker" 2>/dev/null || $(PYTHON) -m pip install -q "docker==7.1.0" 2>/dev/null \
		|| echo "opbench: the docker Python package could not be installed; containers unavailable, local runs only"

# torch is only needed on the host when the run may be local (DEVICE unset, auto or local).
bench: $(if $(filter cpu cuda npu,$(DEVICE)),launch-deps,deps)
	$(PYTHON) -m harness launch $(MANIFEST) --device $(or $(DEVICE),auto) --out $(OUT) $(if $(ARGS),--args='$(ARGS)')

image: launch-deps
	$(PYTHON) -m harness launch --device $(or $(DEVICE),cuda) --build-only $(BUILD_ARGS)

push: launch-deps
	@test -n "$(REGISTRY)" || { echo "make push needs REGISTRY=host/org" >&2; exit 2; }
	$(PYTHON) -m harness launch --device $(or $(DEVICE),cuda) --push $(REGISTRY) $(BUILD_ARGS)

validate: deps
	$(PYTHON) -m harness validate manifests/*.yaml

# -ra and --durations=15 come from pyproject.toml's [tool.pytest.ini_options].
test: test-deps
	$(PYTHON) -m pytest -q tests
