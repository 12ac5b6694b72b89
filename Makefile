# Two entry points, both of which set up a local virtual environment first:
#   make run    set up, then start the interactive tutor
#   make test   set up, then run the whole test suite
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# The CPU build of PyTorch; pinned here only, so set-up never pulls a CUDA build.
TORCH_PIN := torch==2.13.0

.PHONY: run test setup bench

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet --disable-pip-version-check $(TORCH_PIN)
	$(BIN)/pip install --quiet --disable-pip-version-check -e '.[test]'
	touch $@

setup: $(VENV)/.installed

run: setup
	$(BIN)/gradtutor $(ARGS)

test: setup
	$(BIN)/python -m pytest -q $(PYTEST_ARGS)

bench: setup
	for f in bench/bench_*.py; do $(BIN)/python $$f || exit 1; done
