"""README's quick start works as written, from a clean clone, as a new user runs it: the README's install lines
(`make wheel`, then its pip line into a fresh virtual environment), its five lines, and its SQL quick start
(`<!-- quickstart-sql -->`) in the same environment.

The test lays out the working tree as a fresh clone has it (nothing built, no virtual environment) and runs the
install block (`<!-- quickstart-install -->`) there with an empty HOME: `make wheel` with the project's own
virtual environment as the Makefile makes it, then the pip line into a new venv that has never seen the project.
Only the three connector jars are taken from this run's build (the README's path allows it: `make wheel` finds
them up to date and builds no jar). Then the environment variables that point the AWS SDK at a local server
(`<!-- quickstart-env -->`, with the endpoint of this session's kinesis-mock) and the Python lines
(`<!-- quickstart -->`) run unchanged: records written with boto3 to the stream and region the lines name must be
the rows the lines print.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

import boto3
import pytest
from botocore.config import Config

from conftest import pyspark_line
from harness import streams

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
STEP_TIMEOUT_S = 300


def readme_block(marker: str, text: str = "") -> str:
    """The fenced code block that follows `<!-- marker -->` in README.md."""
    text = text or README.read_text(encoding="utf-8")
    match = re.search(rf"<!-- {re.escape(marker)} -->\s*\n```[a-z]*\n(.*?)\n```", text, re.DOTALL)
    assert match, f"README.md has no code block after <!-- {marker} -->"
    return match.group(1)


def _running_pyspark() -> str:
    """The PySpark this test runs under: the project's pin, or a compatibility run's line (`make test-compat`)."""
    import pyspark

    return f"pyspark=={pyspark.__version__}"


def _clean_env(venv: Path) -> dict:
    """The environment of a user's shell with the new venv activated: nothing of the project, no AWS settings."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("AWS_", "PYSPARK_", "SPARK_HOME", "PYTHON", "VIRTUAL_ENV"))}
    env.update(PATH=f"{venv / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}", VIRTUAL_ENV=str(venv),
               AWS_EC2_METADATA_DISABLED="true", SPARK_LOCAL_IP="127.0.0.1",
               PYSPARK_SUBMIT_ARGS="--conf spark.ui.enabled=false pyspark-shell")
    return env


def _run(args, **kwargs) -> subprocess.CompletedProcess:
    result = subprocess.run(args, capture_output=True, text=True, timeout=STEP_TIMEOUT_S, **kwargs)
    assert result.returncode == 0, f"{args} failed ({result.returncode}):\n{result.stdout}\n{result.stderr[-4000:]}"
    return result


def _clean_clone(target: Path) -> Path:
    """The working tree as a fresh clone has it: a git clone of its commit with the tree's own changes laid over it
    (edited and new files that git does not ignore, deleted ones gone), and nothing the build or a run wrote."""
    _run(["git", "clone", "--quiet", str(ROOT), str(target)])
    changed = subprocess.run(["git", "ls-files", "-z", "--modified", "--deleted", "--others", "--exclude-standard"],
                             cwd=ROOT, capture_output=True, check=True).stdout.split(b"\0")
    for name in {os.fsdecode(n) for n in changed if n}:
        source, copy = ROOT / name, target / name
        if source.is_file():
            copy.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, copy)
        elif copy.exists():
            copy.unlink()
    return target


def _seed_jars(clone: Path) -> dict:
    """This run's three connector jars, in the clone where `make wheel` puts them, newer than every source file, so
    that make finds them up to date; their modification times, to check that nothing rebuilt them."""
    version = (ROOT / "VERSION").read_text(encoding="utf-8").strip()
    built = sorted(p for p in (ROOT / "jvm" / "target" / "assembly").glob(f"spark-kinesis-*-{version}.jar"))
    assert len(built) == 3, f"the build made no three connector jars: {built}"
    past = time.time() - 120
    for folder, _, files in os.walk(clone):
        if ".git" not in Path(folder).parts:
            for name in files:
                os.utime(Path(folder) / name, (past, past))
    assembly = clone / "jvm" / "target" / "assembly"
    assembly.mkdir(parents=True)
    now = time.time()
    for jar in built:
        shutil.copyfile(jar, assembly / jar.name)
        os.utime(assembly / jar.name, (now, now))  # one time for all: the 3.5 jars' rule has the 4.x jar as an input
    return {jar.name: (assembly / jar.name).stat().st_mtime_ns for jar in built}


def _user_env(home: Path) -> dict:
    """A new user's shell: an empty HOME, nothing of this project's environment. pip keeps this machine's download
    cache (PySpark is hundreds of megabytes; where pip takes a file from is not what the README's lines test)."""
    cache = os.environ.get("PIP_CACHE_DIR") or subprocess.run(
        [sys.executable, "-m", "pip", "cache", "dir"], capture_output=True, text=True).stdout.strip()
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("AWS_", "PYSPARK_", "SPARK_", "PYTHON", "VIRTUAL_ENV", "PIP_", "MAKE", "JAVA_TOOL",
                                "SOURCE_DATE_EPOCH"))}
    env.update(HOME=str(home), AWS_EC2_METADATA_DISABLED="true", SPARK_LOCAL_IP="127.0.0.1")
    if cache:
        env["PIP_CACHE_DIR"] = cache
    return env


def _shown_rows(stdout: str) -> list:
    """The rows of a DataFrame.show() table, as tuples of cell texts (the header excluded)."""
    lines = [line for line in stdout.splitlines() if line.startswith("|") and line.endswith("|")]
    assert lines, f"no table in the output:\n{stdout}"
    return [tuple(cell.strip() for cell in line[1:-1].split("|")) for line in lines[1:]]


def _recreate(kinesis, stream: str, shards: int) -> None:
    """A fresh stream of that name (a rerun in the same server session finds the old one)."""
    streams.delete_stream(kinesis, stream, missing_ok=True)
    streams.create_stream(kinesis, stream, shards)


@pytest.mark.compat
@pytest.mark.heavy
@pytest.mark.skipif(pyspark_line() < (4, 0) and not os.environ.get("SPARK_KINESIS_ALL_SUITES"),
                    reason="on PySpark 3.5 `make test-full` runs it (the README's lines are the same; the 3.5 jar's "
                           "reads and writes are the other compat tests')")
def test_readme_quick_start_from_a_clean_clone(kinesis_mock_server, tmp_path):
    readme = README.read_text(encoding="utf-8")
    install = [line.split("#")[0].strip() for line in readme_block("quickstart-install", readme).splitlines()]
    assert install[0] == "make wheel", install
    pip_lines = [line for line in install if line.startswith("pip install")]
    assert len(pip_lines) == 1 and len(install) == 2, install
    exports = shlex.split(readme_block("quickstart-env", readme).strip())
    assert exports[0] == "export", exports
    sdk_env = dict(pair.split("=", 1) for pair in exports[1:])
    assert "AWS_ENDPOINT_URL_KINESIS" in sdk_env
    sdk_env["AWS_ENDPOINT_URL_KINESIS"] = kinesis_mock_server.endpoint
    code = readme_block("quickstart", readme)
    assert len([line for line in code.splitlines() if line.strip()]) == 5, "the quick start promises five lines"
    stream = re.search(r'read_kinesis\(spark, "([^"]+)"', code).group(1)
    region = re.search(r'region="([^"]+)"', code).group(1)

    kinesis = boto3.client("kinesis", endpoint_url=kinesis_mock_server.endpoint, region_name=region,
                           aws_access_key_id="x", aws_secret_access_key="x", config=Config(retries={"max_attempts": 3}))
    _recreate(kinesis, stream, 2)
    written = {(f'{{"order": {i}, "amount": {i * 7 % 23}}}', f"customer-{i % 3}") for i in range(8)}
    streams.put_records(kinesis, stream, sorted(written))

    # The README's first install line, in a clean clone, by a user with an empty HOME: the wheel is built with the
    # project's virtual environment as `make wheel` makes it there (it once had a setuptools too old for the
    # wheel's metadata, which only the test tools' environment had new enough).
    clone = _clean_clone(tmp_path / "clone")
    jars = _seed_jars(clone)
    home = tmp_path / "home"
    home.mkdir()
    user = _user_env(home)
    made = _run(["bash", "-c", install[0]], cwd=clone, env=user)
    wheels = list((clone / "dist").glob("spark_kinesis-*.whl"))
    assert len(wheels) == 1, f"make wheel made {wheels}:\n{made.stdout[-3000:]}"
    assembly = clone / "jvm" / "target" / "assembly"
    assert {name: (assembly / name).stat().st_mtime_ns for name in jars} == jars, "make wheel rebuilt the jars"

    venv = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", str(venv)], env=user)
    python = str(venv / "bin" / "python")
    env = dict(_clean_env(venv), HOME=str(home), **{k: v for k, v in user.items() if k == "PIP_CACHE_DIR"})
    # PySpark first, the version this test runs under, so pip takes it from its cache (without compiling its
    # thousands of modules to bytecode: CPU the test does not need); then the README's line, as a user runs it.
    _run([python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--no-compile",
          _running_pyspark()], env=env)
    _run(["bash", "-c", pip_lines[0]], cwd=clone, env=env)
    where = _run([python, "-c", "import spark_kinesis; print(spark_kinesis.__file__)"], cwd=tmp_path, env=env)
    assert where.stdout.strip().startswith(str(venv)), where.stdout

    script = tmp_path / "quickstart.py"
    script.write_text(code + "\n", encoding="utf-8")
    result = _run([python, str(script)], cwd=tmp_path, env=dict(env, **sdk_env))

    assert _shown_rows(result.stdout) and set(_shown_rows(result.stdout)) == written
    assert len(_shown_rows(result.stdout)) == len(written)
    # The SQL quick start, in the same venv: the catalog lists the stream and reads the same rows.
    sql_code = readme_block("quickstart-sql", readme)
    assert "catalog=\"kinesis\"" in sql_code and f'region="{region}"' in sql_code
    sql_script = tmp_path / "quickstart_sql.py"
    sql_script.write_text(sql_code + "\n", encoding="utf-8")
    sql_result = _run([python, str(sql_script)], cwd=tmp_path, env=dict(env, **sdk_env))
    # Two tables printed one after the other: SHOW TABLES' (three columns) and the rows' (two), headers left out.
    shown = _shown_rows(sql_result.stdout)
    assert ("", stream, "false") in [row for row in shown if len(row) == 3], sql_result.stdout
    assert {row for row in shown if len(row) == 2 and row != ("data", "partitionKey")} == written
    version = _run([python, "-c", "import pyspark; print(pyspark.__version__)"], cwd=tmp_path, env=env)
    assert f"pyspark=={version.stdout.strip()}" == _running_pyspark(), "the README's line kept that PySpark"
