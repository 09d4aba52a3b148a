# Every target bootstraps .venv from this project's own files (uv when present, else venv + pip).
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo dev test lint format clean

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
