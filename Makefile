# Two commands do everything on a fresh machine with only Python 3.10+:
#   make train   # set up .venv, then train the fast Graphormer + SepNorm on ZINC-subset, print test MAE
#   make test    # set up .venv, then the fast tests (minutes; no raw data needed)
#   make test-all  # every test: real data, processes, tutorials (what CI runs)
#   make docs    # the documentation site, offline and strict, into site/ (open site/index.html)
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.graphnorm-installed
# Offline raw data when GRAPHNORM_RAW_DIR is set; otherwise the official download.
# a wall-time budget for the whole run (data set-up included); e.g. make train TIME=25m
TIME   ?= 2m30s
NORM   ?= sep:bn+bn
# a new directory per run: `graphnorm train` refuses to overwrite a trained run (--resume continues one)
OUT    ?= runs/zinc-subset-$(subst :,-,$(subst +,-,$(NORM)))-$(shell date +%Y%m%d-%H%M%S)

.PHONY: setup train test test-all docs bench clean

setup: $(STAMP)

$(STAMP): pyproject.toml constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	# the CPU torch first: a later `torch>=2.2` requirement is then already satisfied,
	# so no package pulls a multi-GB CUDA build
	$(BIN)/pip install --quiet -c constraints.txt torch==2.13.0
	# every other package at the version CI tested (constraints.txt; README: upgrading)
	$(BIN)/pip install --quiet -c constraints.txt -e ".[test]"
	touch $(STAMP)

train: setup
	$(BIN)/graphnorm train --config experiments/configs/zinc_subset_fast.yaml \
		--norm $(NORM) --max-time $(TIME) --seed 0 --out $(OUT)

# the fast tier: unit tests and end-to-end ones on a committed table (tests/conftest.py: the rule)
test: setup
	$(BIN)/python -m pytest -q -m "not slow"

# everything, slow tier included (raw data from GRAPHNORM_RAW_DIR or ../shared/datasets)
test-all: setup
	$(BIN)/python -m pytest -q

# the docs extra (pinned by constraints.txt, like everything else) only when it is missing
docs: setup
	$(BIN)/python -c "import mkdocs, material, mkdocstrings_handlers.python" 2>/dev/null || \
		$(BIN)/pip install --quiet -c constraints.txt -e ".[docs]"
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --site-dir site

bench: setup
	$(BIN)/python experiments/bench_featurize.py
	$(BIN)/python experiments/bench_throughput.py

clean:
	rm -rf $(VENV) data/cache site
