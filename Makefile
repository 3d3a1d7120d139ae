# Two commands do everything on a fresh machine: `make run` and `make test`.
PY ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
TEST_STAMP := $(VENV)/.installed-test
export PY

.PHONY: run test test-kafka bench lint venv clean try-sso try-spark

# System packages first (scripts/system-deps: apt as root, else one message saying what to install).
$(STAMP): pyproject.toml setup.py console/kafka/_metadata.c
	@scripts/system-deps run
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[dev]'
	touch $(STAMP)

# The tests also need the browser, slapd and the "ldap" and "kerberos" extras (python-ldap and gssapi
# build against the system's libldap and MIT krb5).
$(TEST_STAMP): $(STAMP)
	@scripts/system-deps test
	$(BIN)/pip install -q -e '.[dev,ldap,kerberos]'
	touch $(TEST_STAMP)

venv: $(STAMP)

run: $(STAMP)
	@scripts/system-deps run
	$(BIN)/python -m console.runner

# Beside `make run`, the servers the tests start (docs/try.md): slapd with the test directory and the OIDC
# provider (try-sso), a Spark standalone master and worker (try-spark). Each writes the console's settings
# to var/try-<what>.env and runs until Ctrl-C. The test set-up brings slapd, Java and the "ldap" extra.
try-sso try-spark: $(TEST_STAMP)
	@scripts/system-deps test
	$(BIN)/python -m tests.try_it $(@:try-%=%)

# pytest runs `tests` (testpaths in pyproject.toml) unless PYTEST_ARGS names test files or directories.
# The 40 slowest tests (5 s or more) are listed at the end, to see where the suite's time goes.
# make turns any failure into exit 2; the real pytest code is kept in var/pytest-exit-code for .ci/run.
# system-deps runs every time (a file check, quick): a package removed since the stamp is put back.
# The whole suite (no PYTEST_ARGS) then runs the database-heavy modules again on a PostgreSQL the test
# session starts itself (tests/pg.py); the first failing pass's code is kept.
PG_TESTS = $(wildcard tests/unit/test_audit*.py tests/unit/test_operation*.py tests/unit/test_requests*.py \
	tests/unit/test_changes*.py) tests/unit/test_api_changes.py tests/unit/test_cli_requests.py \
	tests/unit/test_workers_race.py tests/unit/test_workers_race_celery.py tests/unit/test_poll_pool.py \
	tests/unit/test_postgres_pass.py tests/unit/test_alert_lifecycle.py tests/unit/test_reassign_rows_update.py
test: $(TEST_STAMP)
	@scripts/system-deps test
	@mkdir -p var; rm -f var/pytest-exit-code; rc=0; \
	$(BIN)/python -m pytest --durations=40 --durations-min=5 $(PYTEST_ARGS) || rc=$$?; \
	if [ -z "$(PYTEST_ARGS)" ]; then \
	  echo "== the database-heavy tests again, on PostgreSQL (CONSOLE_TEST_DB=postgres)"; \
	  CONSOLE_TEST_DB=postgres $(BIN)/python -m pytest $(PG_TESTS) || { [ $$rc -ne 0 ] || rc=$$?; }; \
	fi; \
	echo $$rc > var/pytest-exit-code; exit $$rc

# The contract suite against a real cluster: KAFKA_BOOTSTRAP_SERVERS (+ KAFKA_BOOTSTRAP_CONTROLLERS), secured by
# KAFKA_SECURITY_PROTOCOL, KAFKA_SASL_MECHANISM/_USERNAME/_PASSWORD, KAFKA_SSL_CA_FILE/_CERT_FILE/_KEY_FILE,
# KAFKA_SSL_CHECK_HOSTNAME, KAFKA_OAUTH_TOKEN_ENDPOINT/_CLIENT_ID/_CLIENT_SECRET/_SCOPE,
# KAFKA_KERBEROS_PRINCIPAL/_KEYTAB_FILE, KAFKA_KRB5_CONF_FILE; the controllers' own with the KAFKA_CONTROLLER_
# prefix (tests/contract/conftest.py). scripts/kafka-secured writes them per listener:
#   source /opt/realkafka/secured/mtls.env && make test-kafka      (also scram.env, oauth.env, kerberos.env)
test-kafka: $(STAMP)
	@test -n "$$KAFKA_BOOTSTRAP_SERVERS" || { echo "set KAFKA_BOOTSTRAP_SERVERS (and KAFKA_BOOTSTRAP_CONTROLLERS); see docs/connections.md"; exit 2; }
	$(BIN)/python -m pytest tests/contract

# Every bench runs (each prints its RESULT line last); the target fails at the end if any missed its goal.
bench: $(STAMP)
	@missed=""; for f in bench/bench_*.py; do echo "== $$f"; $(BIN)/python $$f || missed="$$missed $$f"; done; \
	if [ -n "$$missed" ]; then echo "missed or failed:$$missed"; exit 1; fi

lint: $(STAMP)
	$(BIN)/ruff check . && $(BIN)/ruff format --check .

clean:
	rm -rf $(VENV) .pytest_cache
