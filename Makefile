# spark-kinesis: every build, test and demo step. Needs only Java 17, Maven, Python 3 and Node/npm.
# `make demo` and `make test` work on a fresh clone; everything they need is installed under the project.

SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
VERSION := $(shell cat VERSION)
# The artifacts of the cross-build (build.sbt): Spark 4.x first (the default, which the whole suite runs on),
# then Spark 3.5 for Scala 2.12 and 2.13. The wheel carries all three jars.
ARTIFACTS := spark-kinesis-4.x_2.13 spark-kinesis-3.5_2.12 spark-kinesis-3.5_2.13
SBT_PROJECTS := connector connector35_212 connector35_213
JARS := $(foreach a,$(ARTIFACTS),jvm/target/assembly/$(a)-$(VERSION).jar)
JAR := $(firstword $(JARS))
# The PySpark versions `make test-compat` runs the compatibility tests (pytest -m compat) under, each in a
# virtual environment of its own: the newest 3.5 (Scala 2.12, as PyPI builds it), the oldest 4.x, and the newest
# 4.1 (the first line with real-time mode, whose reader interface has only the one-argument nextWithTimeout).
COMPAT_PYSPARK := 3.5.9 4.0.0 4.1.4
# The test files that hold compatibility tests (the others may import what only the default venv has).
COMPAT_TESTS = $(shell grep -l "mark.compat" tests/test_*.py)
WHEEL := dist/spark_kinesis-$(VERSION)-py3-none-any.whl
SPARK_JARS_DIR = $(shell $(PY) -c 'import os, pyspark; print(os.path.join(os.path.dirname(pyspark.__file__), "jars"))')
SBT = SPARK_JARS_DIR="$(SPARK_JARS_DIR)" bin/sbt
# Never let the AWS SDK or boto3 probe the EC2 metadata address from this project's tests and demo.
export AWS_EC2_METADATA_DISABLED := true
# Spark (driver, block manager, workers) listens on loopback only.
export SPARK_LOCAL_IP := 127.0.0.1

.PHONY: help venv jar wheel install-wheel servers test test-scala test-python test-compat compat-venvs fmt typecheck docs demo bench-venv bench-source bench-idle bench-efo bench-realtime bench-sink soak clean publish-local

help:
	@echo "make demo   - build, start a local Kinesis server, write and read records through the connector"
	@echo "make test   - build the jar and the wheel and run every Scala and Python test against local servers"
	@echo "make jar | wheel | servers | test-scala | test-python | test-compat | fmt | typecheck | docs | publish-local | clean"

venv: $(VENV)/.installed
$(VENV)/.installed: python/requirements-dev.txt
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet -r python/requirements-dev.txt
	touch $@

servers: tests/harness/node_modules/.package-lock.json
tests/harness/node_modules/.package-lock.json: tests/harness/package-lock.json
	$(PYTHON) tests/harness/local_kinesis.py install

# One sbt run builds every artifact's assembly jar; the other jars are made with the first.
jar: $(JARS)
$(JAR): $(VENV)/.installed VERSION build.sbt $(wildcard project/*.scala project/*.sbt project/build.properties) \
        $(shell find jvm/src/main -type f 2>/dev/null)
	$(SBT) $(foreach p,$(SBT_PROJECTS),$(p)/assembly)
$(filter-out $(JAR),$(JARS)): $(JAR)

wheel: $(WHEEL)
$(WHEEL): $(JARS) $(shell find python -name '*.py' -o -name '*.toml' -o -name py.typed 2>/dev/null)
	rm -rf python/spark_kinesis/jars python/build dist
	mkdir -p python/spark_kinesis/jars
	cp $(JARS) python/spark_kinesis/jars/
	cp VERSION python/spark_kinesis/VERSION
	$(PY) -m pip wheel --quiet --no-deps --no-build-isolation -w dist ./python
	rm -rf python/build

# The wheel goes into the project's virtual environment the way a user installs it.
install-wheel: $(WHEEL)
	$(PY) -m pip install --quiet --force-reinstall --no-deps $(WHEEL)

test-scala: venv servers
	$(SBT) $(foreach p,$(SBT_PROJECTS),$(p)/test)

test-python: install-wheel servers
	$(PY) -m pytest tests

# The compatibility tests (marked `compat`) under each supported PySpark line other than the default, through the
# same wheel, which picks the jar for that Spark (docs/deploying.md, "Compatibility").
compat-venvs: $(foreach v,$(COMPAT_PYSPARK),$(VENV)-pyspark-$(v)/.installed)
$(VENV)-pyspark-%/.installed: python/requirements-compat.txt
	$(PYTHON) -m venv $(VENV)-pyspark-$*
	$(VENV)-pyspark-$*/bin/python -m pip install --quiet -r python/requirements-compat.txt pyspark==$*
	touch $@

test-compat: $(WHEEL) servers compat-venvs
	set -e; for v in $(COMPAT_PYSPARK); do \
	  echo "== compatibility tests on PySpark $$v"; \
	  $(VENV)-pyspark-$$v/bin/python -m pip install --quiet --force-reinstall --no-deps $(WHEEL); \
	  $(VENV)-pyspark-$$v/bin/python -m pytest -m compat $(COMPAT_TESTS); \
	done

# Static types of the Python package and the examples: mypy in strict mode (config in python/pyproject.toml).
typecheck: venv
	$(PY) -m mypy --config-file python/pyproject.toml python/spark_kinesis examples

# The type check first (it takes seconds), then one sbt start for the format check, every artifact's assembly and
# the Scala suites of every artifact, then the Python suites through the installed wheel on the default PySpark,
# then the compatibility tests on the other PySpark lines. The format check fails the run on Scala code that
# `make fmt` would change.
test: venv servers typecheck
	$(SBT) $(foreach p,$(SBT_PROJECTS),$(p)/scalafmtCheckAll) $(foreach p,$(SBT_PROJECTS),$(p)/assembly) \
	  $(foreach p,$(SBT_PROJECTS),$(p)/test)
	$(MAKE) --no-print-directory test-python
	$(MAKE) --no-print-directory test-compat

# Formats the Scala sources as .scalafmt.conf says (what `make test` checks).
fmt: venv
	$(SBT) $(foreach p,$(SBT_PROJECTS),$(p)/scalafmtAll)

# Regenerates docs/options.md and the Python option constants and checks from the registry (a test fails when stale).
docs: venv
	$(SBT) "connector/runMain io.sparkkinesis.config.OptionsDoc docs/options.md python/spark_kinesis/options.py"

# Every artifact (io.sparkkinesis:spark-kinesis-<spark line>_<scala>:$(VERSION)) in a local Maven-layout repository,
# for `spark-submit --packages ... --repositories file://...` (default target/maven-repo; `make publish-local REPO=dir`).
publish-local: jar
	$(PYTHON) bin/publish-local $(REPO)

demo: install-wheel servers
	$(PY) examples/demo.py

# Benchmarks (not part of CI): results go to docs/performance.md by hand, plots to docs/img/.
bench-venv: $(VENV)/.bench
$(VENV)/.bench: bench/requirements.txt $(VENV)/.installed
	$(PY) -m pip install --quiet -r bench/requirements.txt
	touch $@

bench-source: install-wheel servers bench-venv
	$(PY) bench/source/run.py --plot

# An idle query on 100 shards for 10 minutes, then the first record after quiet spells (about 17 minutes).
bench-idle: install-wheel servers bench-venv
	$(PY) bench/source/idle.py --plot

bench-sink: install-wheel servers bench-venv
	$(PY) bench/sink/run.py

# Enhanced fan-out against polling on kinesis-mock, and the awslabs connector side by side when PEER_JAR names its
# jar (built from its source, docs/performance.md); about 3 minutes a connector.
bench-efo: install-wheel servers bench-venv
	$(PY) bench/efo/run.py --plot $(if $(PEER_JAR),--peer-jar $(PEER_JAR))

# Real-time mode (Spark 4.1+) against micro-batches, Kinesis to Kinesis on kinesalite: put-to-sink latency and
# records/s (docs/performance.md, "Real-time mode"); about 5 minutes.
bench-realtime: install-wheel servers bench-venv
	$(PY) bench/realtime/run.py --plot $(REALTIME_ARGS)

# Soak (not part of `make test` or CI): the exactly-once driver on a standalone cluster under 50 injected faults
# (driver and executor kills, throttling, expired iterators, resharding, server restarts), about 25 minutes; exits
# non-zero when a record is lost, duplicated or out of key order. SOAK_ARGS="--faults 8 --minutes 8" for a short run.
soak: install-wheel servers
	$(PY) tests/soak/soak.py $(SOAK_ARGS)

clean:
	rm -rf dist python/build python/spark_kinesis/jars python/spark_kinesis/VERSION jvm/target jvm/cross project/target \
	  target build
