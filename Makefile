# One virtualenv, `venv/`, shared with the Pulumi CLI (Pulumi.yaml names the same directory).
PYTHON ?= python3
SHELL := /bin/bash
.SHELLFLAGS := -o pipefail -c
VENV ?= venv
BIN := $(VENV)/bin
STACK ?= dev
# Seconds between the install's "still installing" lines.
PROGRESS_EVERY ?= 15

# The policy pack's own virtualenv (policy/PulumiPolicy.yaml names it). `pulumi up --policy-pack policy` does not
# create it: the Pulumi CLI installs the program's dependencies (./venv) but starts a local pack's Python as it finds
# it (docs/deploy.md, "Why the pack needs its own virtualenv").
POLICY_VENV ?= policy/venv
PULUMI ?= pulumi

.PHONY: install preview test bench clean policy-venv up

$(BIN)/.installed: pyproject.toml requirements.txt
	@echo "Installing aks-kueue into ./$(VENV), once: the Pulumi SDK, pulumi-azure-native and pulumi-kubernetes"
	@echo "(about 850 MB installed, a few minutes on a fresh machine), pydantic, typer, rich, PyYAML, the CEL bindings,"
	@echo "matplotlib and the test tools. Later runs skip this step."
	$(PYTHON) -m venv $(VENV)
	@# pip's own output and progress bars, and a line every $(PROGRESS_EVERY) s while it works quietly
	@# (unpacking the providers prints nothing for a minute or more).
	@$(BIN)/python -m pip install --disable-pip-version-check --progress-bar on -e '.[test]' & pip=$$!; \
	  waited=0; \
	  while kill -0 $$pip 2>/dev/null; do \
	    sleep 1; waited=$$((waited + 1)); \
	    if [ $$((waited % $(PROGRESS_EVERY))) -eq 0 ] && kill -0 $$pip 2>/dev/null; then \
	      echo "... pip is still installing ($$waited s so far)"; \
	    fi; \
	  done; \
	  wait $$pip
	touch $@

install: $(BIN)/.installed

$(POLICY_VENV)/.installed: policy/requirements.txt
	@echo "Creating the policy pack's virtualenv ./$(POLICY_VENV) from policy/requirements.txt (once)"
	$(PYTHON) -m venv $(POLICY_VENV)
	$(POLICY_VENV)/bin/python -m pip install --disable-pip-version-check -r policy/requirements.txt
	touch $@

policy-venv: $(POLICY_VENV)/.installed

# One command for the documented deploy: the pack's virtualenv when missing, then pulumi up with the pack (and the
# stack's own policy config, policy/config/$(STACK).json, when there is one, as the deploy workflow runs it).
up: policy-venv
	@command -v $(PULUMI) >/dev/null || { echo "make up runs the Pulumi CLI, which is not on PATH: install it (https://www.pulumi.com/docs/install/)" >&2; exit 2; }
	$(PULUMI) up --stack $(STACK) --policy-pack policy$(if $(wildcard policy/config/$(STACK).json), --policy-pack-config policy/config/$(STACK).json)

preview: install
	$(BIN)/aks-kueue preview --stack $(STACK)

test: install
	$(BIN)/python -m pytest -q -n auto

bench: install
	$(BIN)/python benchmarks/preview.py
	$(BIN)/python benchmarks/feasibility.py
	$(BIN)/python benchmarks/admission.py
	$(BIN)/python benchmarks/loader.py
	$(BIN)/python benchmarks/replay.py

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis *.egg-info
