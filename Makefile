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

.PHONY: demo test lint npm chromium-check proto bench bench-anchors bench-write bench-train bench-collector bench-thor \
	bench-landscape bench-board bench-views bench-remote bench-snapshot mindinsight clean

$(STAMP): pyproject.toml Makefile
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	# torch only when absent, and then exactly the CPU build that lies on this machine's disk
	$(PY) -c "import torch" 2>/dev/null || $(PY) -m pip install --quiet "torch==2.13.0"
	$(PY) -m pip install --quiet -e ".[all,test]"
	touch $(STAMP)

# The dashboard's third-party JavaScript (Graphviz as WebAssembly for the graph view), from the
# committed package.json + package-lock.json into a git-ignored folder the server serves and
# the wheel ships; the stamp names the lockfile, so a changed lock installs again.
NPM_DIR   := src/sumlens/board/static/vendor
NPM_STAMP := $(NPM_DIR)/.installed
$(NPM_STAMP): package.json package-lock.json
	@command -v npm >/dev/null || { echo "make: npm is missing; the dashboard's graph view needs \
	it once to install its layout library: run 'sudo apt-get install nodejs npm' (.ci/run does it)" >&2; \
	exit 1; }
	mkdir -p $(NPM_DIR)
	cp package.json package-lock.json $(NPM_DIR)/
	npm ci --prefix $(NPM_DIR) --no-audit --no-fund --loglevel=error
	touch $(NPM_STAMP)

npm: $(NPM_STAMP)

# Trains the digits CNN at two learning rates into ./demo_runs, then serves the dashboard on
# http://127.0.0.1:8080/ until Ctrl+C (DEMO_PORT=N for another port).
demo: $(STAMP) $(NPM_STAMP)
	$(PY) examples/demo.py

test: $(STAMP) $(NPM_STAMP) $(MI_STAMP) chromium-check
	$(PY) -m ruff check src tests benchmarks examples
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

lint: $(STAMP)
	$(PY) -m ruff check src tests benchmarks examples
	$(PY) -m ruff format --check src tests benchmarks examples

# Regenerate the committed protobuf modules from src/sumlens/_proto/*.proto.
# grpcio-tools 1.69 emits code for protobuf 5.29, which protobuf 5.29 to 7.x all load.
proto:
	test -x $(PROTO_VENV)/bin/python || $(PYTHON) -m venv $(PROTO_VENV)
	$(PROTO_VENV)/bin/pip install --quiet "grpcio-tools==1.69.0"
	cd src && $(PROTO_VENV)/bin/python -m grpc_tools.protoc -I . --python_out=. --pyi_out=. \
		$(patsubst src/%,%,$(PROTO_FILES))

bench: $(STAMP)
	$(PY) benchmarks/bench_read.py

# Real MindSpore for benchmarks/bench_write.py, in a venv of its own outside the repo
# (it needs its own numpy and protobuf); bench_write.py runs it through benchmarks/_anchors/.
BENCH_ANCHORS_VENV := $(HOME)/.cache/sumlens/bench-anchors/mindspore-venv

bench-anchors:
	test -x $(BENCH_ANCHORS_VENV)/bin/python || $(PYTHON) -m venv $(BENCH_ANCHORS_VENV)
	$(BENCH_ANCHORS_VENV)/bin/python -m pip install --quiet --upgrade pip
	$(BENCH_ANCHORS_VENV)/bin/python -c "import mindspore" 2>/dev/null \
		|| $(BENCH_ANCHORS_VENV)/bin/python -m pip install --quiet "mindspore==2.10.0"
	$(BENCH_ANCHORS_VENV)/bin/python benchmarks/_anchors/ms_write.py --check

bench-write: $(STAMP)
	$(PY) benchmarks/bench_write.py

bench-train: $(STAMP)
	$(PY) benchmarks/bench_train_loop.py

bench-collector: $(STAMP)
	$(PY) benchmarks/bench_collector.py

bench-thor: $(STAMP)
	$(PY) benchmarks/bench_thor.py

# The dashboard against TensorBoard, its Rust data server and MindInsight (needs Chromium too).
bench-board: $(STAMP) $(NPM_STAMP) $(MI_STAMP) chromium-check
	$(PY) benchmarks/bench_board.py

# The graph view (5,000 operators in 50 scopes; ResNet-50) and the lineage view (10,000 runs)
# timed in Chromium.
bench-views: $(STAMP) $(NPM_STAMP) chromium-check
	$(PY) benchmarks/bench_graph_view.py
	$(PY) benchmarks/bench_lineage_view.py
	$(PY) benchmarks/bench_embedding_view.py

# Serving from object storage: sumlens and TensorBoard over one bucket of moto's S3 server
# behind a proxy that delays every request by 20 ms (3 rounds, TensorBoard in one: ~25 min).
bench-remote: $(STAMP)
	$(PY) benchmarks/bench_remote.py

# A 50-run snapshot file: its size and its open time in Chromium (needs Chromium too).
bench-snapshot: $(STAMP) chromium-check
	$(PY) benchmarks/bench_snapshot.py

# loss-landscapes is the third method of bench_landscape.py (numpy only besides torch).
bench-landscape: $(STAMP)
	$(PY) -m pip install --quiet "loss-landscapes==3.0.6"
	$(PY) benchmarks/bench_landscape.py

clean:
	rm -rf $(VENV) build dist src/*.egg-info .pytest_cache .ruff_cache .hypothesis
