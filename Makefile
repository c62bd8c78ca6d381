# Two commands do all the set-up: `make test` and `make run`.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: test run install clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

install: $(STAMP)

## Create the environment and run the whole suite offline.
test: $(STAMP)
	$(PY) -m pytest

## Ask a question of the embedded movies graph: make run QUESTION="Who directed The Matrix?"
run: $(STAMP)
	$(PY) -m graphs.main $(if $(QUESTION),"$(QUESTION)")

clean:
	rm -rf $(VENV) .pytest_cache *.egg-info
