# The two commands of the README, `make lab` and `make test`, each do their own setup:
# a .venv with pinned Python dependencies, the Rust build, the extension, the CLI in .venv/bin.

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
CARGO ?= cargo
SCALE ?= 1

.PHONY: all build lab test rust-test python-test clean

all: build

$(VENV)/.deps: requirements.txt
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements.txt
	touch $@

# The CLI goes to .venv/bin/shapeshift; the extension is installed into the venv by maturin.
build: $(VENV)/.deps
	$(CARGO) build --release --locked -p shapeshift-cli
	install -m 755 target/release/shapeshift $(VENV)/bin/shapeshift
	VIRTUAL_ENV=$(abspath $(VENV)) PATH=$(abspath $(VENV))/bin:$$PATH \
		$(VENV)/bin/maturin develop --release --locked --manifest-path python/Cargo.toml --quiet
	$(PY) -c "import shapeshift"

lab: build
	$(PY) -m shapeshift.lab --out report --scale $(SCALE)

# Tests run in release mode so they reuse the build's compiled dependencies.
rust-test: build
	$(CARGO) test --release --locked --workspace --exclude shapeshift-python

python-test: build
	$(PY) -m pytest python/tests -q

test: rust-test python-test

clean:
	rm -rf target $(VENV) report
