# One virtualenv, `venv/`, shared with the Pulumi CLI (Pulumi.yaml names the same directory).
PYTHON ?= python3
SHELL := /bin/bash
.SHELLFLAGS := -o pipefail -c
VENV ?= venv
BIN := $(VENV)/bin
STACK ?= dev
# Seconds between the install's "still installing" lines.
PROGRESS_EVERY ?= 15

.PHONY: install preview test bench clean

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
