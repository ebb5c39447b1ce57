# Two entry points a fresh machine needs: `make demo` (set up, then test the demo site for
# real) and `make test` (set up, then the whole suite). Everything else is a helper.

PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
PYTEST_ARGS ?=

.PHONY: install setup setup-test demo test docs lint typecheck check clean

# The virtualenv with pagelab and its dev tools, rebuilt when pyproject.toml changes.
$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[dev]"
	touch $@

install: $(VENV)/.installed

# Chromium (apt, when missing and root) and the pinned Lighthouse + Node (npm ci).
setup: install
	$(BIN)/pagelab setup

# As setup, plus Redis (Debian's redis-server) and PostgreSQL (Debian's postgresql): the
# fleet and team-store tests start their own servers on free loopback ports; and Apache
# Otava in a venv of its own under the cache dir (its pins clash with ours: docs/decisions.md)
# for the change points' agreement tests.
setup-test: install
	$(BIN)/pagelab setup --broker --database
	$(BIN)/python tests/otava_venv.py

demo: setup
	$(BIN)/pagelab demo

# Two workers: one runs everything that drives Lighthouse, one run at a time, the other the
# rest (the xdist groups in tests/conftest.py). `pytest` alone runs the same tests serially.
test: setup-test
	$(BIN)/python -m pytest -n 2 --dist loadgroup $(PYTEST_ARGS)

# The documentation site, with the references generated from the code (mkdocs.yml);
# --strict fails on a broken link or reference. tests/test_docs_site.py builds it too.
docs: install
	$(BIN)/mkdocs build --strict --site-dir site

lint: install
	$(BIN)/ruff check src pytest_plugin tests benchmarks notebooks

typecheck: install
	$(BIN)/mypy

check: lint typecheck test

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache site
