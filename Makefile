# `make run` and `make test` set everything up on a fresh machine (Python >= 3.11).
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
RUN_STAMP := $(VENV)/.installed-run

export NO_PROXY := 127.0.0.1,localhost
export no_proxy := 127.0.0.1,localhost

.PHONY: run test test-quick lint validate bench clean

# `make run` installs what the bot needs (a 191 MB venv); the tests' extras (pytest, Playwright,
# mypy, NumPy...: 350 MB more) only with `make test` and the targets after it
$(RUN_STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e .
	touch $(RUN_STAMP)

$(STAMP): $(RUN_STAMP)
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

# options for the console quiz (used when no token is set), e.g. make run ARGS="--lang bn"
run: $(RUN_STAMP)
	$(BIN)/quizbot run $(ARGS)

# PYTEST_ARGS: which tests (default: all), e.g. make test PYTEST_ARGS=tests/storage_contract.
# The PostgreSQL tests run with QUIZBOT_TEST_POSTGRES_URL=postgresql://user@host:port/db set (a
# server where each test creates a database of its own); without it they are skipped, saying
# so in one line. QUIZBOT_TEST_STORE=postgres puts the shared storage fixture on PostgreSQL.
# The tests run on WORKERS pytest-xdist processes (each test has its own fake servers on random
# ports, its own files and its own PostgreSQL database). They mostly wait on sockets, bot
# processes and PostgreSQL, so twice as many workers as cores. `worksteal` hands each worker a
# run of tests in file order (a module's shared fixture is mostly built once) and moves tests
# to idle workers. WORKERS=0 runs them in this process (for --pdb or -s).
WORKERS ?= $(shell echo $$((2 * $$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 1))))
PYTEST_ARGS ?=
# Byte code is written even where PYTHONDONTWRITEBYTECODE says not to: each worker's collection
# is mostly pytest rewriting the asserts of every test module, which pytest caches in
# __pycache__ only where Python may write byte code (the collection of 3,680 tests on 4
# workers: 54 s of CPU without the caches, 33 s on a fresh clone with them, 19 s once written).
PYTEST := PYTHONDONTWRITEBYTECODE= $(BIN)/python -m pytest -q -n $(WORKERS) --dist worksteal
# the whole suite; `make test-quick` leaves out the tests marked slow (kill -9 during bursts,
# processes waiting for real questions to close), for a quicker loop while editing
test: $(STAMP)
	$(PYTEST) $(PYTEST_ARGS)

test-quick: $(STAMP)
	$(PYTEST) -m "not slow" $(PYTEST_ARGS)

lint: $(STAMP)
	$(BIN)/ruff check bot tests scripts
	$(BIN)/mypy

validate: $(STAMP)
	$(BIN)/quizbot content validate --strict

# Everything docs/performance.md publishes, each figure beside its floor from the same run:
# bench.json (all figures, every run) and bench.md (the tables); `make bench BENCH=--quick`
# is a smoke run at small sizes (3 minutes; the full one 13: both at load average 8-12 on 2 CPUs;
# the dashboard's million answers add 10-20 minutes to fill and apply, SQLite and PostgreSQL;
# the memory soak's million answers through each platform's fake, hours at about 100 a second).
# PostgreSQL: QUIZBOT_BENCH_POSTGRES_URL or QUIZBOT_TEST_POSTGRES_URL (else left out).
# `scripts/bench_report.py bench.json --write docs/performance.md` puts the tables in the doc.
BENCH ?=
bench: $(STAMP)
	$(BIN)/python scripts/bench.py $(BENCH) --json bench_sqlite.json
	$(BIN)/python scripts/bench_postgres.py $(BENCH) --answers-only --json bench_postgres.json
	$(BIN)/python scripts/bench_storm.py $(BENCH) --json bench_storm.json
	$(BIN)/python scripts/bench_dashboard.py $(BENCH) --json bench_dashboard.json
	$(BIN)/python scripts/bench_fanout.py $(BENCH) --json bench_fanout.json
	$(BIN)/python scripts/bench_memory.py $(BENCH) --json bench_memory.json
	$(BIN)/python scripts/bench_fsrs.py $(BENCH) --json bench_fsrs.json
	$(BIN)/python scripts/bench_report.py bench_sqlite.json bench_postgres.json \
		bench_storm.json bench_dashboard.json bench_fsrs.json bench_fanout.json \
		bench_memory.json --json bench.json --markdown bench.md

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache

# Interface strings: `make i18n` re-extracts the msgids from bot/ into the .pot and merges them
# into every locale's .po (translations are kept); `make i18n-check` fails on any gap (CI).
.PHONY: i18n i18n-check
i18n: $(STAMP)
	$(BIN)/python scripts/i18n.py

i18n-check: $(STAMP)
	$(BIN)/python scripts/i18n.py --check
