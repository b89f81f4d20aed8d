# dpaudit developer tasks. Every target creates the local virtual environment (.venv) on demand,
# so a fresh machine needs only python3 and make.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
OUT    ?= out/reports
JOBS   ?= 2
SEED   ?= 0
# One BLAS thread per process: audits are vectorised in numpy and run one process per core;
# idle OpenBLAS workers busy-waiting between calls halve sampling speed on small machines.
export OPENBLAS_NUM_THREADS ?= 1

.PHONY: audit test reports utility campaign smt bench gate heldout-zoo check-html mutants clean library-audits docs

$(STAMP): pyproject.toml constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -c constraints.txt -e '.[test]'
	touch $(STAMP)

## Main job: audit every bundled published claim (quick budget) and write reports to $(OUT).
# dpaudit exits 1 when a claim is violated (so CI can gate on it); for these jobs that is a
# finding, not a failure: only usage errors (2), crashed audits (3) or interrupts fail the target.
audit: $(STAMP)
	$(BIN)/dpaudit audit-claims --all --budget quick --seed $(SEED) --jobs $(JOBS) --out $(OUT); \
	  status=$$?; [ $$status -le 1 ] && echo "Open $(OUT)/index.html for the verdicts."; [ $$status -le 1 ]

## The test suite (the command CI runs). Slow statistical campaigns are excluded (see `campaign`).
test: $(STAMP)
	$(BIN)/python -m pytest -n 2 -q

## Mutation testing of the lines a verdict rests on (scripts/mutants.py: Bonferroni split, interval
## levels, held-out split, replace-one doublings, accountant sensitivities, the verdict rule): each
## named mutant must be killed by the default suite without the golden test (~10 minutes; docs/testing.md).
mutants: $(STAMP)
	$(BIN)/python scripts/mutants.py --baseline

## Regenerate the committed reviewer reports (standard budget) in reports/.
reports: $(STAMP)
	$(BIN)/dpaudit audit-claims --all --budget standard --seed $(SEED) --jobs $(JOBS) --out reports; \
	  status=$$?; [ $$status -le 1 ]

## Other libraries' releases audited as claims (examples/libraries: OpenDP, jax-privacy, dpcrpy,
## opacus-dpcr, opacus, diffprivlib), reports in reports/libraries. Their heavy dependencies (jax,
## torch, opacus, ...: about 6 GB, CUDA wheels included) live in a separate venv, $(LIBVENV), created on demand with the
## `libraries` extra and constraints.txt's mpmath pin moved to 1.3.0 (torch's sympy 1.14 needs
## mpmath < 1.4; dp-accounting accepts either); diffprivlib 0.6.6 needs scikit-learn < 1.8, so it gets its own venv,
## $(DPLVENV), with the `diffprivlib` extra and constraints.txt's scikit-learn pin moved to 1.7.2.
## The two runs write one directory; `dpaudit report` then rebuilds its index from every saved
## audit. The library tests run in both venvs (-m libraries; a test skips where its library is
## missing).
LIBVENV ?= .venv-libraries
DPLVENV ?= .venv-diffprivlib
LIBRARY_CLAIMS := opendp/laplace-count opendp/gaussian-count jax_privacy/bandmf \
  jax_privacy/bandmf-cyclic dpcrpy/simplemech dpcrpy/twolevel dpcrpy/binmech dpcrpy/honaker \
  dpcrpy/bcrg dpcrpy/fda opacus_dpcr/full-batch opacus/averaging-denominator opacus/fixed-batches
LIBRARY_PLUGINS := --plugin examples/libraries/opendp_claims.py \
  --plugin examples/libraries/jax_privacy_claims.py --plugin examples/libraries/dpcrpy_claims.py \
  --plugin examples/libraries/opacus_dpcr_claims.py --plugin examples/libraries/opacus_claims.py
DIFFPRIVLIB_CLAIMS := diffprivlib/linear-regression diffprivlib/naive-bayes-classes
# pytest-xdist's --dist in pyproject's addopts is replaced (the library venvs run tests serially).
LIBRARY_PYTEST := -q -p no:xdist -o addopts="-ra --strict-markers" -m libraries tests/test_library_claims.py \
  tests/test_torch_source.py tests/test_poisson_gaussian.py tests/test_named_primitives.py
library-audits:
	[ -x $(LIBVENV)/bin/dpaudit ] || { $(PYTHON) -m venv $(LIBVENV) && \
	  sed 's/^mpmath==.*/mpmath==1.3.0/' constraints.txt > $(LIBVENV)/constraints.txt && \
	  $(LIBVENV)/bin/python -m pip install --quiet -c $(LIBVENV)/constraints.txt -e '.[test,libraries]'; }
	[ -x $(DPLVENV)/bin/dpaudit ] || { $(PYTHON) -m venv $(DPLVENV) && \
	  sed 's/^scikit-learn==.*/scikit-learn==1.7.2/' constraints.txt > $(DPLVENV)/constraints.txt && \
	  $(DPLVENV)/bin/python -m pip install --quiet -c $(DPLVENV)/constraints.txt -e '.[test,diffprivlib]'; }
	$(LIBVENV)/bin/dpaudit audit-claims $(LIBRARY_CLAIMS) --budget quick --seed $(SEED) \
	  $(LIBRARY_PLUGINS) --out reports/libraries; status=$$?; [ $$status -le 1 ]
	$(DPLVENV)/bin/dpaudit audit-claims $(DIFFPRIVLIB_CLAIMS) --budget quick --seed $(SEED) \
	  --plugin examples/libraries/diffprivlib_claims.py --out reports/libraries; \
	  status=$$?; [ $$status -le 1 ]
	$(LIBVENV)/bin/dpaudit report reports/libraries $(LIBRARY_PLUGINS) \
	  --plugin examples/libraries/diffprivlib_claims.py
	$(LIBVENV)/bin/python -m pytest $(LIBRARY_PYTEST)
	$(DPLVENV)/bin/python -m pytest $(LIBRARY_PYTEST) -k diffprivlib

## Regret experiments of JKT12 and ST13 next to the papers' numbers (~4-8 minutes), in reports/utility.
utility: $(STAMP)
	$(BIN)/python benchmarks/utility_report.py --seed $(SEED) --out reports/utility

## Long statistical campaigns (tightness at 10^7 samples, false-alarm rates, thorough audits).
campaign: $(STAMP)
	$(BIN)/python -m pytest -m slow -q

## The symbolic tier: every SMT lemma encoding (z3) with its expected verdict (each solver call
## bounded by a fixed amount of work; about 100 s on one core). `python benchmarks/smt_lemmas.py`
## prints the verdict table next to the sampled checks.
smt: $(STAMP)
	$(BIN)/python -m pytest -n $(JOBS) -q -m slow tests/test_smt_lemmas.py tests/test_smt_lemmas_pfcoco_afkt23.py

## Speed and tightness of the audit engine, then scale-out (peak memory per audit process, Dask
## LocalCluster vs in-process, learner throughput vs raw noise), DP-Sniper's suite, and the detection
## table of broken and correct literature mechanisms (benchmarks/bench_detection.py), in one run.
bench: $(STAMP)
	$(BIN)/python benchmarks/bench_audit.py
	$(BIN)/python benchmarks/bench_scaleout.py
	$(BIN)/python benchmarks/bench_dpsniper.py --samples 1000000
	$(BIN)/python benchmarks/bench_detection.py --samples 1000000

## The sequential CI gate on DP-Sniper's suite and the detection zoo at 10^5 runs per input (with
## sequential_audit next to it; about 2 minutes), then the fixed-budget audit on both at the same budget.
gate: $(STAMP)
	$(BIN)/python benchmarks/bench_gate.py --samples 100000 --seed $(SEED)
	$(BIN)/python benchmarks/bench_dpsniper.py --samples 100000 --seed $(SEED)
	$(BIN)/python benchmarks/bench_detection.py --samples 100000 --seed $(SEED)

## Both audit modes (fixed budget at 10^5 and 10^6 runs per input, the sequential gate at 10^5) on
## the held-out zoo of benchmarks/heldout_zoo.py: the table of docs/benchmarks.md, "A held-out zoo"
## (about 2 min on one core).
heldout-zoo: $(STAMP)
	$(BIN)/python benchmarks/heldout_zoo.py --samples 100000 1000000 --gate-samples 100000

## Screenshots of every page type (index, paper page, violated, holds, inconclusive) at 1400 and
## 800 px wide, in out/screenshots (needs Debian's chromium; audits at the quick budget first when
## $(OUT) has no index yet). Look at them: this is the reader's-eye check of the reports.
check-html: $(STAMP)
	[ -f $(OUT)/index.json ] || $(MAKE) audit
	bash scripts/check_html.sh --types $(OUT)

## The documentation site with the API reference generated from the docstrings (mkdocs.yml),
## built with warnings as errors into site/ (git-ignored). The `docs` extra (mkdocs,
## mkdocstrings) is installed into .venv on demand, pinned by constraints.txt.
DOCS_STAMP := $(VENV)/.docs-installed
$(DOCS_STAMP): $(STAMP)
	$(BIN)/python -m pip install --quiet -c constraints.txt -e '.[test,docs]'
	touch $(DOCS_STAMP)

docs: $(DOCS_STAMP)
	$(BIN)/mkdocs build --strict --site-dir site

clean:
	rm -rf $(VENV) out .pytest_cache .hypothesis site
