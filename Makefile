# The two Quickstart commands: `make run` and `make test`. Everything else is a helper for them.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
DEV_STAMP := $(VENV)/.installed-dev
SUITE ?= examples/quickstart/quickstart.eval.yaml

export DAGSTER_HOME ?= $(CURDIR)/.evals/dagster
export EVALS_PIPELINE_STORAGE ?= $(CURDIR)/.evals/storage

.PHONY: run test lint typecheck dev clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e .
	touch $@

$(DEV_STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $@ $(STAMP)

## run: set up and run the bundled example suite through the Dagster asset graph
run: $(STAMP)
	@mkdir -p $(DAGSTER_HOME)
	@# Exit code 1 means "some cases did not pass", which the example shows on purpose.
	$(BIN)/evals-pipeline run $(SUITE); status=$$?; [ $$status -le 1 ]

## test: set up and run lint, format check, type check and every test
test: $(DEV_STAMP) lint typecheck
	$(BIN)/python -m pytest -n 2 -q

lint: $(DEV_STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: $(DEV_STAMP)
	$(BIN)/mypy

## dev: the Dagster UI on http://127.0.0.1:3000 with the example suites
dev: $(STAMP)
	@mkdir -p $(DAGSTER_HOME)
	$(BIN)/dagster dev -w workspace.yaml

clean:
	rm -rf .evals
