# The two commands of the README (`make demo`, `make test`) and the developer targets.
# Everything is installed into .venv by this file; pip's cache stays in ~/.cache.

PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
PROTO_VENV := $(HOME)/.cache/sumlens/proto-venv
PROTO_FILES := $(wildcard src/sumlens/_proto/*.proto)
# The real MindInsight for tests/compat (its own venv: it needs numpy<2 and an old protobuf).
MI_VERSION := 2.3.1
MI_VENV    := $(HOME)/.cache/sumlens/mindinsight-venv
MI_STAMP   := $(MI_VENV)/.sumlens-installed-mindinsight-$(MI_VERSION)
MINDINSIGHT_BIN := $(MI_VENV)/bin/mindinsight

.PHONY: demo test lint lint-js npm chromium-check proto bench bench-anchors bench-write bench-train bench-collector bench-thor \
	bench-landscape bench-board bench-views bench-remote bench-snapshot bench-team mindinsight clean

$(STAMP): pyproject.toml Makefile
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	# torch only when absent, and then exactly the CPU build that lies on this machine's disk
	$(PY) -c "import torch" 2>/dev/null || $(PY) -m pip install --quiet "torch==2.13.0"
	$(PY) -m pip install --quiet -e ".[all,test]"
	touch $(STAMP)

# The dashboard's third-party JavaScript (Graphviz as WebAssembly for the graph view), from the
# committed package.json + package-lock.json into a git-ignored folder the server serves and
# the wheel ships (its dependencies only: --omit=dev leaves ESLint out); the stamp names the
# lockfile, so a changed lock installs again.
NPM_DIR   := src/sumlens/board/static/vendor
NPM_STAMP := $(NPM_DIR)/.installed
$(NPM_STAMP): package.json package-lock.json
	@command -v npm >/dev/null || { echo "make: npm is missing; the dashboard's graph view needs \
	it once to install its layout library: run 'sudo apt-get install nodejs npm' (.ci/run does it)" >&2; \
	exit 1; }
	mkdir -p $(NPM_DIR)
	cp package.json package-lock.json $(NPM_DIR)/
	npm ci --prefix $(NPM_DIR) --omit=dev --no-audit --no-fund --loglevel=error
	touch $(NPM_STAMP)

npm: $(NPM_STAMP)

# ESLint (the lockfile's devDependencies) in a git-ignored folder of its own, never shipped;
# eslint.config.mjs loads its plugins from there. lint-js checks the page's own JavaScript and
# the snapshot's script (static/vendor/ is third-party) and fails on any finding.
LINT_NPM_DIR   := .lint/npm
LINT_NPM_STAMP := $(LINT_NPM_DIR)/.installed
ESLINT         := $(LINT_NPM_DIR)/node_modules/.bin/eslint
$(LINT_NPM_STAMP): package.json package-lock.json
	@command -v npm >/dev/null || { echo "make: npm is missing; ESLint is installed with it: \
	run 'sudo apt-get install nodejs npm' (.ci/run does it)" >&2; exit 1; }
	mkdir -p $(LINT_NPM_DIR)
	cp package.json package-lock.json $(LINT_NPM_DIR)/
	npm ci --prefix $(LINT_NPM_DIR) --no-audit --no-fund --loglevel=error
	touch $(LINT_NPM_STAMP)

lint-js: $(LINT_NPM_STAMP)
	$(ESLINT) --max-warnings=0 src/sumlens/board/static src/sumlens/board/snapshot/snapshot.js

# Trains the digits CNN at two learning rates into ./demo_runs, then serves the dashboard on
# http://127.0.0.1:8080/ until Ctrl+C (DEMO_PORT=N for another port).
demo: $(STAMP) $(NPM_STAMP)
	$(PY) examples/demo.py

# Every check first (ruff, ESLint, mypy: `make lint`), so CI fails when any of them does.
test: lint $(STAMP) $(NPM_STAMP) $(MI_STAMP) chromium-check
	MINDINSIGHT_BIN=$(MINDINSIGHT_BIN) $(PY) -m pytest

# MindInsight in a venv of its own, outside the repo; the stamp names the version, so a new
# MI_VERSION installs again. The pins are what MindInsight 2.3.1 needs to serve every route.
$(MI_STAMP):
	test -x $(MI_VENV)/bin/python || $(PYTHON) -m venv $(MI_VENV)
	$(MI_VENV)/bin/python -m pip install --quiet "mindinsight==$(MI_VERSION)" "numpy<2" \
		"scipy<1.14" "scikit-learn<1.6" "marshmallow<4" "pandas<2" Pillow
	test -x $(MINDINSIGHT_BIN)
	touch $(MI_STAMP)

mindinsight: $(MI_STAMP)

# The dashboard's browser tests drive Debian's Chromium; without it they would fail one by one.
CHROMIUM := /usr/bin/chromium
chromium-check:
	@test -x $(CHROMIUM) || { echo "make test: $(CHROMIUM) is missing; the browser tests need \
	Debian's Chromium: run 'sudo apt-get install chromium' (.ci/run does it)" >&2; exit 1; }

# ruff (style and format), ESLint over the page's JavaScript (lint-js) and mypy over src/
# (its settings: [tool.mypy] in pyproject.toml).
lint: $(STAMP) lint-js
	$(PY) -m ruff check src tests benchmarks examples
	$(PY) -m ruff format --check src tests benchmarks examples
	$(PY) -m mypy

# Regenerate the committed protobuf modules from src/sumlens/_proto/*.proto.
# grpcio-tools 1.69 emits code for protobuf 5.29, which protobuf 5.29 to 7.x all load.
proto:
	test -x $(PROTO_VENV)/bin/python || $(PYTHON) -m venv $(PROTO_VENV)
	$(PROTO_VENV)/bin/pip install --quiet "grpcio-tools==1.69.0"
	cd src && $(PROTO_VENV)/bin/python -m grpc_tools.protoc -I . --python_out=. --pyi_out=. \
		$(patsubst src/%,%,$(PROTO_FILES))

bench: $(STAMP)
	$(PY) -m benchmarks.bench_read

# Real MindSpore for benchmarks.bench_write, in a venv of its own outside the repo
# (it needs its own numpy and protobuf); bench_write runs it through benchmarks/_anchors/.
BENCH_ANCHORS_VENV := $(HOME)/.cache/sumlens/bench-anchors/mindspore-venv

bench-anchors:
	test -x $(BENCH_ANCHORS_VENV)/bin/python || $(PYTHON) -m venv $(BENCH_ANCHORS_VENV)
	$(BENCH_ANCHORS_VENV)/bin/python -m pip install --quiet --upgrade pip
	$(BENCH_ANCHORS_VENV)/bin/python -c "import mindspore" 2>/dev/null \
		|| $(BENCH_ANCHORS_VENV)/bin/python -m pip install --quiet "mindspore==2.10.0"
	$(BENCH_ANCHORS_VENV)/bin/python -m benchmarks._anchors.ms_write --check

bench-write: $(STAMP)
	$(PY) -m benchmarks.bench_write

bench-train: $(STAMP)
	$(PY) -m benchmarks.bench_train_loop

bench-collector: $(STAMP)
	$(PY) -m benchmarks.bench_collector

bench-thor: $(STAMP)
	$(PY) -m benchmarks.bench_thor

# The dashboard against TensorBoard, its Rust data server and MindInsight (needs Chromium too).
bench-board: $(STAMP) $(NPM_STAMP) $(MI_STAMP) chromium-check
	$(PY) -m benchmarks.bench_board

# The graph view (5,000 operators in 50 scopes; ResNet-50) and the lineage view (10,000 runs)
# timed in Chromium.
bench-views: $(STAMP) $(NPM_STAMP) chromium-check
	$(PY) -m benchmarks.bench_graph_view
	$(PY) -m benchmarks.bench_lineage_view
	$(PY) -m benchmarks.bench_embedding_view

# Serving from object storage: sumlens and TensorBoard over one bucket of moto's S3 server
# behind a proxy that delays every request by 20 ms (3 rounds, TensorBoard in one: ~25 min).
bench-remote: $(STAMP)
	$(PY) -m benchmarks.bench_remote

# 100 clients over two replicas behind nginx (TLS, PostgreSQL, moto's S3), then one replica,
# then two with one killed and restarted mid-load: failures, p50/p99, lost writes (needs
# Debian's nginx and postgresql, as .ci/run installs them).
bench-team: $(STAMP)
	$(PY) -m benchmarks.bench_team

# A 50-run snapshot file: its size and its open time in Chromium (needs Chromium too).
bench-snapshot: $(STAMP) chromium-check
	$(PY) -m benchmarks.bench_snapshot

# loss-landscapes is the third method of bench_landscape (numpy only besides torch).
bench-landscape: $(STAMP)
	$(PY) -m pip install --quiet "loss-landscapes==3.0.6"
	$(PY) -m benchmarks.bench_landscape

clean:
	rm -rf $(VENV) build dist src/*.egg-info .pytest_cache .ruff_cache .mypy_cache .hypothesis .lint
