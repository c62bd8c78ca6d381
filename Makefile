# Two commands do all the set-up: `make test` and `make run`.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: test test-fast lint run serve scale scale-env install clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

install: $(STAMP)

# The JavaScript SDK (@langchain/langgraph-sdk, pinned in tests/js/package-lock.json), for the test that
# drives the server as a JS client does; installed only where npm is (its test says why it is skipped).
JS_CLIENT := tests/js/node_modules/.installed

$(JS_CLIENT): tests/js/package.json tests/js/package-lock.json
	@if command -v npm >/dev/null 2>&1; then \
		(npm ci --prefix tests/js --no-audit --no-fund --loglevel=error && touch $@) \
			|| echo "npm ci failed: the JavaScript SDK test is skipped (and fails under CI=true)"; \
	else echo "npm not found: the JavaScript SDK test is skipped"; fi

# agent-chat-ui (create-agent-chat-app's Vite template, pinned in tests/agent_chat_ui/package-lock.json) and
# Debian's Chromium with its driver, for the test that approves a query from the chat UI in a real browser;
# installed where npm (and, for Chromium, apt-get as root) are, else that test says why it is skipped.
CHAT_UI := tests/agent_chat_ui/web/.installed

$(CHAT_UI): tests/agent_chat_ui/package-lock.json tests/agent_chat_ui/install.sh
	@if { [ ! -x /usr/bin/chromium ] || [ ! -x /usr/bin/chromedriver ]; } && [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium chromium-driver >/dev/null \
			|| echo "apt-get could not install chromium: the chat UI test is skipped (and fails under CI=true)"; \
	fi
	@if command -v npm >/dev/null 2>&1; then \
		bash tests/agent_chat_ui/install.sh \
			|| echo "agent-chat-ui did not install: the chat UI test is skipped (and fails under CI=true)"; \
	else echo "npm not found: the chat UI test is skipped"; fi

# The scale-out runtime (`reflexion scale`: several server processes over one PostgreSQL and one Redis) in an
# environment of its own, as its pins differ from `serve`'s; made by `make test` for the test that kills a
# server process mid-run (it is skipped, and fails under CI=true, where PyPI cannot be reached).
SCALE_VENV := .venv-scale
SCALE_ENV := $(SCALE_VENV)/.installed

$(SCALE_ENV): pyproject.toml
	@($(PYTHON) -m venv $(SCALE_VENV) && $(SCALE_VENV)/bin/python -m pip install --quiet --upgrade pip \
		&& $(SCALE_VENV)/bin/python -m pip install --quiet -e '.[scale]' && touch $@) \
		|| echo "the scale-out runtime did not install: its test is skipped (and fails under CI=true)"

scale-env: $(SCALE_ENV)

# The notebooks run as a user would run them, on an embedded database of their own.
NOTEBOOK_ENV := REFLEXION_DATA_DIR=$(CURDIR)/.venv/notebook-data REFLEXION_CHECKPOINTS=memory

## Create the environment, check lint and types, run the whole suite offline, then execute every notebook.
test: $(STAMP) lint $(JS_CLIENT) $(CHAT_UI) $(SCALE_ENV)
	$(PY) -m pytest
	$(NOTEBOOK_ENV) $(PY) -m pytest --nbmake notebooks -p no:cacheprovider -q

## The unit tests alone (no database, server or other process): seconds, for the edit-test loop.
## `pytest -m integration` and `pytest -m server` run the other kinds (tests/conftest.py says which is which).
test-fast: $(STAMP)
	$(PY) -m pytest -m unit -q

## The gates: ruff (lint and format) over the tree, mypy --strict over the package (graphs/, nodes/,
## schemas/). A warning fails the build.
lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy

## Ask a question of the embedded movies graph: make run QUESTION="Who directed The Matrix?"
## The question reaches the program as typed: make expands nothing in it ($(value)), and the shell
## gets it in single quotes (each ' inside written '\'').
run: $(STAMP)
	$(PY) -m reflexion_agents.graphs.main $(if $(value QUESTION),'$(subst ','\'',$(value QUESTION))')

## Serve every registered graph (graphs/registry.py) with LangGraph's server, offline: make serve [PORT=2024] [JOBS=64]
serve: $(STAMP)
	$(VENV)/bin/reflexion serve --port $(or $(PORT),2024) $(if $(JOBS),--jobs $(JOBS))

## The same graphs from several server processes over one PostgreSQL and one Redis, started here:
## make scale [PROCESSES=2] [PORT=2024] [JOBS=16]
scale: $(SCALE_ENV)
	$(SCALE_VENV)/bin/reflexion scale --processes $(or $(PROCESSES),2) --port $(or $(PORT),2024) $(if $(JOBS),--jobs $(JOBS))

clean:
	rm -rf $(VENV) $(SCALE_VENV) .pytest_cache *.egg-info
