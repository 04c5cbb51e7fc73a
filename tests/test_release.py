"""What a release needs (docs/releasing.md), checked on what `make test` builds: the jars in jvm/target/assembly/
(with their -sources and -javadoc jars) and the wheel in dist/.

- LICENSE (Apache-2.0) in every jar's META-INF and in the wheel's dist-info; NOTICE likewise.
- NOTICE names every third-party component the jars bundle, found from the jars' own contents (the build's list,
  the Maven metadata and license files the bundled libraries brought, and the packages of the relocated classes),
  and every bundled license is one that Apache-2.0 can carry.
- bin/publish-local's repository meets Maven Central's requirements (bin/check-central), signatures included
  when it is signed with a throwaway key; the check fails on a POM without scm and on a changed file.
- The wheel passes `twine check --strict`, with classifiers PyPI accepts and under PyPI's per-file limit.
- actionlint passes on .github/workflows, which run what the docs say.
- bin/sbom's CycloneDX SBOMs list every bundled component, and come out the same twice.

Needs no Kinesis server and no Spark session; about half a minute.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
VERSION = (ROOT / "VERSION").read_text(encoding="utf-8").strip()
ASSEMBLY = ROOT / "jvm" / "target" / "assembly"
ARTIFACTS = ("spark-kinesis-4.x_2.13", "spark-kinesis-3.5_2.12", "spark-kinesis-3.5_2.13")
WHEEL = ROOT / "dist" / f"spark_kinesis-{VERSION}-py3-none-any.whl"
SHADED = "io/sparkkinesis/shaded/"
BUNDLED_LIST = "META-INF/spark-kinesis/bundled-components.tsv"
# Licenses a bundled component may have: permissive ones that an Apache-2.0 work may include (the ASF's
# "Category A"). Anything else, or a license the build could not identify (NOASSERTION), fails the test.
COMPATIBLE = {"Apache-2.0", "MIT", "MIT-0", "BSD-2-Clause", "BSD-3-Clause", "ISC", "0BSD", "CC0-1.0"}
PYPI_FILE_LIMIT = 100 * 1024 * 1024  # PyPI's default per-file upload limit (100 MiB)
POM_NS = "{http://maven.apache.org/POM/4.0.0}"
ACTIONLINT = ROOT / ".tools" / "actionlint-1.7.12" / "actionlint"
PYPROJECT = (ROOT / "python" / "pyproject.toml").read_text(encoding="utf-8")  # (no tomllib on Python 3.10)


def jar_path(artifact: str, suffix: str = "") -> Path:
    path = ASSEMBLY / f"{artifact}-{VERSION}{suffix}.jar"
    assert path.is_file(), f"{path} is missing: `make test` (or `make jar doc-jars`) builds it"
    return path


def run(*args, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([str(a) for a in args], capture_output=True, text=True, timeout=300, **kwargs)


# ---- license and notice ------------------------------------------------------------------------------------------

def test_the_license_is_apache_2_0():
    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert "Apache License" in text and "Version 2.0, January 2004" in text and "END OF TERMS AND CONDITIONS" in text
    assert re.search(r'^license = "Apache-2.0"$', PYPROJECT, re.MULTILINE)


@pytest.mark.parametrize("suffix", ["", "-sources", "-javadoc"])
@pytest.mark.parametrize("artifact", ARTIFACTS)
def test_every_jar_carries_the_license_and_the_notice(artifact, suffix):
    with zipfile.ZipFile(jar_path(artifact, suffix)) as jar:
        assert jar.read("META-INF/LICENSE") == (ROOT / "LICENSE").read_bytes()
        notice = jar.read("META-INF/NOTICE").decode("utf-8")
    assert notice.startswith("spark-kinesis\n")
    if suffix == "":  # the assembly's NOTICE is generated from what it bundles; the repository's must be that one
        assert notice == (ROOT / "NOTICE").read_text(encoding="utf-8"), \
            f"NOTICE differs from the one the build generated into {artifact}: run `make notice`"


def test_the_wheel_carries_the_license_and_the_notice():
    with zipfile.ZipFile(WHEEL) as wheel:
        info = f"spark_kinesis-{VERSION}.dist-info/"
        assert wheel.read(info + "licenses/LICENSE") == (ROOT / "LICENSE").read_bytes()
        assert wheel.read(info + "licenses/NOTICE") == (ROOT / "NOTICE").read_bytes()
        metadata = wheel.read(info + "METADATA").decode("utf-8")
    assert "License-Expression: Apache-2.0\n" in metadata
    assert "License-File: LICENSE\n" in metadata and "License-File: NOTICE\n" in metadata


def bundled_rows(jar: zipfile.ZipFile) -> list[list[str]]:
    return [line.split("\t") for line in jar.read(BUNDLED_LIST).decode("utf-8").splitlines()
            if line and not line.startswith("#")]


def components_in(path: Path) -> tuple[set[str], set[str], set[str]]:
    """What a jar bundles, found from its contents: `group:artifact version` strings (from the build's list and
    from every Maven pom.properties the bundled libraries brought), names of components known by a license file
    only (META-INF/third-party/<group>/<artifact>/<Name>-LICENSE), and the packages of the relocated classes."""
    coordinates, named, packages = set(), set(), set()
    with zipfile.ZipFile(path) as jar:
        for row in bundled_rows(jar):
            if row[0]:
                coordinates.add(f"{row[0]}:{row[1]} {row[2]}")
            else:
                named.add(row[1])
        for name in jar.namelist():
            maven = re.fullmatch(r"META-INF/maven/([^/]+)/([^/]+)/pom\.properties", name)
            if maven:
                props = dict(line.split("=", 1) for line in jar.read(name).decode("utf-8").splitlines()
                             if "=" in line and not line.startswith("#"))
                coordinates.add(f"{maven.group(1)}:{maven.group(2)} {props['version']}")
            third_party = re.fullmatch(r"META-INF/third-party/([^/]+)/([^/]+)/(.+)-LICENSE", name)
            if third_party and "ThirdParty" not in third_party.group(3):
                named.add(third_party.group(3))
            if name.startswith(SHADED) and name.endswith(".class"):
                packages.add(name[len(SHADED):].rsplit("/", 1)[0].replace("/", "."))
    return coordinates, named, packages


def missing_from_notice(notice: str, path: Path) -> list[str]:
    """The components the jar holds that the NOTICE does not name (empty when it names them all)."""
    coordinates, named, packages = components_in(path)
    listed = set(re.findall(r"^ {2}(\S+:\S+ \S+),", notice, re.MULTILINE))
    missing = sorted(c for c in coordinates if c not in listed)
    missing += sorted(n for n in named if not re.search(rf"^ {{2}}{re.escape(n)}, ", notice, re.MULTILINE))
    groups = {c.split(":")[0] for c in listed}
    missing += sorted(f"classes of package {p}" for p in packages
                      if not any(q == g or q.startswith(g + ".") for g in groups for q in (p, _group_of(p))))
    return missing


# Packages whose Maven group is not their own name: the Kotlin standard library (org.jetbrains.kotlin), Okio
# (com.squareup.okio) and JetBrains' annotations (org.jetbrains), which Wire brings (payload/protobuf).
PACKAGE_GROUPS = {"kotlin": "org.jetbrains.kotlin", "okio": "com.squareup.okio", "org.intellij": "org.jetbrains"}


def _group_of(package: str) -> str:
    for prefix, group in PACKAGE_GROUPS.items():
        if package == prefix or package.startswith(prefix + "."):
            return group + package[len(prefix):]
    return package


@pytest.mark.parametrize("artifact", ARTIFACTS)
def test_the_notice_names_every_component_the_jar_bundles(artifact):
    path = jar_path(artifact)
    coordinates, named, _ = components_in(path)
    assert len(coordinates) > 40 and {"FastDoubleParser", "Schubfach"} <= named  # what 0.1.0 bundles, at least
    missing = missing_from_notice((ROOT / "NOTICE").read_text(encoding="utf-8"), path)
    assert missing == [], f"NOTICE does not name what {artifact} bundles (run `make notice`): {missing}"


def test_the_notice_check_fails_when_a_component_is_left_out():
    notice = (ROOT / "NOTICE").read_text(encoding="utf-8")
    path = jar_path(ARTIFACTS[0])
    for line in ("  org.reactivestreams:reactive-streams ", "  Schubfach, "):
        cut = "".join(l for l in notice.splitlines(keepends=True) if not l.startswith(line))
        assert cut != notice and missing_from_notice(cut, path) != [], line


@pytest.mark.parametrize("artifact", ARTIFACTS)
def test_every_bundled_license_is_compatible_with_apache_2_0(artifact):
    with zipfile.ZipFile(jar_path(artifact)) as jar:
        licenses = {f"{r[0]}:{r[1]}": r[3] for r in bundled_rows(jar)}
    incompatible = {c: l for c, l in licenses.items() if l not in COMPATIBLE}
    assert incompatible == {}, f"licenses not known to be compatible with Apache-2.0: {incompatible}"


# ---- Maven Central -----------------------------------------------------------------------------------------------

def test_publish_local_meets_maven_centrals_requirements(tmp_path):
    repo = tmp_path / "repo"
    published = run(sys.executable, ROOT / "bin" / "publish-local", repo)
    assert published.returncode == 0, published.stderr
    checked = run(sys.executable, ROOT / "bin" / "check-central", repo)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "3 artifact(s) meet Maven Central's requirements" in checked.stdout

    homepage = re.search(r'^Homepage = "(.+)"$', PYPROJECT, re.MULTILINE).group(1)
    for artifact in ARTIFACTS:
        folder = repo / "io" / "sparkkinesis" / artifact / VERSION
        assert (folder / f"{artifact}-{VERSION}-sources.jar").read_bytes() == jar_path(artifact, "-sources").read_bytes()
        project = ET.parse(folder / f"{artifact}-{VERSION}.pom").getroot()
        assert project.find(POM_NS + "url").text == homepage
        scala = artifact.rsplit("_", 1)[1]
        deps = {(d.find(POM_NS + "groupId").text, d.find(POM_NS + "artifactId").text, d.find(POM_NS + "scope").text)
                for d in project.iter(POM_NS + "dependency")}
        # Spark and Scala come from the Spark that runs the jar; everything else is inside it.
        assert deps == {("org.apache.spark", f"spark-sql_{scala}", "provided"),
                        ("org.scala-lang", "scala-library", "provided")}

    # The check is not a formality: a POM without <scm> and a jar changed after its checksums both fail it.
    pom = repo / "io" / "sparkkinesis" / ARTIFACTS[1] / VERSION / f"{ARTIFACTS[1]}-{VERSION}.pom"
    pom.write_text(re.sub(r"(?s)<scm>.*</scm>", "", pom.read_text(encoding="utf-8")), encoding="utf-8")
    jar = repo / "io" / "sparkkinesis" / ARTIFACTS[2] / VERSION / f"{ARTIFACTS[2]}-{VERSION}.jar"
    jar.write_bytes(jar.read_bytes() + b"\0")
    checked = run(sys.executable, ROOT / "bin" / "check-central", repo)
    assert checked.returncode == 1
    assert "no <scm> with a url and a connection" in checked.stderr
    assert f"{ARTIFACTS[2]}-{VERSION}.jar.md5: does not match" in checked.stderr


def test_signed_repository_meets_maven_centrals_requirements(tmp_path):
    """The release workflow's signing and bundling (bin/upload-central --sign --dry-run) with a throwaway key."""
    assert shutil.which("gpg"), "gpg is needed to sign the release"
    home = tmp_path / "gnupg"
    home.mkdir(mode=0o700)
    env = dict(os.environ, GNUPGHOME=str(home))
    env.pop("SIGNING_KEY_ID", None)
    env.pop("SIGNING_PASSPHRASE", None)
    try:
        key = run("gpg", "--batch", "--passphrase", "", "--quick-gen-key", "release test <test@spark-kinesis.invalid>",
                  "ed25519", "sign", "never", env=env)
        assert key.returncode == 0, key.stderr
        repo = tmp_path / "repo"
        jar = jar_path(ARTIFACTS[0])  # one artifact is enough for the signatures
        assert run(sys.executable, ROOT / "bin" / "publish-local", repo, "--jar", jar).returncode == 0
        unsigned = run(sys.executable, ROOT / "bin" / "check-central", repo, "--require-signatures", env=env)
        assert unsigned.returncode == 1 and ".jar.asc: missing" in unsigned.stderr
        signed = run(sys.executable, ROOT / "bin" / "upload-central", repo, "--sign", "--dry-run", env=env)
        assert signed.returncode == 0, signed.stderr
        assert "signed 5 file(s)" in signed.stdout  # jar, sources, javadoc, SBOM, POM
        checked = run(sys.executable, ROOT / "bin" / "check-central", repo, "--require-signatures", env=env)
        assert checked.returncode == 0, checked.stdout + checked.stderr
        with zipfile.ZipFile(repo / "central-bundle.zip") as bundle:
            names = bundle.namelist()
        base = f"io/sparkkinesis/{ARTIFACTS[0]}/{VERSION}/{ARTIFACTS[0]}-{VERSION}"
        assert {base + s for s in (".jar", ".jar.asc", ".jar.sha1", ".pom", ".pom.asc", "-sources.jar",
                                   "-javadoc.jar.asc")} <= set(names)
        assert not any(n.endswith("maven-metadata.xml") for n in names)
        # A signature that does not match its file fails the check.
        pom = repo / base.replace("/", os.sep)
        Path(f"{pom}.pom.asc").write_bytes(Path(f"{pom}.jar.asc").read_bytes())
        broken = run(sys.executable, ROOT / "bin" / "check-central", repo, "--require-signatures", env=env)
        assert broken.returncode == 1 and ".pom.asc: gpg --verify failed" in broken.stderr
    finally:
        subprocess.run(["gpgconf", "--kill", "gpg-agent"], env=env, capture_output=True)


# ---- PyPI --------------------------------------------------------------------------------------------------------

def test_the_wheel_passes_twine_check_strict():
    checked = run(sys.executable, "-m", "twine", "check", "--strict", WHEEL)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "PASSED" in checked.stdout


def test_the_wheel_metadata_is_what_pypi_accepts():
    from trove_classifiers import classifiers

    with zipfile.ZipFile(WHEEL) as wheel:
        metadata = wheel.read(f"spark_kinesis-{VERSION}.dist-info/METADATA").decode("utf-8")
    used = re.findall(r"^Classifier: (.+)$", metadata, re.MULTILINE)
    assert "Programming Language :: Python :: 3.10" in used and "Typing :: Typed" in used
    assert [c for c in used if c not in classifiers] == [], "classifiers PyPI would refuse"
    urls = dict(re.findall(r"^Project-URL: ([^,]+), (.+)$", metadata, re.MULTILINE))
    assert {"Homepage", "Documentation", "Source", "Issues", "Changelog"} <= set(urls)
    assert "Description-Content-Type: text/markdown" in metadata
    assert WHEEL.stat().st_size < PYPI_FILE_LIMIT, "the wheel is over PyPI's default per-file limit"


# ---- workflows ---------------------------------------------------------------------------------------------------

def test_actionlint_passes_on_the_workflows():
    assert ACTIONLINT.is_file(), f"{ACTIONLINT} is missing: `make actionlint` installs it"
    linted = run(ACTIONLINT, "-no-color", cwd=ROOT)
    assert linted.returncode == 0, linted.stdout + linted.stderr
    ci = (ROOT / ".github" / "workflows" / "ci.yml").read_text(encoding="utf-8")
    release = (ROOT / ".github" / "workflows" / "release.yml").read_text(encoding="utf-8")
    assert "pull_request:" in ci and "run: make test\n" in ci
    for step in ("tags:", "make test-full", "--require-signatures", "bin/upload-central", "id-token: write",
                 "pypa/gh-action-pypi-publish"):
        assert step in release, step
    assert not re.search(r"(?i)(password|passphrase|token)\s*[:=]\s*['\"]?[A-Za-z0-9+/]{12,}", ci + release)


# ---- SBOM --------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("artifact", ARTIFACTS)
def test_the_sbom_of_a_jar_lists_what_it_bundles(artifact, tmp_path):
    path = jar_path(artifact)
    first, second = tmp_path / "1.json", tmp_path / "2.json"
    for out in (first, second):
        made = run(sys.executable, ROOT / "bin" / "sbom", "jar", path, "-o", out)
        assert made.returncode == 0, made.stderr
    assert first.read_bytes() == second.read_bytes()
    bom = json.loads(first.read_text(encoding="utf-8"))
    assert bom["bomFormat"] == "CycloneDX" and bom["specVersion"] == "1.5"
    assert bom["metadata"]["component"]["hashes"][0]["content"] == hashlib.sha256(path.read_bytes()).hexdigest()
    coordinates, named, _ = components_in(path)
    listed = {f"{c['group']}:{c['name']} {c['version']}" for c in bom["components"] if "group" in c}
    assert coordinates <= listed and named <= {c["name"] for c in bom["components"]}
    assert all(c["licenses"][0]["license"].get("id") in COMPATIBLE for c in bom["components"])


def test_the_sbom_of_the_wheel_nests_its_jars(tmp_path):
    out = tmp_path / "wheel.json"
    assert run(sys.executable, ROOT / "bin" / "sbom", "wheel", WHEEL, "-o", out).returncode == 0
    bom = json.loads(out.read_text(encoding="utf-8"))
    assert bom["metadata"]["component"]["purl"] == f"pkg:pypi/spark-kinesis@{VERSION}"
    with zipfile.ZipFile(WHEEL) as wheel:
        jars = {n: hashlib.sha256(wheel.read(n)).hexdigest() for n in wheel.namelist() if n.endswith(".jar")}
    assert {c["properties"][0]["value"]: c["hashes"][0]["content"] for c in bom["components"]} == jars
    assert all(len(c["components"]) > 40 for c in bom["components"])
    refs = [bom["metadata"]["component"]["bom-ref"]] + [c["bom-ref"] for c in bom["components"]] + \
        [n["bom-ref"] for c in bom["components"] for n in c["components"]]
    assert len(refs) == len(set(refs)), "bom-refs must be unique in a CycloneDX document"
    assert {d["ref"] for d in bom["dependencies"]} <= set(refs)
    assert {r for d in bom["dependencies"] for r in d["dependsOn"]} <= set(refs)


# ---- project files -----------------------------------------------------------------------------------------------

def test_the_project_files_exist():
    for name in ("LICENSE", "NOTICE", "CHANGELOG.md", "SECURITY.md", "CONTRIBUTING.md", "docs/releasing.md",
                 "docs/compatibility-policy.md"):
        assert (ROOT / name).is_file(), name
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    assert re.search(rf"^## \[{re.escape(VERSION)}\]", changelog, re.MULTILINE), f"CHANGELOG.md has no {VERSION}"
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for doc in ("docs/releasing.md", "docs/compatibility-policy.md", "CHANGELOG.md", "CONTRIBUTING.md", "SECURITY.md"):
        assert f"]({doc})" in readme, f"README's Documentation list does not link {doc}"
