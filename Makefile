# docsaccel: `make docs` builds the site at full quality, `make test` runs the test suite.
# Both create or update .venv by themselves (see the `$(STAMP)` rule).

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# Touched after a successful install: make reinstalls when the pins or the project
# metadata are newer than the last install, and never otherwise.
STAMP := $(VENV)/.docsaccel-installed
DOCS_OUT := docs/_build/html
SPHINXOPTS ?=
# The example cache: a tutorial whose inputs did not change since it last ran is restored,
# not run again; Sphinx's state too: only the pages a change affects are read and written
# again (docs/guide/caching.rst). DOCS_CACHE=0 turns both off, DOCSACCEL_CACHE_SPHINX=0
# only the second.
DOCS_CACHE ?= $(CURDIR)/.docsaccel-cache

.PHONY: venv docs docs-fast docs-sharded test report bench lint clean

venv: $(STAMP)

$(STAMP): pyproject.toml constraints.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -c constraints.txt -e ".[all]"
	touch $(STAMP)

docs: $(STAMP)
	DOCSACCEL_CACHE="$(DOCS_CACHE)" $(BIN)/sphinx-build -b html $(SPHINXOPTS) docs $(DOCS_OUT)
	@echo "Site: $(DOCS_OUT)/index.html"

# The CI fast path: exactly what `nox -s docs` runs, in this .venv.
docs-fast: $(STAMP)
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/nox --no-venv --no-install -s docs

# The sharded CI build on one machine: SHARDS parallel processes, each executing its share
# of the tutorials in its own copy of the project, then the merge (no example runs twice).
# What `nox -s docs_local` runs, in this .venv, with the CI settings nox gives the docs.
SHARDS ?= 2
docs-sharded: $(STAMP)
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/nox --no-venv --no-install -s docs_local -- \
		--shards $(SHARDS) $(SHARD_INPUTS)
	@echo "Site: $(DOCS_OUT)/index.html"

test: $(STAMP)
	$(BIN)/python -m pytest $(PYTEST_ARGS)

report: $(STAMP)
	$(BIN)/docsaccel report $(DOCS_OUT)/docsaccel/report.json --format md

bench: $(STAMP)
	@set -e; for bench in tools/bench_*.py; do \
		echo "== $$bench"; $(BIN)/python $$bench; \
	done

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

clean:
	rm -rf docs/_build docs/auto_tutorials docs/sg_execution_times.rst docs/budget_report.rst \
		docs/tutorials/*.mp4 docs/tutorials/*.gif .nox .pytest_cache .ruff_cache build dist \
		src/*.egg-info
