# Two commands on a fresh Debian machine: `make demo` and `make test`.
# Each target installs what it needs (Debian packages, a virtualenv) and is idempotent.
SHELL := /bin/bash
VENV := .venv
PY := $(VENV)/bin/python
PIP_STAMP := $(VENV)/.installed
APT_STAMP := $(VENV)/.apt-installed
APT_PACKAGES := apertium apertium-eng-spa apertium-eng-cat apertium-nno-nob apertium-spa-cat apertium-es-gl hfst wamerican postgresql chromium bubblewrap
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: demo test bench lint deps apt clean

deps: $(PIP_STAMP) apt

$(PIP_STAMP): pyproject.toml
	@command -v python3 >/dev/null || { $(SUDO) apt-get update && $(SUDO) apt-get install -y python3 python3-venv; }
	python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	# torch first, the CPU build: unbabel-comet and sentence-transformers (in dev) only ask for torch>=…, and
	# PyPI's torch for Linux is a multi-GB CUDA build; the fallback is for machines without PyTorch's index
	$(PY) -m pip install --quiet --timeout 30 torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu \
	  || $(PY) -m pip install --quiet torch==2.13.0
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $@

# Debian packages: installed only when one is missing, so repeated runs cost nothing.
apt:
	@missing=""; for p in $(APT_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "Installing Debian packages:$$missing"; \
	  $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing; \
	fi

demo: deps
	$(VENV)/bin/mt-eval validate examples/ntrex128-eng-spa.json
	$(VENV)/bin/mt-eval run --corpus examples/ntrex128-eng-spa.json --method apertium:eng-spa \
	  --condition demo --out runs/demo/run_card.json
	$(VENV)/bin/mt-eval verify runs/demo/run_card.json
	$(VENV)/bin/mt-eval show runs/demo/run_card.json
	$(VENV)/bin/mt-eval report runs/demo/run_card.json --out runs/demo/report.html --force

test: deps
	$(VENV)/bin/python -m pytest -q

lint: deps
	$(VENV)/bin/ruff check src tests benchmarks
	$(VENV)/bin/mypy

bench: deps
	@for b in benchmarks/bench_*.py benchmarks/adversarial.py; do echo "== $$b"; $(PY) $$b || exit 1; done

clean:
	rm -rf $(VENV) runs .pytest_cache .mypy_cache .ruff_cache
