"""Where the bundled connector jar is, and which versions it was built for."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

__all__ = ["__version__", "jar_path"]


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
