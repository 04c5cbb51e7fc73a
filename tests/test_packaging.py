"""The installed wheel: its jar relocates every bundled library and registers the data source."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import spark_kinesis

ROOT = Path(__file__).resolve().parents[1]
PREFIX = "io/sparkkinesis/"
SHADED = PREFIX + "shaded/"
# Packages of the libraries the jar bundles; none may appear outside the relocation prefix.
BUNDLED = ("software/amazon/", "io/netty/", "com/fasterxml/jackson/", "org/reactivestreams/", "org/apache/hc/",
           "org/apache/http/")
# Libraries Spark provides; the jar must not carry them at all.
PROVIDED = ("scala/", "org/apache/spark/", "org/slf4j/", "org/apache/log4j/", "org/apache/logging/")


def test_version_matches_the_repository():
    assert spark_kinesis.__version__ == (ROOT / "VERSION").read_text().strip()
    assert Path(spark_kinesis.jar_path()).name == f"spark-kinesis_2.13-{spark_kinesis.__version__}.jar"


def test_jar_comes_from_the_installed_package_not_the_checkout():
    jar = Path(spark_kinesis.jar_path())
    assert "site-packages" in jar.parts, jar


def test_every_bundled_class_is_relocated():
    with zipfile.ZipFile(spark_kinesis.jar_path()) as jar:
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


def test_services_are_kept_and_point_at_relocated_classes():
    with zipfile.ZipFile(spark_kinesis.jar_path()) as jar:
        names = set(jar.namelist())
        register = jar.read("META-INF/services/org.apache.spark.sql.sources.DataSourceRegister").decode()
        assert register.split() == ["io.sparkkinesis.KinesisSourceProvider"]
        services = [n for n in names if n.startswith("META-INF/services/") and not n.endswith("/")]
        for service in services:
            for line in jar.read(service).decode().split():
                if not line.startswith("#"):
                    assert line.startswith("io.sparkkinesis."), f"{service}: {line}"
                    assert line.replace(".", "/") + ".class" in names, f"{service} names a missing class {line}"
    assert "META-INF/services/io.sparkkinesis.shaded.software.amazon.awssdk.http.async.SdkAsyncHttpService" in names


def test_cli_prints_the_jar_path():
    out = subprocess.run([sys.executable, "-m", "spark_kinesis", "jar"], check=True, capture_output=True, text=True)
    assert out.stdout.strip() == spark_kinesis.jar_path()
    assert Path(out.stdout.strip()).is_file()
