# The two Quickstart commands: `make run` and `make test`. Everything else is a helper for them.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
DEV_STAMP := $(VENV)/.installed-dev
SUITE ?= examples/quickstart/quickstart.eval.yaml

AGENTS_STAMP := agents/node_modules/.installed
AGENTV_STAMP := conformance/node_modules/.installed

export DAGSTER_HOME ?= $(CURDIR)/.evals/dagster
export EVALS_PIPELINE_STORAGE ?= $(CURDIR)/.evals/storage
export EVALS_PIPELINE_AGENTS_DIR ?= $(CURDIR)/agents

.PHONY: run test lint typecheck dev clean agents agentv chromium servers sandbox bench

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# Each install also builds the home template into the venv (instance/home_template.py): a fresh
# DAGSTER_HOME's databases are then copied, not set up by Dagster (~2 s per fresh home, in CI).
$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e .
	$(BIN)/python -m evals_pipeline.instance.local
	touch $@

$(DEV_STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	$(BIN)/python -m evals_pipeline.instance.local
	touch $@ $(STAMP)

## run: set up and run the bundled example suite through the Dagster asset graph
run: $(STAMP) sandbox
	@mkdir -p $(DAGSTER_HOME)
	@# Exit code 1 means "some cases did not pass", which the example shows on purpose.
	$(BIN)/evals-pipeline run $(SUITE); status=$$?; [ $$status -le 1 ]

## test: set up and run lint, format check, type check and every test; then the tests that run
## the Dagster graph again on the multiprocess executor and on two celery workers
## (evals_pipeline_tests/executor_passes.py)
test: $(DEV_STAMP) agents agentv chromium servers sandbox lint typecheck
	$(BIN)/python -m pytest -n 2 -q --durations=25
	$(BIN)/python -m pytest -n 2 -q --durations=10 --executor multiprocess --graph-tests ci evals_pipeline_tests
	$(BIN)/python -m pytest -n 2 -q --durations=10 --executor celery --graph-tests ci evals_pipeline_tests

## bench: the default benchmark workloads (README, "Benchmarks"), each beside its reference; W=... picks some
bench: $(STAMP)
	$(BIN)/python -m benchmarks.run $(W)

## agents: install the pinned agent CLIs (claude, codex, pi) into agents/node_modules
agents: $(AGENTS_STAMP)

$(AGENTS_STAMP): agents/package.json agents/package-lock.json
	@if command -v npm >/dev/null 2>&1; then \
		echo "installing the pinned agent CLIs into agents/node_modules (about 840 MB)"; \
		cd agents && npm ci --no-audit --no-fund --loglevel=error && touch node_modules/.installed; \
	else \
		echo "npm not found: the agent CLIs are not installed and the real-agent tests will be skipped"; \
	fi

## agentv: install the pinned reference AgentV CLI (and bun) the conformance tests run beside ours,
## with AgentV's grader SDK from its corpus (../shared/agentv-4.42.4, else a clone of the tag)
agentv: $(AGENTV_STAMP)

$(AGENTV_STAMP): conformance/package.json conformance/package-lock.json evals_pipeline_tests/conformance/corpus.py
	$(PYTHON) evals_pipeline_tests/conformance/corpus.py sdk conformance/sdk
	@if command -v npm >/dev/null 2>&1; then \
		echo "installing the pinned agentv 4.42.4 and bun into conformance/node_modules (about 900 MB)"; \
		cd conformance && npm ci --no-audit --no-fund --loglevel=error && touch node_modules/.installed; \
	else \
		echo "npm not found: agentv is not installed and the conformance tests will fail"; \
	fi

## chromium: Debian's headless Chromium for the report's browser test (Playwright drives it; no download)
chromium:
	@if [ -x /usr/bin/chromium ]; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
		echo "installing Debian's chromium for the browser test of report.html"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; \
	else \
		echo "/usr/bin/chromium is missing: install Debian's chromium package (sudo apt-get install chromium); the browser test fails without it"; \
	fi

## servers: Debian's PostgreSQL and Redis for the scale-out tests (the tests start their own, on 127.0.0.1)
servers:
	@if command -v redis-server >/dev/null 2>&1 && ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
		echo "installing Debian's postgresql and redis-server for the scale-out tests"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql redis-server; \
	else \
		echo "PostgreSQL or Redis is missing: install Debian's postgresql and redis-server packages (sudo apt-get install postgresql redis-server); the scale-out tests fail without them"; \
	fi

## sandbox: Debian's bubblewrap, the OS sandbox agents and graders run in (docs/agents.md, "Sandbox")
sandbox:
	@if command -v bwrap >/dev/null 2>&1; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
		echo "installing Debian's bubblewrap, the sandbox agents and graders run in"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap; \
	else \
		echo "bwrap is missing: install Debian's bubblewrap package (sudo apt-get install bubblewrap); without it agents and graders run unsandboxed and the sandbox tests fail"; \
	fi

lint: $(DEV_STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: $(DEV_STAMP)
	$(BIN)/mypy

## dev: the Dagster UI on http://127.0.0.1:3000 with the example suites
# As the README's bare `dagster dev -w workspace.yaml`: without DAGSTER_HOME, dagster dev reads
# ./dagster.yaml (the instance in .evals/dagster, with the shipped settings); a DAGSTER_HOME
# given to make is used as is (evals-pipeline writes the settings into it when it is fresh).
dev: $(STAMP)
	@mkdir -p $(DAGSTER_HOME)
	$(if $(filter file,$(origin DAGSTER_HOME)),env -u DAGSTER_HOME) $(BIN)/dagster dev -w workspace.yaml

clean:
	rm -rf .evals agents/node_modules conformance/node_modules conformance/sdk
