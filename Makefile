# The README's two commands: `make play` and `make test`. Both set everything up on a fresh machine.

VENV    := .venv
PY      := $(VENV)/bin/python
STAMP   := $(VENV)/.installed
PYTHON  ?= python3
SUDO    := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: setup tools test typecheck lint play demo bench bench-abuse clean

# -qq: pip's warnings about the machine's own package indexes read as failures to a newcomer;
# an error still shows.
$(STAMP): pyproject.toml
	@echo "Setting up $(VENV) (the first time takes a minute or two) ..."
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	@$(PY) -m pip install -qq --upgrade pip
	@$(PY) -m pip install -qq -e '.[test]'
	@touch $(STAMP)
	@echo "Set up."

setup: $(STAMP)

# Debian packages the tests need (a terminal test drives the real client in tmux).
tools:
	@command -v tmux >/dev/null 2>&1 || { \
	  echo "installing tmux"; \
	  $(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq tmux >/dev/null; }

lint: setup
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

test: setup tools typecheck
	$(VENV)/bin/pytest -q

# The code installs as conjure.protocol, conjure.server and conjure.client (pyproject.toml's
# package-dir). Python finds those through setuptools' editable finder; basedpyright and
# import-linter cannot, so they read a tree of symlinks named as installed, rebuilt each run.
TREE := build/conjure-tree
typecheck: setup
	$(VENV)/bin/ruff check .
	@rm -rf $(TREE) && for f in $$(find protocol server client -name '*.py' -not -path '*/__pycache__/*'); do \
	  mkdir -p $(TREE)/conjure/$$(dirname $$f) && ln -sr $$f $(TREE)/conjure/$$f; done
	PYTHONPATH=$(TREE) $(VENV)/bin/lint-imports
	$(VENV)/bin/basedpyright

# make play ARGS='--new' (or --resume, --bots 5, --variant dark-magic ...): options of client.local
play: setup
	$(PY) -m conjure.client.local $(ARGS)

demo: setup
	$(VENV)/bin/conjure demo --watch

bench: setup
	$(PY) bench/load.py
	$(PY) bench/bots.py
	$(PY) bench/audit.py

# What the default limits do for an honest room under six attacks (about 2 minutes).
bench-abuse: setup
	$(PY) bench/abuse.py

clean:
	rm -rf $(VENV) build .pytest_cache .hypothesis .ruff_cache
