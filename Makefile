# The two set-up commands of the README: `make demo` and `make test`.
PY ?= $(shell command -v python3.11 2>/dev/null || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
# the CPU build of torch, named explicitly (an unpinned or plain `torch` may be the multi-GB CUDA build);
# where no +cpu wheel can be found, the plain pin is installed with a warning
TORCH_CPU ?= torch==2.13.0+cpu
TORCH_PIN ?= torch==2.13.0
# the stamp is named after the content of pyproject.toml (and the torch build), never its mtime: a fresh
# clone or a checkout that rewrites the file with the same content does not reinstall
STAMP := $(VENV)/.installed-$(shell (cat pyproject.toml; echo '$(TORCH_CPU)') | cksum | cut -d' ' -f1)
export PREFECT_SERVER_ANALYTICS_ENABLED ?= false
export PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS ?= 120
export HF_HUB_OFFLINE ?= 1

.PHONY: demo test test-unit test-flow test-integration lint bench clean install print-stamp

install: $(STAMP)

$(STAMP):
	@$(PY) -c 'import sys; assert sys.version_info[:2] == (3, 11), "assay needs Python 3.11, found " + sys.version.split()[0]'
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	# the CPU build of torch first, then a constraint holding it: nothing installed later replaces it (-W ignore: torch
	# warns here that numpy is not installed yet, which it is next)
	$(BIN)/python -m pip install -q "$(TORCH_CPU)" || { echo "warning: no $(TORCH_CPU) wheel found; installing $(TORCH_PIN) (may be a CUDA build)" >&2; $(BIN)/python -m pip install -q "$(TORCH_PIN)"; }
	$(BIN)/python -W ignore -c 'import torch; print("torch==" + torch.__version__)' > $(VENV)/constraints.txt
	$(BIN)/python -m pip install -q -c $(VENV)/constraints.txt -e ".[dev]"
	# the local Prefect server's template database for this Prefect (a fresh home then skips its migrations)
	$(BIN)/python -m assay_flows.local_server --prepare || echo "warning: no Prefect database template built" >&2
	rm -f $(VENV)/.installed-*
	touch $(STAMP)

print-stamp:
	@echo $(STAMP)

demo: $(STAMP)
	$(BIN)/assay demo

# every test CI needs, in one pytest session on three workers (pytest-xdist; each worker has its own ASSAY_HOME
# and PREFECT_HOME, see tests/conftest.py). A file stays on one worker (its module fixtures run once), and so
# do files sharing an expensive session fixture (the flow tier's Prefect harness: tests/conftest.py); they are
# handed out in the order tests/conftest.py gives (--no-loadscope-reorder: xdist's own order, by number of
# tests, handed the few-test, minutes-long Prefect server files out last): the Prefect server files first,
# then the unit, flow and integration tiers. The tiers alone: make test-unit, test-flow,
# test-integration; `-m "not services"` leaves out what needs PostgreSQL, nx-27017, a Prefect server or
# Chromium.
PYTEST := $(BIN)/python -m pytest -q -p no:cacheprovider
# three workers on a 2-core machine: a third of a worker's time is waiting on servers and subprocesses (the
# same CPU in a third less wall in two pairs of runs: bench/README.md, session 12, suite). The unit tier, CPU
# only, stays on two. WORKERS=1 (or UNIT_WORKERS=1): one process.
WORKERS ?= 3
UNIT_WORKERS ?= 2
xdist = $(if $(filter 0 1,$(1)),,-n $(1) --dist loadfile --no-loadscope-reorder)
XDIST = $(call xdist,$(WORKERS))

test: $(STAMP)
	$(PYTEST) $(XDIST) tests/unit tests/flows tests/integration

test-unit: $(STAMP)
	$(PYTEST) $(call xdist,$(UNIT_WORKERS)) tests/unit

test-flow: $(STAMP)
	$(PYTEST) $(XDIST) tests/flows

test-integration: $(STAMP)
	$(PYTEST) $(XDIST) tests/integration

lint: $(STAMP)
	$(BIN)/ruff check assay assay_flows tests bench

clean:
	rm -rf $(VENV) .pytest_cache
