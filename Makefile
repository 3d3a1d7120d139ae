# Two commands do everything on a fresh machine: `make run` and `make test`.
PY ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test test-kafka bench lint venv clean

$(STAMP): pyproject.toml
	@command -v $(PY) >/dev/null || { echo "Python 3.11 is required ($(PY) not found)"; exit 1; }
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[dev]'
	touch $(STAMP)

venv: $(STAMP)

run: $(STAMP)
	$(BIN)/python -m console.runner

# make turns any failure into exit 2; the real pytest code is kept in var/pytest-exit-code for .ci/run.
test: $(STAMP)
	@mkdir -p var; rm -f var/pytest-exit-code; rc=0; \
	$(BIN)/python -m pytest tests $(PYTEST_ARGS) || rc=$$?; \
	echo $$rc > var/pytest-exit-code; exit $$rc

test-kafka: $(STAMP)
	@test -n "$$KAFKA_BOOTSTRAP_SERVERS" || { echo "set KAFKA_BOOTSTRAP_SERVERS (and KAFKA_BOOTSTRAP_CONTROLLERS)"; exit 2; }
	$(BIN)/python -m pytest tests/contract

# Every bench runs (each prints its RESULT line last); the target fails at the end if any missed its goal.
bench: $(STAMP)
	@missed=""; for f in bench/bench_*.py; do echo "== $$f"; $(BIN)/python $$f || missed="$$missed $$f"; done; \
	if [ -n "$$missed" ]; then echo "missed or failed:$$missed"; exit 1; fi

lint: $(STAMP)
	$(BIN)/ruff check . && $(BIN)/ruff format --check .

clean:
	rm -rf $(VENV) .pytest_cache
