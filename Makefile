# Two entry points: `make site` (set up, then build site/) and `make test`
# (set up, then run every test). Everything else here serves those two.

PYTHON ?= python3
export NO_MKDOCS_2_WARNING := 1
# A test run starts dozens of interpreters (fixture runs, builds, the command line): each reads the compiled modules
# the first one wrote, and pytest its rewritten test modules, instead of compiling them all again.
unexport PYTHONDONTWRITEBYTECODE
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
NODE_STAMP := node_modules/.installed

.PHONY: site test test-fast lint check setup dot chromium serve clean

site: setup
	$(BIN)/mkdocs build --strict

test: setup chromium $(NODE_STAMP) lint
	$(BIN)/python -m pytest

# The quick loop while writing a page: everything but the site builds and the browser.
test-fast: setup
	$(BIN)/python -m pytest -m "not slow"

# ruff's lint rules and formatting, and mypy's types, as pyproject.toml configures them.
lint: setup
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

check: site
	$(BIN)/site-builder check site

serve: setup
	$(BIN)/mkdocs serve

setup: $(STAMP) dot

$(STAMP): pyproject.toml constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -c constraints.txt -e '.[test,properdocs]'
	touch $(STAMP)

# axe-core for the accessibility test, exactly as package-lock.json pins it; `make site` needs no npm.
$(NODE_STAMP): package.json package-lock.json
	@command -v npm >/dev/null 2>&1 || { echo "error: 'npm' was not found; install Node.js with npm (sudo apt-get install npm) and retry, as the accessibility test needs axe-core from npm." >&2; exit 1; }
	npm ci --no-audit --no-fund
	touch $(NODE_STAMP)

dot:
	@scripts/ensure-debian-package graphviz dot

chromium:
	@scripts/ensure-debian-package chromium chromium

clean:
	rm -rf site .cache
