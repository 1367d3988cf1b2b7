# Two commands for learners and maintainers alike:
#   make lab    build .venv if needed and open JupyterLab at notebook 01
#   make test   build .venv if needed, run the unit tests, then execute every notebook (nbval)
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
PY := $(VENV)/bin/python
# Rebuilt whenever the dependency list or the package metadata changes.
INSTALLED := $(VENV)/.installed
# Two cores: two pytest workers, one torch thread each, so they do not fight over the cores.
WORKERS ?= 2
export OMP_NUM_THREADS := 1
# JupyterLab refuses to run as root (containers often are) unless told it is deliberate.
LAB_FLAGS ?= $(if $(filter 0,$(shell id -u)),--allow-root)

.PHONY: lab test unit-test notebook-test test-threads browser-tools test-browser test-peers test-colab notebooks benchmark clean

$(INSTALLED): requirements.txt pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
# The lock file first (exact versions; torch==2.13.0 finds the CPU build), then the course on
# top without touching them; `pip check` confirms that the pins meet the package's lower bounds.
	$(PY) -m pip install --quiet -r requirements.txt
	$(PY) -m pip install --quiet --no-deps -e .
	$(PY) -m pip check
	touch $@

lab: $(INSTALLED)
	cd notebooks && ../$(VENV)/bin/jupyter lab $(LAB_FLAGS) 01_token_embeddings.ipynb

test: unit-test notebook-test

unit-test: $(INSTALLED)
	$(PY) -m pytest -n $(WORKERS) tests

# Every notebook, solutions included, executed in this environment; asserts inside them are the
# checks, and so are claims about training runs (strict here; a learner's run only notes a miss,
# see helpers/checks.py). Progress bars off: they are for learners watching, not for logs.
notebook-test: $(INSTALLED)
	TQDM_DISABLE=1 POSITIONS_STRICT_CHECKS=1 $(PY) -m pytest -n $(WORKERS) --dist loadscope --nbval-lax --nbval-current-env -p no:python notebooks

# The experiments' stated findings must not hang on one thread's arithmetic: 07 and 08 again,
# one after the other, with two CPU threads (a learner's default on a 2-core machine).
test-threads: $(INSTALLED)
	OMP_NUM_THREADS=2 TQDM_DISABLE=1 POSITIONS_STRICT_CHECKS=1 $(PY) -m pytest --nbval-lax --nbval-current-env -p no:python notebooks/07_compare_schemes.ipynb notebooks/08_context_extension.ipynb

# Debian's chromium if missing, and Playwright (test-only), which drives it and downloads nothing.
browser-tools: $(INSTALLED)
	test -x /usr/bin/chromium || { apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y chromium; }
	$(PY) -m pip install --quiet -r tests/browser/requirements.txt

# Every slider moved in JupyterLab in headless Chromium (tests/browser; not part of `make test`).
test-browser: browser-tools
	$(PY) -m pytest -v --durations=0 tests/browser

# The course as a Colab learner meets it (tests/colab/run.py; not part of `make test`): Colab's
# package versions in build/colab/venv, a stand-in google.colab, and the setup cell cloning this
# repository's committed HEAD into /content (so: run as root). Needs data/the-verdict.txt.
test-colab: $(INSTALLED)
	$(PY) tests/colab/run.py

# The course's code against the libraries learners meet next: Hugging Face transformers,
# rotary-embedding-torch, x-transformers (tests/peers; not part of `make test`). They are
# test-only, pinned in tests/peers/requirements.txt and installed under the constraint of
# requirements.txt, so no version the course pins can move (pip fails instead). Once installed,
# the run needs no network: configs are built in code, nothing comes from a model hub.
PEERS_INSTALLED := $(VENV)/.peers-installed

$(PEERS_INSTALLED): $(INSTALLED) tests/peers/requirements.txt
	$(PY) -m pip install --quiet -r tests/peers/requirements.txt -c requirements.txt
	$(PY) -m pip check
	touch $@

# 08's exercise checks refuse Hugging Face's RoPE functions once transformers is loaded; that
# test is skipped by `make test` (no transformers there), so it runs here too.
HF_REFUSAL := tests/exercises/test_context_checks.py::test_hugging_faces_functions_are_refused_while_transformers_is_loaded

test-peers: $(PEERS_INSTALLED)
	$(PY) -m pytest -n $(WORKERS) tests/peers $(HF_REFUSAL)

# The course website (site/), built from the stored notebooks into build/site/: nothing is
# executed, nothing downloaded once its toolchain is installed, and any Sphinx warning fails the
# build. The toolchain has its own venv, so the course's pinned .venv stays as it is.
SITE_VENV := build/site-venv
SITE_PY := $(SITE_VENV)/bin/python
SITE_INSTALLED := $(SITE_VENV)/.installed
.PHONY: site test-site

$(SITE_INSTALLED): site/requirements.txt
	test -x $(SITE_PY) || $(PYTHON) -m venv $(SITE_VENV)
	$(SITE_PY) -m pip install --quiet -r site/requirements.txt
	touch $@

site: $(SITE_INSTALLED)
	$(SITE_PY) site/build.py

# Every page of the freshly built site in headless Chromium (tests/site; Debian's chromium and
# Playwright, as for test-browser): math rendered, images loaded, no test machinery in view,
# internal links resolve. Screenshots of every page land in test-artifacts/site/.
test-site: site
	test -x /usr/bin/chromium || { apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y chromium; }
	$(SITE_PY) -m pip install --quiet -r tests/site/requirements.txt
	$(SITE_PY) -m pytest -v --durations=5 tests/site

# Re-execute the notebooks in place so the stored outputs match the code (maintainers).
notebooks: $(INSTALLED)
	$(PY) tools/execute_notebooks.py notebooks/*.ipynb notebooks/solutions/*.ipynb

# Timings, not tests (never part of `make test` or CI): every slider's redraw in the kernel
# (target: median 30 ms), every slider's key-to-paint time in JupyterLab in headless Chromium
# (median 50 ms, max 100 ms, with where the time goes; `benchmarks/browser_redraw.py --cold`
# times it without drawing ahead), then each experiment of notebooks 07 and
# 08 and their solutions (budgets: 3 and 2 minutes). `make benchmark BENCHMARK_FLAGS=--check`
# fails when a target is missed. `$(PY) benchmarks/experiments.py --course` times the course.
BENCHMARK_FLAGS ?=
benchmark: browser-tools
	missed=0; \
	$(PY) benchmarks/redraw.py $(BENCHMARK_FLAGS) || missed=1; \
	$(PY) benchmarks/browser_redraw.py $(BENCHMARK_FLAGS) || missed=1; \
	$(PY) benchmarks/experiments.py $(BENCHMARK_FLAGS) || missed=1; \
	exit $$missed

clean:
	rm -rf $(VENV) *.egg-info .hypothesis test-artifacts
