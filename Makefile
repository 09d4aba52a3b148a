# Every target bootstraps .venv from this project's own files (uv when present, else venv + pip).
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo dev test lint format clean eval bench

$(STAMP): pyproject.toml
	@if command -v uv >/dev/null 2>&1; then \
		uv venv --allow-existing -q $(VENV) && uv pip install -q -p $(BIN)/python -e '.[dev]'; \
	else \
		python3 -m venv $(VENV) && $(BIN)/python -m pip install -q --upgrade pip && \
		$(BIN)/python -m pip install -q -e '.[dev]'; \
	fi
	@touch $(STAMP)

demo: $(STAMP)
	$(BIN)/research demo

dev: $(STAMP)
	$(BIN)/research dev

test: $(STAMP)
	$(BIN)/python -m pytest

lint: $(STAMP)
	$(BIN)/ruff format --check .
	$(BIN)/ruff check .
	$(BIN)/mypy

format: $(STAMP)
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

clean:
	rm -rf .research

# The labelled golden sets through both policies, offline. The Python 3.11 documentation is a
# Debian package: installed here when apt-get can (as root), else that set is skipped.
PYDOCS := /usr/share/doc/python3.11/html
eval: $(STAMP)
	@if [ ! -d $(PYDOCS) ] && command -v apt-get >/dev/null 2>&1 && [ "$$(id -u)" = 0 ]; then \
		apt-get install -y -qq python3.11-doc >/dev/null || echo "python3.11-doc could not be installed"; \
	fi
	@if [ -d $(PYDOCS) ]; then \
		$(BIN)/research eval examples/golden/demo.json examples/golden/python311-docs.json; \
	else \
		echo "$(PYDOCS) is missing (apt-get install python3.11-doc): evaluating the demo set only"; \
		$(BIN)/research eval examples/golden/demo.json; \
	fi

# How lean the loop is: overhead per step, history, prompt tokens, 100 runs at once (figures only).
bench: $(STAMP)
	$(BIN)/python -m bench.lean 100
