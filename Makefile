# Two entry points, both of which set up a local virtual environment first:
#   make run    set up, then start the interactive tutor
#   make test   set up, then run the whole test suite
# and, for maintainers:
#   make test-pythons   the whole suite on every supported Python, each in
#                       its own .venv-X.Y (PYTHONS="3.12 3.13" for some)
#   make test-torches   the whole suite on other torch releases (TORCHES)
#   make test-generated the differential test on 2,000 generated programs
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# Pinned here only. On this machine's Python 3.11 it is the CPU build, on
# disk, so set-up never pulls a CUDA build (see .ci/test-matrix for others).
TORCH_PIN := torch==2.13.0

SUPPORTED_PYTHONS := 3.10 3.11 3.12 3.13
PYTHONS ?= $(SUPPORTED_PYTHONS)
# Other torch releases tested, each on Python 3.11: the lower bound in
# pyproject.toml, one between, and the newest this machine has.
TORCHES ?= 2.1.2 2.5.1

# System packages the tests drive as real components: Chromium (the HTML
# export in a headless browser), graphviz (DOT exports drawn by `dot`) and a
# font with box-drawing characters for screenshots. Installed only when
# missing and only as root; elsewhere those tests skip, saying why.
SYSTEM_DEPS := chromium graphviz fonts-dejavu-core

.PHONY: run test setup system-deps bench test-pythons test-torches test-generated

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet --disable-pip-version-check $(foreach pin,$(TORCH_PIN),'$(pin)')
	$(BIN)/pip install --quiet --disable-pip-version-check -e '.[test]'
	touch $@

setup: $(VENV)/.installed

run: setup
	$(BIN)/gradtutor $(ARGS)

system-deps:
	@missing=""; \
	command -v chromium >/dev/null 2>&1 || missing="$$missing chromium"; \
	command -v dot >/dev/null 2>&1 || missing="$$missing graphviz"; \
	[ -e /usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf ] || missing="$$missing fonts-dejavu-core"; \
	if [ -z "$$missing" ]; then exit 0; fi; \
	if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
		echo "installing:$$missing"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing >/dev/null; \
	else \
		echo "not installed:$$missing (needs root and apt-get); the tests that use them will skip"; \
	fi

# The suite runs on this many processes (pytest-xdist); 1 runs it in this one.
TEST_WORKERS ?= 2

test: setup system-deps
	$(BIN)/python -m pytest -q $(if $(filter-out 1,$(TEST_WORKERS)),-n $(TEST_WORKERS)) $(PYTEST_ARGS)

test-pythons:
	.ci/test-matrix $(PYTHONS)

test-generated: setup
	GRADTUTOR_GENERATED=2000 $(BIN)/python -m pytest -q tests/test_generated.py

test-torches:
	.ci/test-matrix $(addprefix 3.11:,$(TORCHES))

# torchviz is the yardstick of bench_torchviz.py only: installed for the
# benchmarks, never a dependency of the tutor or its tests.
bench: setup
	$(BIN)/pip install --quiet --disable-pip-version-check torchviz
	for f in bench/bench_*.py; do $(BIN)/python $$f || exit 1; done
