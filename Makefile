# Two commands on a fresh Debian machine: `make demo` and `make test`.
# `make demo` installs the package and the Debian packages the demo uses, nothing else; `make test` adds the
# development set (test tools, optional backends, every Debian package the suite drives). Each target is
# idempotent: a stamp per level, Debian packages installed only when one is missing.
SHELL := /bin/bash
VENV := .venv
PY := $(VENV)/bin/python
# pip runs only at install time: its bytecode (5 MB when it imports itself) is not kept in the venv
PIP := PYTHONDONTWRITEBYTECODE=1 $(PY) -m pip
BASE_STAMP := $(VENV)/.installed-base
DEV_STAMP := $(VENV)/.installed-dev
# the demo: Apertium eng→spa translates, its analysers score Spanish and English, wamerican checks the source
DEMO_APT := apertium apertium-eng-spa wamerican
# gcc + libc6-dev: the C twins (TER's edit distance, the embedding engine's kernel) are compiled on first use and
# their tests compare them with the Python paths; without a compiler mt-eval uses those paths (same numbers)
TEST_APT := $(DEMO_APT) apertium-eng-cat apertium-nno-nob apertium-spa-cat apertium-es-gl hfst postgresql \
            chromium bubblewrap gcc libc6-dev
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: demo test test-slow bench lint deps deps-demo apt-demo apt-test clean

# Debian packages: installed only when one is missing, so repeated runs cost nothing.
define apt_install
	@missing=""; for p in $(1); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "Installing Debian packages:$$missing"; \
	  $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing; \
	fi
endef

$(BASE_STAMP): pyproject.toml
	@command -v python3 >/dev/null || { $(SUDO) apt-get update && $(SUDO) apt-get install -y python3 python3-venv; }
	python3 -m venv $(VENV)
	# --no-compile here too: pip's own bytecode is 7 of its 14 MB, and pip runs only at install time
	$(PIP) install --quiet --no-compile --upgrade pip
	# --no-compile: bytecode is written as modules are first imported (what the demo uses), not for every module of
	# every dependency (60 MB); setuptools came with `python -m venv`, and nothing installed needs it (the build
	# runs in pip's isolated environment). Why the rest is base: docs/decisions.md, "one install, one number".
	$(PIP) install --quiet --no-compile -e .
	# ...but a development venv keeps it: COMET's torchmetrics imports pkg_resources (a `make demo` after a
	# pyproject.toml change re-ran this step in the shared dev venv and 21 COMET tests failed)
	[ -e $(DEV_STAMP) ] || $(PIP) uninstall --quiet -y setuptools
	touch $@

$(DEV_STAMP): $(BASE_STAMP)
	# torch first, the CPU build: unbabel-comet and sentence-transformers (in dev) only ask for torch>=…, and
	# PyPI's torch for Linux is a multi-GB CUDA build. No retries against PyTorch's index: where it cannot be
	# reached, plain pip is the fallback at once.
	$(PY) -m pip install --quiet --retries 0 --timeout 20 torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu \
	  || $(PY) -m pip install --quiet torch==2.13.0
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $@

apt-demo:
	$(call apt_install,$(DEMO_APT))

apt-test:
	$(call apt_install,$(TEST_APT))

deps-demo: $(BASE_STAMP) apt-demo

deps: $(DEV_STAMP) apt-test

demo: deps-demo
	$(VENV)/bin/mt-eval validate examples/ntrex128-eng-spa.json
	$(VENV)/bin/mt-eval run --corpus examples/ntrex128-eng-spa.json --method apertium:eng-spa \
	  --condition demo --out runs/demo/run_card.json --force
	$(VENV)/bin/mt-eval verify runs/demo/run_card.json
	$(VENV)/bin/mt-eval show runs/demo/run_card.json
	$(VENV)/bin/mt-eval report runs/demo/run_card.json --out runs/demo/report.html --force

# the suite a developer runs; CI runs test-slow after it (.ci/run). Two pytest-xdist workers, each taking whole
# modules (tests/conftest.py's scheduler; TEST_WORKERS=0 runs in one process). Bytecode is cached even where
# PYTHONDONTWRITEBYTECODE is set: without the cache every worker rewrites every test module's asserts again and
# every `mt-eval` subprocess compiles the package again (decisions §71).
TEST_WORKERS ?= 2
PYTEST := env -u PYTHONDONTWRITEBYTECODE $(VENV)/bin/python -m pytest -q -n $(TEST_WORKERS)
test: deps
	$(PYTEST) -m "not slow"

test-slow: deps
	$(PYTEST) -m slow

lint: deps
	$(VENV)/bin/ruff check src tests benchmarks
	$(VENV)/bin/mypy

bench: deps
	@for b in benchmarks/bench_*.py benchmarks/adversarial.py; do echo "== $$b"; $(PY) $$b || exit 1; done

clean:
	rm -rf $(VENV) runs .pytest_cache .mypy_cache .ruff_cache
