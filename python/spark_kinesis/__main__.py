"""Command line: ``python -m spark_kinesis jar`` prints the path of the bundled jar for the installed PySpark
(for ``spark-submit --jars``); ``jar --spark 3.5 --scala 2.12`` the one for a cluster's Spark; ``jars`` lists them."""

from __future__ import annotations

import argparse
import sys
from typing import Optional, Sequence

from spark_kinesis._jar import __version__, bundled_jars, jar_path
from spark_kinesis.errors import KinesisVersionError


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m spark_kinesis", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    jar = sub.add_parser("jar", help="print the path of the bundled connector jar for a Spark and Scala version")
    jar.add_argument("--spark", help="the Spark version the job runs on, e.g. 3.5 or 4.0.1 (default: the installed PySpark's)")
    jar.add_argument("--scala", help="the Scala version of that Spark, e.g. 2.12 (default: that Spark line's usual one)")
    sub.add_parser("jars", help="list the bundled jars: artifact, Spark versions, Scala version, path")
    sub.add_parser("version", help="print the package version")
    args = parser.parse_args(argv)
    if args.command == "jar":
        try:
            print(jar_path(args.spark, args.scala))
        except KinesisVersionError as e:
            print(e, file=sys.stderr)
            return 2
    elif args.command == "jars":
        for j in bundled_jars():
            print(f"{j.artifact}\tSpark {','.join(j.spark_versions)}\tScala {j.scala}\t{j.path}")
    elif args.command == "version":
        print(__version__)
    return 0


if __name__ == "__main__":
    sys.exit(main())
