# The two commands of the README, `make lab` and `make test`, each do their own setup:
# a .venv with pinned Python dependencies, the Rust build, the extension, the CLI in .venv/bin.

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
CARGO ?= cargo
SCALE ?= 1

# Spark (the Spark data source tests, the engine study) runs on Java 17 (Spark 4.1 does not
# start on 25): an installed 17 first, else the `java` on PATH.
JAVA_HOME ?= $(firstword $(wildcard /usr/lib/jvm/java-17-openjdk-*) $(wildcard /usr/lib/jvm/temurin-17-*) \
	$(patsubst %/bin/java,%,$(realpath $(shell command -v java 2>/dev/null))))
export JAVA_HOME

.PHONY: all build lab test rust-test python-test java-check clean

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

java-check:
	@test -n "$(JAVA_HOME)" && test -x "$(JAVA_HOME)/bin/java" || \
		echo "note: no Java found (install OpenJDK 17 or set JAVA_HOME): the Spark tests and Spark engines are skipped"

python-test: build java-check
	$(PY) -m pytest python/tests -q

test: rust-test python-test

clean:
	rm -rf target $(VENV) report
