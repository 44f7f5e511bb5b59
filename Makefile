# Aether — set-up, tests and measurements. On a fresh machine: `make install`, then `make test`.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
BATS   := $(VENV)/bin/bats

.PHONY: help install test test-py test-bats bench bench-queen bench-guard bench-scale lint readme clean

install: $(VENV)/.installed ## set up the helper's venv (editable, with test tools); the plugin is then ready for `claude --plugin-dir .`
	@echo "aether is ready: $(CURDIR)/bin/aether (in Claude Code: claude --plugin-dir $(CURDIR))"

$(VENV)/.installed: pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit("Aether needs Python >= 3.11, found " + sys.version.split()[0] + " (set PYTHON=...)") if sys.version_info < (3, 11) else None'
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check --upgrade pip
	$(PY) -m pip install --quiet --disable-pip-version-check -e '.[test]'
	@AETHER_VENV=$(CURDIR)/$(VENV) bin/aether self-check >/dev/null && $(BATS) --version >/dev/null
	@touch $@

# Every test. pytest runs tests/e2e too (real Claude Code, installed by e2e-deps) and `claude plugin validate`.
test: lint test-py test-bats ## run every test: ruff, pytest (library, CLI, store, concurrency, crash, layers) and bats (shell contract)

# Tests run side by side (pytest-xdist): an e2e test mostly waits on Claude Code and the scripted
# model server, so three workers keep two cores busy; a worker that runs out of tests takes some of
# another's (worksteal), so no long test is left queued behind one worker at the end.
# PYTEST_JOBS=0 runs them one after another.
PYTEST_JOBS ?= 3
test-py: install e2e-deps ## pytest only, the end-to-end tests in real Claude Code included (PYTEST_ARGS='-m "not slow and not e2e"' for the quick ones)
	$(PY) -m pytest -n $(PYTEST_JOBS) --dist worksteal $(PYTEST_ARGS)

test-bats: install ## bats only: `aether` called the way the slash commands call it
	$(BATS) tests/bats

# The pinned Claude Code CLIs for tests/e2e (npm registry): the newest, which every e2e test runs, and
# the oldest Aether supports (tests/e2e/oldest), which the tests marked `oldest` run too. Each install
# has its own stamp, so reruns are instant and a changed pin reinstalls only its own.
E2E_DIR    := tests/e2e
E2E_STAMPS := $(E2E_DIR)/node_modules/.aether-e2e-installed $(E2E_DIR)/oldest/node_modules/.aether-e2e-installed

.PHONY: e2e-deps test-e2e

e2e-deps: $(E2E_STAMPS) ## install the pinned Claude Code releases (tests/e2e/package-lock.json, tests/e2e/oldest/package-lock.json) for the e2e tests

$(E2E_STAMPS): %/node_modules/.aether-e2e-installed: %/package.json %/package-lock.json
	@command -v npm >/dev/null 2>&1 || { echo "make e2e-deps: npm not found: install Node.js with npm, then run make e2e-deps again" >&2; exit 1; }
	cd $* && npm ci --no-audit --no-fund --loglevel=error
	@if v="$$($*/node_modules/.bin/claude --version 2>/dev/null)"; then echo "e2e: Claude Code $$v in $*"; \
	elif ls $*/node_modules/@anthropic-ai/claude-code-*/claude >/dev/null 2>&1; then \
	  echo "e2e: npm skipped Claude Code's install script in $*; the tests run the platform binary directly"; \
	else echo "make e2e-deps: npm installed no runnable claude in $*/node_modules" >&2; exit 1; fi
	@touch $@

test-e2e: install e2e-deps ## end-to-end tests: real Claude Code against the scripted model server
	$(PY) -m pytest $(E2E_DIR) $(PYTEST_ARGS)

bench: install ## latency of every subcommand through bin/aether (a measurement, not a test)
	$(PY) bench/run.py $(BENCH_ARGS)

bench-queen: install e2e-deps ## the Queen's turns and written tokens per slash command in the scripted colony session
	$(PY) bench/queen_cost.py $(BENCH_ARGS)

bench-guard: install ## the guard's cost per ant tool call, and what it decides for the write forms models use
	$(PY) bench/guard_cost.py $(BENCH_ARGS)

bench-scale: install ## the helper's time per phase and per command as a colony grows (1, 50, 200 phases), and its state's size
	$(PY) bench/scale.py $(BENCH_ARGS)

lint: install ## ruff and mypy (settings in pyproject.toml), the launcher's and CI's shell syntax
	$(VENV)/bin/ruff check scripts tests bench hooks
	$(VENV)/bin/ruff format --check --quiet scripts tests bench hooks
	$(VENV)/bin/mypy
	bash -n bin/aether && bash -n .ci/run

readme: install ## regenerate the README's command reference from the registry
	$(PY) tests/readme_reference.py --write README.md

clean: ## remove the venv and caches
	rm -rf $(VENV) build scripts/*.egg-info .pytest_cache .hypothesis .mypy_cache
	find . -name __pycache__ -type d -prune -exec rm -rf {} +

help: ## list the targets
	@grep -E '^[a-z0-9-]+:.*## ' $(MAKEFILE_LIST) | sed 's/:.*## /\t/' | expand -t 12
