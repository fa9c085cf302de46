# One virtualenv, `venv/`, shared with the Pulumi CLI (Pulumi.yaml names the same directory).
PYTHON ?= python3
VENV ?= venv
BIN := $(VENV)/bin
STACK ?= dev

.PHONY: install preview test bench clean

$(BIN)/.installed: pyproject.toml requirements.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[test]'
	touch $@

install: $(BIN)/.installed

preview: install
	$(BIN)/aks-kueue preview --stack $(STACK)

test: install
	$(BIN)/python -m pytest -q

bench: install
	$(BIN)/python benchmarks/preview.py
	$(BIN)/python benchmarks/feasibility.py
	$(BIN)/python benchmarks/admission.py
	$(BIN)/python benchmarks/loader.py

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis *.egg-info
