# Two commands from nothing but python3 and make: `make demo`, `make test`.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test screenshots bench conformance lint clean

$(STAMP): pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[test]'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/fraglens

test: $(STAMP)
	$(BIN)/python -m pytest -q

screenshots: $(STAMP)
	$(BIN)/python scripts/screenshots.py screenshots

bench: $(STAMP)
	$(BIN)/python bench/engine.py
	$(BIN)/python bench/tui.py
	$(BIN)/python bench/live.py
	$(BIN)/python bench/proxy.py

conformance: $(STAMP)
	$(BIN)/python ../shared/tools/conformance.py --cmd "$(BIN)/fraglens check --json" -v

lint: $(STAMP)
	$(BIN)/ruff check tui tests bench scripts

clean:
	rm -rf $(VENV) build *.egg-info
