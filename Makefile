# trajscope — `make demo` runs the main job on the embedded default; `make test` runs the tests.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.setup-stamp
DB     ?= demo.duckdb

.PHONY: setup browser latex test test-fast lint demo app bench schema clean

setup: $(STAMP)

# torch goes first, pinned: 2.13.0 is the CPU build on local disk here, whereas an unpinned torch
# (pulled in by sentence-transformers) would fetch a multi-GB CUDA build.
$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet torch==2.13.0
	$(BIN)/pip install --quiet -e '.[test]'
	touch $(STAMP)

# Debian's Chromium drives the end-to-end dashboard test (Playwright's own browser download is not
# reachable from these machines).
browser:
	@command -v chromium >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq chromium >/dev/null; \
	  else sudo apt-get update -qq && sudo apt-get install -y -qq chromium >/dev/null; fi; }

# pdflatex with booktabs compiles the reports' LaTeX in the tests (Debian's packages, never skipped).
latex:
	@command -v pdflatex >/dev/null 2>&1 && kpsewhich booktabs.sty >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq --no-install-recommends \
	    texlive-latex-base texlive-latex-recommended >/dev/null; \
	  else sudo apt-get update -qq && sudo apt-get install -y -qq --no-install-recommends \
	    texlive-latex-base texlive-latex-recommended >/dev/null; fi; }

# Lint first: a ruff finding fails `make test` before any test runs.
test: setup browser latex
	$(BIN)/ruff check .
	$(BIN)/python -m pytest -q -p no:cacheprovider

test-fast: setup
	$(BIN)/python -m pytest -q -m "not slow"

# ruff (pycodestyle, pyflakes, import order, bugbear, pyupgrade), configured in pyproject.toml.
lint: setup
	$(BIN)/ruff check .

demo: setup
	$(BIN)/trajscope demo --db $(DB)

app: setup
	$(BIN)/trajscope app --db $(DB)

# Script names shadow no package (sys.path[0] is bench/); each has a --tiny mode (tests/test_bench.py).
bench: setup
	$(BIN)/python bench/ingest_vs_read_json.py
	$(BIN)/python bench/retrieval_2wiki.py
	$(BIN)/python bench/engine_throughput.py
	$(BIN)/python bench/stats_comparison.py
	$(BIN)/python bench/app_pages.py

schema: setup
	$(BIN)/trajscope schema > trajscope/format/trajectory.v1.schema.json

clean:
	rm -rf $(VENV) *.egg-info .pytest_cache
