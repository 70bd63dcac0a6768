# Two commands from nothing but python3 and make: `make demo`, `make test`.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
APP := $(VENV)/.installed-app
TEST := $(VENV)/.installed-test
BENCH := $(VENV)/.installed-bench

.PHONY: demo test test-deep lint screenshots bench fuzz conformance diagnostics-doc e2e-codex clean

# the app alone: what a user gets from `pip install .`
$(APP): pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e .
	touch $(APP)

# the app and the test extras (pytest, mypy, ruff, the openai SDK...)
$(TEST): pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[test]'
	touch $(APP) $(TEST)

# the test extras and the benchmarks' own (msgspec, for bench/real.py's second floor)
$(BENCH): $(TEST)
	$(BIN)/python -m pip install -q -e '.[test,bench]'
	touch $(BENCH)

demo: $(APP)
	$(BIN)/fraglens

# three workers on two cores: a third of the suite's time is spent waiting on
# loopback servers, timers and subprocesses, not computing
test: lint
	$(BIN)/python -m pytest -q -n 3 --dist loadgroup

# the same suite with every property test at its full count of examples
test-deep: lint
	FRAGLENS_DEEP=1 $(BIN)/python -m pytest -q -n 3 --dist loadgroup

# plain mypy on the whole package, --strict on the sans-I/O core; ruff runs in the suite
lint: $(TEST)
	$(BIN)/mypy
	$(BIN)/mypy --strict -p fraglens.engine -p fraglens.framing -p fraglens.adapters -m fraglens.redact -m fraglens.records

screenshots: $(TEST)
	$(BIN)/python scripts/screenshots.py screenshots

diagnostics-doc: $(APP)
	$(BIN)/python scripts/diagnostics_doc.py > docs/diagnostics.md

bench: $(BENCH)
	$(BIN)/python bench/real.py
	$(BIN)/python bench/startup.py
	$(BIN)/python bench/growth.py
	$(BIN)/python bench/engine.py
	$(BIN)/python bench/verdicts.py
	$(BIN)/python bench/tui.py --recording
	$(BIN)/python bench/live.py
	$(BIN)/python bench/bedrock_live.py
	$(BIN)/python bench/proxy.py
	$(BIN)/python bench/ws_proxy.py
	$(BIN)/python bench/fit_timing.py
	$(BIN)/python bench/report_text.py
	$(BIN)/python bench/chunking.py
	$(BIN)/python bench/leaks.py
	$(BIN)/python bench/scrub.py

# outside CI: the Codex CLI (installed from npm into .e2e/ the first time) over
# WebSocket through fraglens proxy in front of fraglens serve
e2e-codex: $(APP)
	$(BIN)/python scripts/e2e_codex.py

# 5,000 mutated streams, recordings and HARs, each under a hang watchdog; the
# suite runs the first few hundred of the same cases (tests/test_fuzz.py)
fuzz: $(TEST)
	$(BIN)/python bench/fuzz.py --cases 5000

conformance: $(APP)
	$(BIN)/python ../shared/tools/conformance.py --cmd "$(BIN)/fraglens check --json" -v

clean:
	rm -rf $(VENV) build *.egg-info tui/*.egg-info
