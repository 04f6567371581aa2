# docsaccel: `make docs` builds the site at full quality, `make test` runs the test suite
# (the whole suite on Python 3.11 in .venv, the fast lane on 3.12 and 3.13). Both create or
# update their environments by themselves (see the `$(STAMP)` rule, and nox's in .nox).

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

# The other Pythons of the test matrix: `make test` runs the fast lane (`-m "not slow"`)
# on each through nox (sessions tests-3.12, tests-3.13), which makes their environments in
# .nox. Interpreters come from PATH, or from pyenv's versions when pyenv has them.
OTHER_PYTHONS ?= 3.12 3.13
LANES := test-suite $(addprefix test-,$(OTHER_PYTHONS)) test-fast
PYENV_BINS := $(foreach v,$(OTHER_PYTHONS),$(lastword $(sort $(wildcard \
	$(shell pyenv root 2>/dev/null)/versions/$(v).*/bin))))
empty :=
space := $(empty) $(empty)
PYTHONS_PATH := $(subst $(space),:,$(strip $(PYENV_BINS)))

# The machine's cores: the test lanes and their workers are sized to them together.
CORES := $(shell nproc 2>/dev/null || getconf _NPROCESSORS_ONLN 2>/dev/null || echo 1)
FAST_LANES := $(addprefix test-,$(OTHER_PYTHONS))
# The fast lanes run side by side, one pytest process each, at most one per core.
FAST_JOBS := $(shell n=$(CORES); m=$(words $(FAST_LANES)); echo $$(( n < m ? n : m )))

.PHONY: venv docs docs-fast docs-sharded test test-fast test-deps $(LANES) report bench lint clean

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

# The whole suite first, its files spread over every core, then the fast lanes on the
# other Pythons, so at no point do more processes compute than the machine has cores. A
# failing lane does not stop the next one: every lane's failures are reported.
test: $(STAMP) test-deps
	@status=0; \
	$(MAKE) --no-print-directory test-suite || status=1; \
	$(MAKE) --no-print-directory --output-sync=target -j $(FAST_JOBS) $(FAST_LANES) || status=1; \
	exit $$status

# What the tests need beyond .venv, installed once before any lane starts (a test never
# installs anything): Debian's chromium, which the browser tests open a built site in. As
# root with apt-get; apt waits for its lock rather than failing when another apt holds it.
APT_GET := DEBIAN_FRONTEND=noninteractive apt-get -qq -o DPkg::Lock::Timeout=300
test-deps:
	@if command -v chromium >/dev/null || command -v chromium-browser >/dev/null; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
		echo "Installing Debian's chromium (the browser tests' browser)"; \
		$(APT_GET) update && $(APT_GET) install -y chromium; \
	else \
		echo "test-deps: no chromium on PATH, and installing it needs root and apt-get: install Debian's chromium package (as root: make test-deps)" >&2; \
		exit 1; \
	fi

# The whole suite, on the project's Python (.venv), in TEST_WORKERS processes (one per
# core): most of its time is real Sphinx builds, one test file to a process at a time (a
# file's module-scoped builds are made once), so the builds of several files run side by
# side. The 25 slowest tests are listed at the end, to see where the time goes.
TEST_WORKERS ?= $(CORES)
test-suite: $(STAMP) test-deps
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist loadfile --durations=25 $(PYTEST_ARGS)

# The fast lane on the project's Python: leaves out the tests that start real Sphinx
# builds or render (the `slow` marker), its tests spread over every core; under a minute.
test-fast: $(STAMP) test-deps
	$(BIN)/python -m pytest -m "not slow" -n $(TEST_WORKERS) $(PYTEST_ARGS)

# The fast lane on another Python; a missing interpreter fails, it is never skipped.
$(addprefix test-,$(OTHER_PYTHONS)): test-%: $(STAMP) test-deps
	PATH="$(if $(PYTHONS_PATH),$(PYTHONS_PATH):)$$PATH" $(BIN)/nox --error-on-missing-interpreters \
		-s tests-$* -- -m "not slow" $(PYTEST_ARGS)

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
