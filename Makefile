# Two entry points: `make site` (set up, then build site/) and `make test`
# (set up, then run every test). Everything else here serves those two.

PYTHON ?= python3
export NO_MKDOCS_2_WARNING := 1
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: site test test-fast check setup dot chromium serve clean

site: setup
	$(BIN)/mkdocs build --strict

test: setup chromium
	$(BIN)/python -m pytest

# The quick loop while writing a page: everything but the site builds and the browser.
test-fast: setup
	$(BIN)/python -m pytest -m "not slow"

check: site
	$(BIN)/site-builder check site

serve: setup
	$(BIN)/mkdocs serve

setup: $(STAMP) dot

$(STAMP): pyproject.toml constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -c constraints.txt -e '.[test]'
	touch $(STAMP)

dot:
	@scripts/ensure-debian-package graphviz dot

chromium:
	@scripts/ensure-debian-package chromium chromium

clean:
	rm -rf site .cache
