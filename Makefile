# One task runner: every target sets up what it needs in .venv first.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP_RUN := $(VENV)/.installed-run
STAMP_DEV := $(VENV)/.installed-dev

.PHONY: demo test check bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# The install compiles the ingest hot path (setup.py), so it runs again when one of its modules changes. The
# tests require the compiled build (CITEAUDIT_COMPILE=1); the demo compiles it when a C compiler is there.
BUILT := setup.py $(wildcard src/citeaudit/ingest/*.py) src/citeaudit/core/identity.py src/citeaudit/core/json_walk.py

$(STAMP_RUN): pyproject.toml $(BUILT) | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e .
	touch $@

$(STAMP_DEV): pyproject.toml $(BUILT) | $(BIN)/python
	CITEAUDIT_COMPILE=1 $(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $@ $(STAMP_RUN)

demo: $(STAMP_RUN)
	$(BIN)/python examples/controls.py
	$(BIN)/citeaudit demo

test: check
	$(BIN)/python -m pytest -q

check: $(STAMP_DEV)
	$(BIN)/ruff check src tests benchmarks scripts setup.py
	$(BIN)/ruff format --check src tests benchmarks scripts setup.py
	$(BIN)/mypy src
	$(BIN)/lint-imports

bench: $(STAMP_DEV)
	$(BIN)/python benchmarks/bench_scoring.py
	$(BIN)/python benchmarks/bench_brand.py
	$(BIN)/python benchmarks/bench_ingest.py
	$(BIN)/python benchmarks/bench_migrations.py
	$(BIN)/python benchmarks/bench_detect.py
	$(BIN)/python benchmarks/bench_limits.py
	$(BIN)/python benchmarks/bench_stats.py
	$(BIN)/python benchmarks/bench_coverage.py
	$(BIN)/python benchmarks/bench_compare_null.py
	$(BIN)/python benchmarks/bench_copies.py
	$(BIN)/python benchmarks/bench_agreement.py
	$(BIN)/python benchmarks/bench_resolve.py
	$(BIN)/python benchmarks/bench_review.py
	$(BIN)/python benchmarks/bench_evidence.py
	$(BIN)/python benchmarks/bench_segment.py
	$(BIN)/python benchmarks/bench_suggest.py
	$(BIN)/python benchmarks/bench_judges.py
	$(BIN)/python benchmarks/bench_startup.py
	$(BIN)/python benchmarks/bench_report.py
	$(BIN)/python benchmarks/bench_scale.py

clean:
	rm -rf $(VENV) build dist src/*.egg-info .pytest_cache .mypy_cache .ruff_cache
	find src -name '*.so' -delete
