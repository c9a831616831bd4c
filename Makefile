# opbench entry points. `make bench MANIFEST=rmsnorm.yaml` runs on this machine (CPU if nothing else);
# `make test` runs the test suite. Both install what they need first.
PYTHON   ?= python3
MANIFEST ?= rmsnorm.yaml
OUT      ?= out
ARGS     ?=

.PHONY: deps test-deps bench validate test

deps:
	@$(PYTHON) -c "import torch" 2>/dev/null || $(PYTHON) -m pip install -q torch==2.13.0
	@$(PYTHON) -c "import yaml, jsonschema, tabulate, rich, safetensors" 2>/dev/null || $(PYTHON) -m pip install -q -r requirements.txt

test-deps: deps
	@$(PYTHON) -c "import pytest, pytest_timeout" 2>/dev/null || $(PYTHON) -m pip install -q -r requirements-test.txt

bench: deps
	$(PYTHON) -m harness run $(MANIFEST) --out $(OUT) $(ARGS)

validate: deps
	$(PYTHON) -m harness validate manifests/*.yaml

test: test-deps
	$(PYTHON) -m pytest -q tests
