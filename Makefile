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

.PHONY: lab test unit-test notebook-test notebooks clean

$(INSTALLED): requirements.txt pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e .
	touch $@

lab: $(INSTALLED)
	cd notebooks && ../$(VENV)/bin/jupyter lab $(LAB_FLAGS) 01_token_embeddings.ipynb

test: unit-test notebook-test

unit-test: $(INSTALLED)
	$(PY) -m pytest -n $(WORKERS) tests

# Every notebook, solutions included, executed in this environment; asserts inside them are the checks.
notebook-test: $(INSTALLED)
	$(PY) -m pytest -n $(WORKERS) --dist loadscope --nbval-lax --nbval-current-env -p no:python notebooks

# Re-execute the notebooks in place so the stored outputs match the code (maintainers).
notebooks: $(INSTALLED)
	$(PY) tools/execute_notebooks.py notebooks/*.ipynb notebooks/solutions/*.ipynb

clean:
	rm -rf $(VENV) *.egg-info .hypothesis test-artifacts
