# The README's commands (GNU make). `make help` lists them.
SCALE ?= paper
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
PY := $(VENV)/bin/python
# torch==2.13.0 is the local CPU wheel; any other torch spec would pull the CUDA build (GBs),
# so it is installed first and then satisfies pyproject's torch>=2.13,<2.14.
TORCH := torch==2.13.0
STAMP := $(VENV)/.installed

.DEFAULT_GOAL := help
.PHONY: help venv book reproduce test clean

help:
	@echo "make book              build the HTML book (book/_build/html) at SCALE=$(SCALE), using stored runs"
	@echo "make reproduce         the same, retraining every run (--retrain)"
	@echo "make test              the test suite, including the notebooks at tiny scale and the book build"
	@echo "make venv              create $(VENV) and install urnlib[book,dev] (done by the targets above)"
	@echo "make clean             remove the built book, executed notebooks and .cache"
	@echo "SCALE is a parameter set notebooks/params/<chapter>.<SCALE>.yaml: tiny or paper (default paper)"

venv: $(STAMP)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet $(TORCH)
	$(PY) -m pip install --quiet -e ".[book,dev]"
	touch $@

book: $(STAMP)
	$(PY) -m urnlib.cli notebooks --scale $(SCALE)
	$(PY) -m urnlib.cli book

reproduce: $(STAMP)
	$(PY) -m urnlib.cli notebooks --scale $(SCALE) --retrain
	$(PY) -m urnlib.cli book

test: $(STAMP)
	$(PY) -m pytest -q

clean:
	rm -rf book/_build book/chapters/*.ipynb book/chapters/_claims .cache
