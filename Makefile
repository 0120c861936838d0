# The two commands of the README (`make demo`, `make test`) and the developer targets.
# Everything is installed into .venv by this file; pip's cache stays in ~/.cache.

PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
PROTO_VENV := $(HOME)/.cache/sumlens/proto-venv
PROTO_FILES := $(wildcard src/sumlens/_proto/*.proto)

.PHONY: demo test lint proto bench clean

$(STAMP): pyproject.toml Makefile
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	# torch only when absent, and then exactly the CPU build that lies on this machine's disk
	$(PY) -c "import torch" 2>/dev/null || $(PY) -m pip install --quiet "torch==2.13.0"
	$(PY) -m pip install --quiet -e ".[all,test]"
	touch $(STAMP)

demo: $(STAMP)
	$(PY) examples/quickstart.py

test: $(STAMP)
	$(PY) -m ruff check src tests benchmarks examples
	$(PY) -m pytest

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

clean:
	rm -rf $(VENV) build dist src/*.egg-info .pytest_cache .ruff_cache .hypothesis
