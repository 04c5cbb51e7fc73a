"""The connector jars bundled in the package, and which one fits the running Spark.

The wheel carries one jar per artifact of the cross-build (``spark-kinesis-<spark line>_<scala>-<version>.jar``):
Spark 4.x with Scala 2.13, and Spark 3.5 with Scala 2.12 and 2.13. Each jar records what it was built for in
``spark-kinesis-version.properties``; :func:`jar_path` reads those records and picks the jar for a Spark and
Scala version, by default those of the installed PySpark.
"""

from __future__ import annotations

import os
import re
import zipfile
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Dict, Optional, Tuple

__all__ = ["__version__", "BundledJar", "bundled_jars", "jar_path", "built_for"]


def _read_version() -> str:
    """The package's version: the ``VERSION`` file the wheel carries; in a source checkout that has not built one
    (``PYTHONPATH=python``), the repository's own ``VERSION``; else what the installed distribution's metadata says.
    """
    bundled = resources.files("spark_kinesis").joinpath("VERSION")
    if bundled.is_file():
        return bundled.read_text(encoding="utf-8").strip()
    checkout = Path(__file__).resolve().parents[2] / "VERSION"
    if checkout.is_file():
        return checkout.read_text(encoding="utf-8").strip()
    from importlib import metadata

    try:
        return metadata.version("spark-kinesis")
    except metadata.PackageNotFoundError:
        return "0+unknown"


__version__: str = _read_version()

# The Scala version a Spark line's own distribution (and PyPI's PySpark) uses when none can be found on disk.
_DEFAULT_SCALA = {"3.5": "2.12"}
_DEFAULT_SCALA_4 = "2.13"


@dataclass(frozen=True)
class BundledJar:
    """One bundled connector jar and what it was built for."""

    path: str
    """Absolute path of the jar."""
    artifact: str
    """Maven artifact id, e.g. ``spark-kinesis-3.5_2.12``."""
    spark_versions: Tuple[str, ...]
    """The Spark minor versions it is tested on, e.g. ``("4.0", "4.1", "4.2", "4.3")``."""
    scala: str
    """The Scala binary version, e.g. ``2.13``."""
    properties: Dict[str, str]
    """Everything the jar records (``version``, ``sparkVersion``, ``scalaVersion``, ``javaRelease``, ...)."""

    def fits(self, spark: str, scala: str) -> bool:
        """Whether this jar serves Spark ``spark`` (any ``major.minor[.patch]``) with Scala ``scala``."""
        return _minor(spark) in self.spark_versions and _minor(scala) == self.scala


def _minor(version: str) -> str:
    return ".".join(version.split(".")[:2])


def _properties(jar: Path) -> Dict[str, str]:
    with zipfile.ZipFile(jar) as z:
        text = z.read("spark-kinesis-version.properties").decode("utf-8")
    pairs = (line.partition("=") for line in text.splitlines() if "=" in line)
    return {key.strip(): value.strip() for key, _, value in pairs}


@lru_cache(maxsize=1)
def bundled_jars() -> Tuple[BundledJar, ...]:
    """Every connector jar in the installed package, newest Spark line first."""
    folder = resources.files("spark_kinesis").joinpath("jars")
    found = []
    if folder.is_dir():
        for entry in folder.iterdir():
            if entry.name.startswith("spark-kinesis-") and entry.name.endswith(".jar"):
                path = Path(str(entry)).resolve()
                props = _properties(path)
                found.append(BundledJar(
                    path=str(path),
                    artifact=props.get("artifact", ""),
                    spark_versions=tuple(v for v in props.get("sparkVersions", "").split(",") if v),
                    scala=_minor(props.get("scalaVersion", "")),
                    properties=props,
                ))
    if not found:
        names = sorted(p.name for p in folder.iterdir()) if folder.is_dir() else []
        raise FileNotFoundError(
            f"No spark-kinesis {__version__} jar is in the installed package (found: {names or 'nothing'}). "
            "Reinstall the wheel; a source checkout needs `make wheel` first.")
    return tuple(sorted(found, key=lambda j: (j.spark_versions[-1:], j.scala), reverse=True))


def _supported() -> str:
    """The Spark and Scala versions the bundled jars serve, for messages: ``Spark 4.0-4.3 (Scala 2.13), ...``."""
    parts = []
    for jar in bundled_jars():
        versions = jar.spark_versions
        span = versions[0] if len(versions) == 1 else f"{versions[0]}-{versions[-1]}"
        parts.append(f"Spark {span} (Scala {jar.scala})")
    return ", ".join(parts)


def installed_spark() -> Tuple[str, str]:
    """The version of the installed PySpark and the Scala binary version of the Spark it runs.

    The Scala version is read from the ``scala-library`` jar of the Spark that PySpark starts (``$SPARK_HOME`` when
    set, else PySpark's own); without one, it is the Scala of that Spark line's own distribution (2.12 for 3.5,
    2.13 for 4.x).
    """
    import pyspark

    spark = pyspark.__version__
    home = os.environ.get("SPARK_HOME") or os.path.dirname(pyspark.__file__)
    scala = None
    jars = Path(home) / "jars"
    if jars.is_dir():
        for jar in jars.glob("scala-library-*.jar"):
            match = re.match(r"scala-library-(\d+\.\d+)\.", jar.name)
            if match:
                scala = match.group(1)
    if scala is None:
        scala = _DEFAULT_SCALA.get(_minor(spark), _DEFAULT_SCALA_4)
    return spark, scala


def find_jar(spark: Optional[str] = None, scala: Optional[str] = None) -> BundledJar:
    """The bundled jar for Spark ``spark`` and Scala ``scala`` (default: the installed PySpark's).

    :raises spark_kinesis.errors.KinesisVersionError: when no bundled jar fits, naming what to install.
    """
    from spark_kinesis.errors import KinesisVersionError

    if spark is None:
        spark, detected = installed_spark()
        scala = scala or detected
    elif scala is None:
        scala = _DEFAULT_SCALA.get(_minor(spark), _DEFAULT_SCALA_4)
    for jar in bundled_jars():
        if jar.fits(spark, scala):
            return jar
    raise KinesisVersionError(
        f"[KINESIS_VERSION_MISMATCH] spark-kinesis {__version__} has no jar for Spark {spark} with Scala {scala}. "
        f"It supports {_supported()}: install one of those (for example pip install 'pyspark>=3.5,<3.6' or "
        "'pyspark>=4.0,<4.4'), or use a spark-kinesis release built for your Spark.",
        "KINESIS_VERSION_MISMATCH")


def jar_path(spark: Optional[str] = None, scala: Optional[str] = None) -> str:
    """Return the absolute path of the bundled connector jar for a Spark and Scala version.

    Without arguments, the jar for the installed PySpark. Use it with ``spark-submit --jars``, or let
    :func:`configure_spark_with_kinesis` add it for you. For a cluster whose Spark differs from the local PySpark,
    name its versions (``python -m spark_kinesis jar --spark 3.5 --scala 2.12`` does the same on the command line).

    >>> from spark_kinesis import jar_path
    >>> jar_path().endswith(".jar")
    True
    >>> "spark-kinesis-3.5_2.12-" in jar_path(spark="3.5", scala="2.12")
    True

    :raises spark_kinesis.errors.KinesisVersionError: when no bundled jar serves that Spark and Scala version.
    """
    return find_jar(spark, scala).path


def built_for() -> Dict[str, str]:
    """What the jar for the installed PySpark records: ``version``, ``artifact``, ``sparkVersion``, ..."""
    return dict(find_jar().properties)


def check_versions(pyspark_version: str) -> None:
    """Fail with what to install when no bundled jar serves the running PySpark, or the jars are not this
    package's version."""
    from spark_kinesis.errors import KinesisVersionError

    jar = find_jar(pyspark_version, installed_spark()[1])
    if jar.properties.get("version") != __version__:
        raise KinesisVersionError(
            f"[KINESIS_VERSION_MISMATCH] The bundled jar is version {jar.properties.get('version')} but the package "
            f"is {__version__}: reinstall spark-kinesis.", "KINESIS_VERSION_MISMATCH")
