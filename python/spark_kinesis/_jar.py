"""Where the bundled connector jar is, and which versions it was built for."""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Dict

__all__ = ["__version__", "jar_path", "built_for"]


def _read_version() -> str:
    return resources.files("spark_kinesis").joinpath("VERSION").read_text(encoding="utf-8").strip()


__version__: str = _read_version()


def jar_path() -> str:
    """Return the absolute path of the connector jar bundled in this package.

    Use it with ``spark-submit --jars``, or let :func:`configure_spark_with_kinesis` add it for you.

    >>> from spark_kinesis import jar_path
    >>> jar_path().endswith(".jar")
    True
    """
    jars = resources.files("spark_kinesis").joinpath("jars")
    name = f"spark-kinesis_2.13-{__version__}.jar"
    candidate = jars.joinpath(name)
    if not candidate.is_file():
        found = sorted(p.name for p in jars.iterdir()) if jars.is_dir() else []
        raise FileNotFoundError(
            f"The spark-kinesis jar {name} is not in the installed package (found: {found or 'nothing'}). "
            "Reinstall the wheel; a source checkout needs `make wheel` first."
        )
    return str(Path(str(candidate)).resolve())


def built_for() -> Dict[str, str]:
    """The versions the bundled jar records: ``version``, ``sparkVersion``, ``scalaVersion``."""
    import zipfile

    with zipfile.ZipFile(jar_path()) as jar:
        text = jar.read("spark-kinesis-version.properties").decode("utf-8")
    pairs = (line.partition("=") for line in text.splitlines() if "=" in line)
    return {key: value for key, _, value in pairs}


def check_versions(pyspark_version: str) -> None:
    """Fail with what to install when the jar is not this package's or not built for the running PySpark."""
    from spark_kinesis.errors import KinesisVersionError

    info = built_for()
    if info.get("version") != __version__:
        raise KinesisVersionError(
            f"[KINESIS_VERSION_MISMATCH] The bundled jar is version {info.get('version')} but the package is {__version__}: "
            "reinstall spark-kinesis.", "KINESIS_VERSION_MISMATCH")
    spark = info.get("sparkVersion", "")
    if pyspark_version.split(".")[:2] != spark.split(".")[:2]:
        raise KinesisVersionError(
            f"[KINESIS_VERSION_MISMATCH] spark-kinesis {__version__} is built for Spark {spark}, but PySpark {pyspark_version} is installed: "
            f"install pyspark=={spark} (pip install 'pyspark~={'.'.join(spark.split('.')[:2])}.0'), or a "
            "spark-kinesis built for your Spark.", "KINESIS_VERSION_MISMATCH")
