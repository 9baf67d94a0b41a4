# trajscope — `make demo` runs the main job on the embedded default; `make test` runs the tests.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.setup-stamp
APP_STAMP := $(VENV)/.app-stamp
DB     ?= demo.duckdb
PORT   ?= 8501
# What the dashboard (and the demo until its first model call) imports: wheels only, no native build.
# Their version constraints are read from pyproject.toml, so the two set-ups cannot disagree.
APP_DEPS := duckdb polars pyarrow msgspec click tqdm pyyaml streamlit altair vl-convert-python numpy httpx \
            scipy statsmodels jsonschema openinference-semantic-conventions zipfile-zstd
# Written once torch and pyproject.toml's dependencies are in: everything the demo runs on. The demo
# starts its runs there, while the extras the tests need (Ray, Gemma 3's GGUF, the test tools: 0.6 GB
# of downloads) still install.
DEPS_STAMP := $(VENV)/.deps-stamp
# pyproject.toml's dependencies, by name: `$(PROJECT_DEPS) NAME...` prints those with their version
# constraints, so the light set-up cannot disagree with the project file.
# uv installs what pip would (same requirements, same wheels) about ten times faster here: parallel
# downloads and no bytecode compile at install (BENCHMARKS.md). It does not read pip's
# config, so pip's find-links (on these machines, the folder holding torch's CPU wheel) is passed on.
UV_VERSION := 0.13.9
UV := $(BIN)/uv pip install --quiet --python $(BIN)/python
LINKS = links="$$($(BIN)/pip config get global.find-links 2>/dev/null || echo "$${PIP_FIND_LINKS:-}")"
# Packages whose own requirements would drag in a compile (pyproject.toml [tool.trajscope] no-deps).
NO_DEPS = $(BIN)/python -c "import tomllib; print(' '.join(tomllib.load(open('pyproject.toml', 'rb'))['tool']['trajscope']['no-deps']))"
PROJECT_DEPS = $(BIN)/python -c "import re, sys, tomllib; \
  deps = tomllib.load(open('pyproject.toml', 'rb'))['project']['dependencies']; names = set(sys.argv[1:]); \
  print(' '.join(d for d in deps if re.split(r'[<>=!~\[ ;]', d)[0] in names))"

.PHONY: setup browser latex strace test test-fast lint typecheck demo demo-url app bench bench-peers schema clean

setup: $(STAMP)

# torch goes first, pinned: 2.13.0 is the CPU build on local disk here, whereas an unpinned torch
# (pulled in by sentence-transformers) would fetch a multi-GB CUDA build. Nothing compiles: the embedded
# model runs on ik-llama-cpp-python's prebuilt wheel (BENCHMARKS.md: set-up with and without the
# llama-cpp-python source build it replaced).
$(STAMP): pyproject.toml setup.py
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	test -x $(BIN)/uv || $(BIN)/pip install --quiet uv==$(UV_VERSION)
	rm -f $(DEPS_STAMP)
	$(LINKS); $(UV) $${links:+--find-links "$$links"} torch==2.13.0
	$(UV) --no-deps $$($(NO_DEPS))
	$(LINKS); $(UV) $${links:+--find-links "$$links"} -e .
	touch $(DEPS_STAMP)
	$(LINKS); $(UV) $${links:+--find-links "$$links"} -e '.[test,distributed,gemma3]'
	# uv does not byte-compile at install as pip does, so every new process would compile what it imports
	# (1.7 s of scipy.stats in each `trajscope report` where PYTHONDONTWRITEBYTECODE is set, as on these
	# machines; BENCHMARKS.md). Off the demo's path: its runs started at the deps stamp. Some packages ship
	# files that are not Python 3 (templates, test data), so compileall's exit status is not an error here.
	$(BIN)/python -m compileall -q -j 0 "$$($(BIN)/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')" >/dev/null 2>&1 || true
	touch $(STAMP)

# The dashboard's dependencies alone (seconds from an empty cache: BENCHMARKS.md).
$(APP_STAMP): pyproject.toml setup.py
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	test -x $(BIN)/uv || $(BIN)/pip install --quiet uv==$(UV_VERSION)
	$(UV) $$($(PROJECT_DEPS) $(APP_DEPS))
	$(UV) --no-deps -e .
	touch $(APP_STAMP)

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

# strace watches the commands for network connections in tests/security (Debian's package, never skipped).
strace:
	@command -v strace >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq strace >/dev/null; \
	  else sudo apt-get update -qq && sudo apt-get install -y -qq strace >/dev/null; fi; }

# Lint and type-check first: a ruff or mypy finding fails `make test` before any test runs.
test: setup browser latex strace
	$(BIN)/ruff check .
	$(MAKE) typecheck
	$(BIN)/python -m pytest -q -p no:cacheprovider

test-fast: setup
	$(BIN)/python -m pytest -q -m "not slow"

# ruff (pycodestyle, pyflakes, import order, bugbear, pyupgrade), configured in pyproject.toml.
lint: setup
	$(BIN)/ruff check .

# mypy over the whole package, strict on trajscope.format ([tool.mypy] in pyproject.toml). mypy follows no
# import hook, so it reads build/typecheck: the layout as installed, trajscope/<stage> linked to each stage folder.
TYPECHECK := build/typecheck
typecheck: setup
	rm -rf $(TYPECHECK) && mkdir -p $(TYPECHECK)/trajscope
	for f in trajscope/*; do ln -s ../../../$$f $(TYPECHECK)/trajscope/; done
	for s in app engine ingest warehouse; do ln -s ../../../$$s $(TYPECHECK)/trajscope/$$s; done
	cd $(TYPECHECK) && ../../$(BIN)/mypy --config-file ../../pyproject.toml

# The URL first: the dashboard serves as soon as the warehouse exists (after the light set-up above),
# while the full set-up runs in the background; the demo's runs start once its packages are in
# (DEPS_STAMP) and fill the dashboard live. With the set-up already done it starts at once.
demo: demo-url $(APP_STAMP)
	@rm -f $(STAMP).failed; \
	if ! $(MAKE) --no-print-directory -q setup; then \
	  rm -f $(STAMP); echo "set-up continues in the background (log: $(VENV)/setup.log)"; \
	  ( $(MAKE) --no-print-directory setup > $(VENV)/setup.log 2>&1 || touch $(STAMP).failed ) & \
	fi; \
	$(BIN)/trajscope demo --db $(DB) --port $(PORT) --wait-for-setup $(STAMP) --setup-log $(VENV)/setup.log

demo-url:
	@echo "Dashboard: http://127.0.0.1:$(PORT)  (serves once its packages are installed; then fills as the demo builds)"

app: setup
	$(BIN)/trajscope app --db $(DB)

# Script names shadow no package (sys.path[0] is bench/); each has a --tiny mode (tests/test_bench.py).
# The scale curve runs small by default; the 1M figures: make bench SCALE_SIZES=10000,100000,1000000
SCALE_SIZES ?= 1000,10000
bench: setup
	$(BIN)/python bench/ingest_vs_read_json.py
	$(BIN)/python bench/retrieval_2wiki.py
	$(BIN)/python bench/retrieval_load.py
	$(BIN)/python bench/engine_throughput.py
	$(BIN)/python bench/stats_comparison.py
	$(BIN)/python bench/app_pages.py
	$(MAKE) --no-print-directory bench-peers
	$(BIN)/python bench/scale.py --sizes $(SCALE_SIZES)

# bench/peers.py: Inspect AI from the test extra, Phoenix from the `peers` extra in a venv of its own (arize-phoenix pins
# OpenTelemetry below the main venv's, so `make test` never installs it). There the project goes in without its
# dependencies: the Phoenix side imports only the loopback mock server from it.
PEERS_VENV := .venv-peers
PEERS_EXTRA = $(BIN)/python -c "import tomllib; \
  print(' '.join(tomllib.load(open('pyproject.toml', 'rb'))['project']['optional-dependencies']['peers']))"
$(PEERS_VENV)/.stamp: pyproject.toml setup.py | $(STAMP)
	test -x $(PEERS_VENV)/bin/python || $(PYTHON) -m venv $(PEERS_VENV)
	$(LINKS); $(BIN)/uv pip install --quiet --python $(PEERS_VENV)/bin/python $${links:+--find-links "$$links"} \
	  $$($(PEERS_EXTRA))
	$(BIN)/uv pip install --quiet --python $(PEERS_VENV)/bin/python --no-deps -e .
	touch $@

bench-peers: setup $(PEERS_VENV)/.stamp
	$(BIN)/python bench/peers.py --phoenix-python $(PEERS_VENV)/bin/python

schema: setup
	$(BIN)/trajscope schema > trajscope/format/trajectory.v1.schema.json

clean:
	rm -rf $(VENV) *.egg-info .pytest_cache
