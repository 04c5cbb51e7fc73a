"""Command line: ``python -m spark_kinesis jar`` prints the bundled jar's path (for ``spark-submit --jars``)."""

from __future__ import annotations

import argparse
import sys
from typing import Optional, Sequence

from spark_kinesis._jar import __version__, jar_path


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m spark_kinesis", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("jar", help="print the path of the bundled connector jar")
    sub.add_parser("version", help="print the package version")
    args = parser.parse_args(argv)
    if args.command == "jar":
        print(jar_path())
    elif args.command == "version":
        print(__version__)
    return 0


if __name__ == "__main__":
    sys.exit(main())
