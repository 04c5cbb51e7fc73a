"""`bin/publish-local` writes a Maven-layout repository that `spark-submit --packages` resolves the connector from.

The script publishes every artifact's assembly jar into a temporary repository; spark-submit of the running
PySpark then resolves the artifact for its Spark (io.sparkkinesis:spark-kinesis-4.x_2.13:VERSION on Spark 4,
spark-kinesis-3.5_2.12 on PyPI's Spark 3.5) with `--packages` and `--repositories file://...` (the command in
docs/deploying.md) and runs a tiny app that batch-reads a local stream through `format("kinesis")` and through
`read_kinesis` in SQL, which the package brings without any setting. The
compatibility runs (`make test-compat`) run it under each supported PySpark line.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from conftest import connector_options
from harness import streams
from spark_kinesis._jar import find_jar

ROOT = Path(__file__).resolve().parents[1]
VERSION = (ROOT / "VERSION").read_text(encoding="utf-8").strip()
ARTIFACTS = ("spark-kinesis-4.x_2.13", "spark-kinesis-3.5_2.12", "spark-kinesis-3.5_2.13")
ARTIFACT = find_jar().artifact  # the one for the PySpark this test runs under
COORDINATE = f"io.sparkkinesis:{ARTIFACT}:{VERSION}"
JAR = ROOT / "jvm" / "target" / "assembly" / f"{ARTIFACT}-{VERSION}.jar"
POM_NS = "{http://maven.apache.org/POM/4.0.0}"

APP = '''
import sys
from pyspark.sql import SparkSession

spark = SparkSession.builder.appName("publish-local-check").getOrCreate()
options = dict(arg.split("=", 1) for arg in sys.argv[1:])
print(f"COUNT={spark.read.format('kinesis').options(**options).load().count()}")
# The SQL function with nothing but the resolved package: the jar brings its session extensions (no settings).
# (Not on PySpark 3.5, whose classic sessions load no extensions from jars: docs/sql.md.)
if not spark.version.startswith("3."):
    arguments = ", ".join(f"{k} => '{v}'" for k, v in options.items())
    print(f"SQL_COUNT={spark.sql(f'SELECT count(*) FROM read_kinesis({arguments})').head()[0]}")
spark.stop()
'''

# Spark's default resolvers also ask Maven Central and spark-packages for the coordinate; this settings file
# replaces them by an empty folder so that only the repository given with --repositories can answer.
IVY_SETTINGS = '''<ivysettings>
  <settings defaultResolver="nothing"/>
  <resolvers>
    <filesystem name="nothing" m2compatible="true">
      <ivy pattern="${ivy.settings.dir}/empty/[organisation]/[module]/[revision]/[artifact]-[revision].pom"/>
      <artifact pattern="${ivy.settings.dir}/empty/[organisation]/[module]/[revision]/[artifact]-[revision].[ext]"/>
    </filesystem>
  </resolvers>
</ivysettings>
'''


@pytest.mark.compat
@pytest.mark.heavy
def test_packages_resolves_the_published_jar(kinesalite_server, stream_name, tmp_path):
    assert JAR.is_file(), f"{JAR} is missing: the jar is built by `make test` (or `make jar`) before pytest runs"
    repo = tmp_path / "maven-repo"
    published = subprocess.run([sys.executable, str(ROOT / "bin" / "publish-local"), str(repo)],
                               capture_output=True, text=True, timeout=120)
    assert published.returncode == 0, published.stderr
    for name in ARTIFACTS:
        coordinate = f"io.sparkkinesis:{name}:{VERSION}"
        assert f"--packages {coordinate} --repositories {repo.resolve().as_uri()}" in published.stdout
        folder = repo / "io" / "sparkkinesis" / name / VERSION
        jar = folder / f"{name}-{VERSION}.jar"
        pom = folder / f"{name}-{VERSION}.pom"
        assert jar.read_bytes() == (ROOT / "jvm" / "target" / "assembly" / f"{name}-{VERSION}.jar").read_bytes()
        for artifact in (jar, pom, repo / "io" / "sparkkinesis" / name / "maven-metadata.xml"):
            for algorithm in ("md5", "sha1", "sha256", "sha512"):
                checksum = Path(f"{artifact}.{algorithm}").read_text(encoding="ascii")
                assert checksum == hashlib.new(algorithm, artifact.read_bytes()).hexdigest(), (artifact, algorithm)
        project = ET.parse(pom).getroot()
        assert [project.find(POM_NS + t).text for t in ("groupId", "artifactId", "version", "packaging")] == \
            ["io.sparkkinesis", name, VERSION, "jar"]
        scopes = {d.find(POM_NS + "artifactId").text: d.find(POM_NS + "scope").text
                  for d in project.iter(POM_NS + "dependency")}
        assert set(scopes.values()) == {"provided"}, f"everything else is shaded inside the jar: {scopes}"

    kinesis = streams.client(kinesalite_server)
    streams.create_stream(kinesis, stream_name, 2)
    streams.put_records(kinesis, stream_name, [(f"record-{i}", f"key-{i}") for i in range(23)])
    (tmp_path / "app.py").write_text(APP, encoding="utf-8")
    (tmp_path / "ivysettings.xml").write_text(IVY_SETTINGS, encoding="utf-8")
    (tmp_path / "empty").mkdir()
    bin_dir = Path(sys.executable).parent  # the venv's spark-submit finds its Spark through this python
    env = dict(os.environ, PATH=f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")
    options = dict(connector_options(kinesalite_server), streamName=stream_name)
    submit = subprocess.run(
        [str(bin_dir / "spark-submit"), "--master", "local[1]", "--conf", "spark.ui.enabled=false",
         "--conf", f"spark.jars.ivySettings={tmp_path / 'ivysettings.xml'}",
         "--packages", COORDINATE, "--repositories", repo.resolve().as_uri(),
         "--conf", f"spark.jars.ivy={tmp_path / 'ivy'}",
         str(tmp_path / "app.py"), *(f"{k}={v}" for k, v in options.items())],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=240)

    assert submit.returncode == 0, f"spark-submit failed:\n{submit.stdout}\n{submit.stderr[-4000:]}"
    assert f"found io.sparkkinesis#{ARTIFACT};{VERSION} in repo-1" in submit.stderr
    assert "COUNT=23" in submit.stdout.splitlines()
    if not ARTIFACT.startswith("spark-kinesis-3."):
        assert "SQL_COUNT=23" in submit.stdout.splitlines(), submit.stdout
    resolved = tmp_path / "ivy" / "jars" / f"io.sparkkinesis_{ARTIFACT}-{VERSION}.jar"
    assert resolved.read_bytes() == JAR.read_bytes()
