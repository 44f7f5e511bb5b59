# Aether — set-up, tests and measurements. `make install` then `make test`.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
BATS   := $(VENV)/bin/bats

.PHONY: install test test-py test-bats bench lint clean

install: $(VENV)/.installed ## create .venv, install the helper (editable) with its test tools

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -c 'import sys; sys.exit("Aether needs Python >= 3.11, found " + sys.version.split()[0]) if sys.version_info < (3, 11) else None'
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check --upgrade pip
	$(PY) -m pip install --quiet --disable-pip-version-check -e '.[test]'
	@touch $@
	@echo "aether installed: add $(CURDIR)/bin to PATH, or run it as $(CURDIR)/bin/aether"

test: install ## everything: pytest (library, CLI, concurrency, crash) and bats (shell contract)
	$(PY) -m pytest
	$(BATS) tests/bats

bench: install ## speed and size measurements (not tests): prints a table
	$(PY) bench/run.py

lint: install
	$(PY) -m compileall -q scripts tests bench

clean:
	rm -rf $(VENV) build scripts/*.egg-info .pytest_cache
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
