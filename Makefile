# Two commands do all the set-up: `make test` and `make run`.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: test run serve install clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

install: $(STAMP)

# The notebooks run as a user would run them, on an embedded database of their own.
NOTEBOOK_ENV := REFLEXION_DATA_DIR=$(CURDIR)/.venv/notebook-data REFLEXION_CHECKPOINTS=memory

## Create the environment and run the whole suite offline, then execute every notebook.
test: $(STAMP)
	$(PY) -m pytest
	$(NOTEBOOK_ENV) $(PY) -m pytest --nbmake notebooks -p no:cacheprovider -q

## Ask a question of the embedded movies graph: make run QUESTION="Who directed The Matrix?"
run: $(STAMP)
	$(PY) -m graphs.main $(if $(QUESTION),"$(QUESTION)")

## Serve every graph of langgraph.json with LangGraph's server, offline: make serve [PORT=2024]
serve: $(STAMP)
	$(VENV)/bin/reflexion serve --port $(or $(PORT),2024)

clean:
	rm -rf $(VENV) .pytest_cache *.egg-info
