# Quickstart: `make demo` and `make test` both create .venv if missing and install everything.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: install demo test lint check docs clean

$(STAMP): pyproject.toml
	test -d $(VENV) || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	# The CPU wheel of torch first: any looser spec would pull a multi-GB CUDA build.
	$(BIN)/pip install -q torch==2.13.0
	$(BIN)/pip install -q -e ".[dev]"
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(BIN)/routecli solve data/demo/cvrp-demo-50.vrp --model miloop --seed 0
	$(BIN)/routecli solve data/demo/cvrp-demo-50.vrp --model miloop --decode multistart --starts 50 --augment --seed 0
	$(BIN)/routecli solve data/demo/cvrp-demo-50.vrp --model hgs --time-limit 2 --seed 0

test: $(STAMP)
	$(BIN)/python -m pytest tests

# ruff, mypy and the import layering contract of pyproject.toml ([tool.importlinter])
lint: $(STAMP)
	$(BIN)/ruff check routecli tests benchmarks
	$(BIN)/python -m mypy
	$(BIN)/lint-imports

check: lint test

# docs/cli.md is every command's --help; tests/cli/test_docgen.py fails when it is stale
docs: $(STAMP)
	$(BIN)/python -m routecli.cli.docgen --out docs/cli.md

clean:
	rm -rf $(VENV) build *.egg-info
