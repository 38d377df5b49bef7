# `make test` and `make demo` create .venv themselves on a fresh machine.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-$(shell cat pyproject.toml | cksum | cut -d' ' -f1)
LINTED := dmltile tests bench docs examples

.PHONY: test test-machines fuzz lint demo bench bench-sweep browser clean directml directml-live

$(STAMP): pyproject.toml hatch_build.py dmltile/execute/fast/c/kernel.c
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[dev,onnx]'
	rm -f $(VENV)/.installed-* && touch $(STAMP)

# One worker per core (pytest-xdist): each test makes its own files, and the growth tests time CPU, not the clock.
test: $(STAMP)
	$(BIN)/python -m pytest -q -n auto

# The tests whose verdicts could depend on the machine's figures (the copy planner's Traits), run as if
# on a one-core machine with a 2 MiB last-level cache (DMLTILE_MACHINE) and without the copy kernel.
MACHINE_TESTS := tests/execute/test_fast.py tests/execute/test_execution.py tests/execute/test_misuse_and_bounds.py
test-machines: $(STAMP)
	DMLTILE_MACHINE=cores=1,llc=2097152 $(BIN)/python -m pytest -q $(MACHINE_TESTS)
	DMLTILE_KERNEL=0 $(BIN)/python -m pytest -q $(MACHINE_TESTS)

# The CLI fuzz at full size: thousands of random and mutated documents through every command, where
# `make test` draws a few hundred.
fuzz: $(STAMP)
	DMLTILE_FUZZ_EXAMPLES=1000 $(BIN)/python -m pytest -q tests/cli/test_cli_fuzz.py

# The gate CI runs before the tests: lint, formatting and types, each at zero findings.
lint: $(STAMP)
	$(BIN)/ruff check $(LINTED)
	$(BIN)/ruff format --check $(LINTED)
	$(BIN)/mypy

# The HTML page and the playground in headless Chromium (Debian's chromium + chromium-driver, via apt
# when missing; selenium from PyPI); refreshes the README's screenshots in docs/.
browser: $(STAMP)
	command -v chromium >/dev/null && command -v chromedriver >/dev/null || \
	  { apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y chromium chromium-driver; }
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[dev,onnx,browser]'
	DMLTILE_SCREENSHOT_DIR=docs $(BIN)/python -m pytest -q tests/teach/test_browser.py tests/teach/test_browser_labels.py

demo: $(STAMP)
	$(BIN)/python examples/demo.py

bench: $(STAMP)
	$(BIN)/python bench/run.py

# 300 random shapes like real models' against onnxruntime and the write floor (bench/README.md).
SWEEP_SEED ?= 1
bench-sweep: $(STAMP)
	$(BIN)/python bench/run.py --sweep 300 --seed $(SWEEP_SEED)

clean:
	rm -rf $(VENV) build dist .pytest_cache .hypothesis

# The real DirectML.dll as oracle and backend (Wine + Mesa lavapipe on Linux): everything goes under
# $DMLTILE_DIRECTML_HOME (default ~/.cache/dmltile/directml); DIRECTML_VERSIONS="1.7.0 ..." (DirectML
# versions or package==version wheels from feature_levels/directml_versions.toml, or `all`) picks DLLs.
directml:
	bash dmltile/execute/directml/setup.sh $(DIRECTML_VERSIONS)

directml-live: $(STAMP)
	DMLTILE_DIRECTML_LIVE=1 $(BIN)/python -m pytest -q -m directml_live tests/directml
