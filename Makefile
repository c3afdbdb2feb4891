# Two commands do all the set-up on a fresh clone: `make demo` and `make test`.
# `make demo` installs gamerig and what it needs to run (about 100 MB); `make test` adds the
# test extras (pytest, Selenium, the MCP SDK, Ray: several hundred MB more). Both print what
# pip is doing as it goes.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip install --progress-bar on --disable-pip-version-check
DEMO_STAMP := $(VENV)/.installed-demo
TEST_STAMP := $(VENV)/.installed-test

.PHONY: demo model-demo agent-demo pyboy-agent-demo lint test venv clean bench

$(PY):
	@echo "== creating $(VENV) with $(PYTHON)"
	$(PYTHON) -m venv $(VENV)
	$(PIP) --upgrade pip

$(DEMO_STAMP): pyproject.toml | $(PY)
	@echo "== installing gamerig and what it needs to run into $(VENV)"
	$(PIP) -e .
	touch $@

$(TEST_STAMP): pyproject.toml $(DEMO_STAMP)
	@echo "== installing the test extras into $(VENV) (pytest, Selenium, the MCP SDK, Ray: a few minutes the first time)"
	$(PIP) -e '.[test]'
	touch $@

venv: $(DEMO_STAMP)

demo: $(DEMO_STAMP)
	$(VENV)/bin/supervisor start run/profiles/demo.yaml

# the model path with no GPU: a stand-in OpenAI-compatible server (legal answers, not good ones)
model-demo: $(DEMO_STAMP)
	$(PY) -m actors.model_client.standin --port 0 --run $(VENV)/bin/supervisor start run/profiles/model-demo.yaml --set 'model.base_url={url}'

# the model chooses every action (policy.module: llm), answered by the same stand-in server
agent-demo: $(DEMO_STAMP)
	$(PY) -m actors.model_client.standin --port 0 --run $(VENV)/bin/supervisor start run/profiles/agent-demo.yaml --set 'model.base_url={url}'

# a vision model presses every button of our Game Boy demo cartridge (policy.module: pyboy_llm), same stand-in
pyboy-agent-demo: $(DEMO_STAMP)
	$(PY) -m actors.model_client.standin --port 0 --run $(VENV)/bin/supervisor start run/profiles/pyboy-agent.yaml --set 'model.base_url={url}'

# the linter, the formatter check and the type checker (configured in pyproject.toml); all three
# run and report, and any failure fails the target (and with it `make test`)
lint: $(TEST_STAMP)
	@fail=0; \
	echo "== ruff check: lint rules (fix: $(VENV)/bin/ruff check --fix .)"; \
	$(VENV)/bin/ruff check . || fail=1; \
	echo "== ruff format --check: layout (fix: $(VENV)/bin/ruff format .)"; \
	$(VENV)/bin/ruff format --check . || fail=1; \
	echo "== mypy: types (protocol/ and the viewer's API strict; pyproject.toml [tool.mypy])"; \
	$(VENV)/bin/mypy || fail=1; \
	exit $$fail

test: $(TEST_STAMP) lint
	$(PY) -m pytest -n 3 --dist worksteal

clean:
	rm -rf $(VENV) run/capture run/runtime
