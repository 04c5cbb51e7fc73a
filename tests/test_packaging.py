"""The installed wheel: one jar per artifact of the cross-build, each relocating every bundled library,
registering the data source and compiled for the oldest Java its Spark line runs on."""

from __future__ import annotations

import struct
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import spark_kinesis
from spark_kinesis._jar import bundled_jars

ROOT = Path(__file__).resolve().parents[1]
PREFIX = "io/sparkkinesis/"
SHADED = PREFIX + "shaded/"
# Packages of the libraries the jar bundles; none may appear outside the relocation prefix.
BUNDLED = ("software/amazon/", "io/netty/", "com/fasterxml/jackson/", "org/reactivestreams/", "org/apache/hc/",
           "org/apache/http/")
# Libraries Spark provides; the jar must not carry them at all.
PROVIDED = ("scala/", "org/apache/spark/", "org/slf4j/", "org/apache/log4j/", "org/apache/logging/")
# The artifacts of the cross-build (docs/deploying.md) and the class-file major version each must carry: Java 17
# (61) for Spark 4; Java 11 (55) for Spark 3.5, whose images still run Java 11, except with Scala 2.12, which
# cannot write class files newer than Java 8's (52): those are compiled against Java 11's API (-release 11).
ARTIFACTS = {"spark-kinesis-4.x_2.13": 61, "spark-kinesis-3.5_2.12": 52, "spark-kinesis-3.5_2.13": 55}
JARS = [pytest.param(j.path, id=j.artifact) for j in bundled_jars()]


@pytest.mark.compat
def test_version_matches_the_repository():
    assert spark_kinesis.__version__ == (ROOT / "VERSION").read_text().strip()
    import pyspark

    # PyPI's PySpark 3.5 runs Scala 2.12; every 4.x runs 2.13.
    expected = "spark-kinesis-3.5_2.12" if pyspark.__version__.startswith("3.5.") else "spark-kinesis-4.x_2.13"
    assert Path(spark_kinesis.jar_path()).name == f"{expected}-{spark_kinesis.__version__}.jar"


def test_the_wheel_carries_every_artifact_of_the_cross_build():
    found = {j.artifact: j for j in bundled_jars()}
    assert sorted(found) == sorted(ARTIFACTS)
    for artifact, jar in found.items():
        assert Path(jar.path).name == f"{artifact}-{spark_kinesis.__version__}.jar"
        assert jar.properties["version"] == spark_kinesis.__version__
        assert artifact.endswith("_" + jar.scala)
    assert found["spark-kinesis-4.x_2.13"].spark_versions == ("4.0", "4.1", "4.2", "4.3")
    assert found["spark-kinesis-3.5_2.12"].spark_versions == ("3.5",)


@pytest.mark.parametrize("path", JARS)
def test_classes_target_the_oldest_java_of_their_spark_line(path):
    artifact = Path(path).name.rsplit("-", 1)[0]
    with zipfile.ZipFile(path) as jar:
        ours = [n for n in jar.namelist() if n.startswith(PREFIX) and not n.startswith(SHADED) and n.endswith(".class")]
        assert len(ours) > 100
        majors = {struct.unpack(">HH", jar.read(n)[4:8])[1] for n in ours}
    assert majors == {ARTIFACTS[artifact]}, f"{artifact}: class-file major versions {majors}"


def test_jar_comes_from_the_installed_package_not_the_checkout():
    jar = Path(spark_kinesis.jar_path())
    assert "site-packages" in jar.parts, jar


@pytest.mark.parametrize("path", JARS)
def test_every_bundled_class_is_relocated(path):
    with zipfile.ZipFile(path) as jar:
        names = jar.namelist()
    classes = [n for n in names if n.endswith(".class")]
    assert any(n.startswith(SHADED + "software/amazon/awssdk/services/kinesis/") for n in classes)
    assert any(n.startswith(SHADED + "io/netty/") for n in classes)
    assert any(n.startswith(SHADED + "org/reactivestreams/") for n in classes)
    outside = [n for n in classes if not n.startswith(PREFIX) and n not in ("module-info.class",)]
    assert outside == [], f"classes outside {PREFIX}: {outside[:10]}"
    leaked = [n for n in names if n.startswith(BUNDLED + PROVIDED)]
    assert leaked == [], f"unrelocated or provided entries: {leaked[:10]}"
    natives = [n for n in names if n.startswith("META-INF/native/") and not n.endswith("/")]
    assert all("io_sparkkinesis_shaded_" in n for n in natives), natives


@pytest.mark.parametrize("path", JARS)
def test_services_are_kept_and_point_at_relocated_classes(path):
    with zipfile.ZipFile(path) as jar:
        names = set(jar.namelist())
        register = jar.read("META-INF/services/org.apache.spark.sql.sources.DataSourceRegister").decode()
        # "kinesis", "aws-kinesis" for programs written for the awslabs connector (docs/migrating.md), and
        # "dynamodb-streams" (docs/dynamodb-streams.md).
        assert register.split() == ["io.sparkkinesis.KinesisSourceProvider",
                                    "io.sparkkinesis.AwsKinesisSourceProvider",
                                    "io.sparkkinesis.DynamoDbStreamsSourceProvider"]
        services = [n for n in names if n.startswith("META-INF/services/") and not n.endswith("/")]
        for service in services:
            for line in jar.read(service).decode().split():
                if not line.startswith("#"):
                    assert line.startswith("io.sparkkinesis."), f"{service}: {line}"
                    assert line.replace(".", "/") + ".class" in names, f"{service} names a missing class {line}"
    assert "META-INF/services/io.sparkkinesis.shaded.software.amazon.awssdk.http.async.SdkAsyncHttpService" in names
    # Spark (3.2+) loads the SQL extensions named here from a jar on the classpath (docs/sql.md).
    assert "META-INF/services/org.apache.spark.sql.SparkSessionExtensionsProvider" in services


def test_the_package_imports_from_a_source_checkout_without_generated_files(tmp_path):
    """`PYTHONPATH=python` in a checkout where neither `make wheel` nor `make demo` copied VERSION or the jars in:
    the import works and the version is the checkout's."""
    import shutil

    checkout = tmp_path / "checkout"
    shutil.copytree(ROOT / "python" / "spark_kinesis", checkout / "python" / "spark_kinesis",
                    ignore=shutil.ignore_patterns("VERSION", "jars", "__pycache__"))
    (checkout / "VERSION").write_text("9.8.7\n", encoding="utf-8")
    shown = subprocess.run([sys.executable, "-c", "import spark_kinesis; print(spark_kinesis.__version__)"],
                           cwd=tmp_path, env={"PYTHONPATH": str(checkout / "python"), "PATH": "/usr/bin:/bin"},
                           capture_output=True, text=True, timeout=120)
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.strip() == "9.8.7"


@pytest.mark.compat
def test_cli_prints_the_jar_path():
    out = subprocess.run([sys.executable, "-m", "spark_kinesis", "jar"], check=True, capture_output=True, text=True)
    assert out.stdout.strip() == spark_kinesis.jar_path()
    assert Path(out.stdout.strip()).is_file()


@pytest.mark.parametrize("spark, scala, artifact", [
    ("3.5", "2.12", "spark-kinesis-3.5_2.12"), ("3.5.6", None, "spark-kinesis-3.5_2.12"),
    ("3.5", "2.13", "spark-kinesis-3.5_2.13"), ("4.0.2", None, "spark-kinesis-4.x_2.13"),
    ("4.3", "2.13", "spark-kinesis-4.x_2.13")])
def test_cli_prints_the_jar_for_a_clusters_spark(spark, scala, artifact):
    command = [sys.executable, "-m", "spark_kinesis", "jar", "--spark", spark] + (["--scala", scala] if scala else [])
    out = subprocess.run(command, check=True, capture_output=True, text=True)
    assert Path(out.stdout.strip()).name == f"{artifact}-{spark_kinesis.__version__}.jar"


@pytest.mark.parametrize("spark, scala", [("3.4", "2.12"), ("4.0", "2.12"), ("4.4", None)])
def test_cli_names_what_to_install_when_no_jar_fits(spark, scala):
    command = [sys.executable, "-m", "spark_kinesis", "jar", "--spark", spark] + (["--scala", scala] if scala else [])
    out = subprocess.run(command, capture_output=True, text=True)
    assert out.returncode == 2 and out.stdout == ""
    assert "[KINESIS_VERSION_MISMATCH]" in out.stderr and f"no jar for Spark {spark}" in out.stderr
    assert "Spark 4.0-4.3 (Scala 2.13)" in out.stderr and "Spark 3.5 (Scala 2.12)" in out.stderr


@pytest.mark.parametrize("pyspark_version, scala_jar, artifact", [
    ("3.5.2", "scala-library-2.13.8.jar", "spark-kinesis-3.5_2.13"),
    ("3.5.2", "scala-library-2.12.18.jar", "spark-kinesis-3.5_2.12"),
    ("3.5.2", None, "spark-kinesis-3.5_2.12"),
    ("4.1.4", "scala-library-2.13.16.jar", "spark-kinesis-4.x_2.13")])
def test_the_jar_follows_the_scala_of_the_spark_pyspark_starts(monkeypatch, tmp_path, pyspark_version, scala_jar,
                                                                artifact):
    """A Spark distribution named by SPARK_HOME decides the Scala version (Spark 3.5 comes in 2.12 and 2.13)."""
    import pyspark

    (tmp_path / "jars").mkdir()
    if scala_jar:
        (tmp_path / "jars" / scala_jar).write_bytes(b"")
    monkeypatch.setenv("SPARK_HOME", str(tmp_path))
    monkeypatch.setattr(pyspark, "__version__", pyspark_version)
    assert Path(spark_kinesis.jar_path()).name == f"{artifact}-{spark_kinesis.__version__}.jar"
