package io.sparkkinesis

import java.nio.charset.StandardCharsets
import java.nio.file.{Files, Path, Paths}

import io.sparkkinesis.compat.CollectionConverters._

import org.scalatest.funsuite.AnyFunSuite

/**
 * The connector's packages depend on each other in one direction only, and each lives on one side of the
 * driver/executor line (docs/design.md, "Packages"):
 * {{{
 *   either JVM:  errors, compat, runtime, wire <- config, payload.avro, payload.jsonschema, payload.protobuf,
 *                  payload.dynamodb <- aws
 *                  <- offsets, kpl, payload.registry, metrics <- fetching
 *   executors:   reader (the read's tasks), writer (the write's tasks)
 *   driver:      source (over reader), sink (over writer) <- (root)
 * }}}
 * A file may use its own package and the packages below it, never one above it or beside it; the root package (the
 * provider and the table: wiring) is on top, so no other package may use what it defines. An executor package uses
 * no driver package; the driver packages build what their executor packages run (input partitions, writer
 * factories). The write side uses nothing of the read side and the other way round. This suite reads every source
 * file of the connector and fails on any reference (import or fully qualified name, outside comments) that points the
 * other way, so a cycle cannot come back unnoticed; and on any package a file uses that its package's README.md does
 * not list after "May import".
 */
class PackageDependencySuite extends AnyFunSuite {
  import PackageDependencySuite._

  // The common tree and every version folder (spark-<line>/scala, scala-<binary>) of the cross-build.
  private val sourceRoots: Seq[Path] =
    Files.list(Paths.get("jvm/src/main")).iterator().asScala.toSeq
      .flatMap(d => Seq(d.resolve("io/sparkkinesis"), d.resolve("scala/io/sparkkinesis")))
      .filter(Files.isDirectory(_)).sortBy(_.toString)

  private def sources: Seq[(Path, Path)] =
    sourceRoots.flatMap { root =>
      Files.walk(root).iterator().asScala.filter(_.toString.endsWith(".scala")).toSeq.map(root -> _)
    }.sortBy(_._2.toString)

  private def packageOf(root: Path, file: Path): String = {
    val rel = root.relativize(file.getParent).toString
    if (rel.isEmpty) Root else rel.replace('/', '.')
  }

  private val common: Path = sourceRoots.filter(_.toString.contains("main/scala/io")).head

  private def readme(pkg: String): Path =
    if (pkg == Root) common.resolve("README.md") else common.resolve(pkg.replace('.', '/')).resolve("README.md")

  private def read(p: Path): String = new String(Files.readAllBytes(p), StandardCharsets.UTF_8)

  test("every package of the connector has a place in the layering") {
    assert(sourceRoots.size >= 5, s"the common tree and the version folders: $sourceRoots")
    val packages = sources.map { case (root, f) => packageOf(root, f) }.distinct
    assert(packages.nonEmpty)
    val unplaced = packages.filterNot(Rank.contains)
    assert(unplaced.isEmpty, s"packages with no place in PackageDependencySuite's layering: $unplaced")
  }

  test("every package says in its README.md what it owns, which side it runs on and what it may import") {
    val packages = sources.filter(_._1 == common).map { case (root, f) => packageOf(root, f) }.distinct
    val problems = packages.flatMap { pkg =>
      val path = readme(pkg)
      if (!Files.isRegularFile(path)) Seq(s"$pkg: no README.md")
      else {
        val text = read(path).replaceAll("\\s+", " ")
        val side = Side(pkg)
        (if (mayImport(text).isEmpty && pkg != Root) Seq(s"$pkg: no line 'May import: ...' or 'Imports no package'")
         else Nil) ++
          (if (!text.contains(side.words)) Seq(s"$pkg: does not say it runs ${side.words}") else Nil) ++
          mayImport(text).toSeq.flatten.filterNot(allowed(pkg, _)).map(p => s"$pkg: lists $p, which it may not use")
      }
    }
    assert(problems.isEmpty, problems.mkString("\n", "\n", "\n"))
  }

  test("no file uses a package its package's README.md does not list") {
    val listed = sources.map { case (root, f) => packageOf(root, f) }.distinct.map { pkg =>
      pkg -> (if (pkg == Root) None else mayImport(read(readme(pkg))))
    }.toMap
    val unlisted = sources.flatMap { case (root, f) =>
      val pkg = packageOf(root, f)
      listed(pkg).toSeq.flatMap(may => referencedIn(read(f)).filterNot(p => p == pkg || may.contains(p)))
        .map(p => s"${root.relativize(f)}: uses $p, not in ${pkg.replace('.', '/')}/README.md")
    }.distinct
    assert(unlisted.isEmpty, unlisted.mkString("\n", "\n", "\n"))
  }

  test("the README line is read as a list of packages") {
    assert(mayImport("Some words.\nMay import: fetching, offsets, payload.avro and\n errors.\n").contains(
        Seq("fetching", "offsets", "payload.avro", "errors")))
    assert(mayImport("Imports no package of the connector.").contains(Nil))
    assert(mayImport("No such line.").isEmpty)
  }

  test("no file refers to a package above or beside its own") {
    val violations = sources.flatMap { case (root, f) =>
      val text = new String(Files.readAllBytes(f), StandardCharsets.UTF_8)
      violationsIn(packageOf(root, f), text).map(v => s"${root.relativize(f)}: $v")
    }
    assert(violations.isEmpty, violations.mkString("\n", "\n", "\n"))
  }

  test("the check sees imports and qualified names that point up, and ignores comments") {
    assert(violationsIn("offsets", "import io.sparkkinesis.source.StartPosition") == Seq("offsets -> source"))
    assert(violationsIn("aws", "val f = io.sparkkinesis.reader.Failure.of(e)") == Seq("aws -> reader"))
    assert(violationsIn("sink", "import io.sparkkinesis.fetching.{A, B}") == Seq("sink -> fetching"))
    assert(violationsIn("writer", "import io.sparkkinesis.fetching.ShardFetcher") == Seq("writer -> fetching"))
    assert(violationsIn("source", "import io.sparkkinesis.sink.KinesisWrite") == Seq("source -> sink"))
    assert(violationsIn("kpl", "import io.sparkkinesis.offsets.RecordPosition") == Seq("kpl -> offsets"))
    assert(violationsIn("offsets", "// see io.sparkkinesis.source.X\n/** [[io.sparkkinesis.reader.Y]] */").isEmpty)
    assert(violationsIn("reader", "import io.sparkkinesis.fetching.ShardFetchers").isEmpty)
    assert(violationsIn("reader", "import io.sparkkinesis.source.RetiredSources") == Seq("reader -> source"))
    assert(violationsIn("writer", "import io.sparkkinesis.sink.SinkOptions") == Seq("writer -> sink"))
    assert(violationsIn("sink", "import io.sparkkinesis.writer.KinesisDataWriterFactory").isEmpty)
    assert(violationsIn("writer", "import io.sparkkinesis.reader.ShardSessions") == Seq("writer -> reader"))
    assert(violationsIn("sink", "import io.sparkkinesis.source.KinesisScan") == Seq("sink -> source"))
    assert(violationsIn("payload.registry", "import io.sparkkinesis.payload.avro.AvroDecoder").isEmpty)
    assert(violationsIn("payload.avro", "import io.sparkkinesis.payload.registry.GlueFraming") ==
      Seq("payload.avro -> payload.registry"))
    assert(violationsIn("kpl", "import io.sparkkinesis.wire.{Wire, WireReader}").isEmpty)
    assert(violationsIn("sink", "import io.sparkkinesis.kpl.KplAggregator").isEmpty)
    assert(violationsIn(Root, "import io.sparkkinesis.sink.KinesisWriteBuilder").isEmpty)
    // A type of the root package, however it is named: the root is the top, no package below may use it.
    assert(violationsIn("fetching", "import io.sparkkinesis.DaemonThreads") == Seq("fetching -> (root)"))
    assert(violationsIn("sink", "import io.sparkkinesis.{KinesisTable, sink}") == Seq("sink -> (root)"))
    assert(violationsIn("aws", "val p = new io.sparkkinesis.KinesisSourceProvider()") == Seq("aws -> (root)"))
    assert(violationsIn(Root, "import io.sparkkinesis.KinesisTable").isEmpty)
    assert(violationsIn("source", "import io.sparkkinesis.runtime.DaemonThreads").isEmpty)
  }
}

object PackageDependencySuite {
  val Root = "(root)"

  /** Which JVM runs a package's code; `words` is how its README says so. */
  sealed abstract class Side(val words: String)
  case object Driver extends Side("on the driver")
  case object Executors extends Side("on the executors")
  case object EitherJvm extends Side("on the driver and the executors alike")

  /** Lower ranks are lower layers; equal ranks are peers, which may not use each other. */
  val Rank: Map[String, Int] = Map(
    "errors" -> 0, "compat" -> 0, "runtime" -> 0, "wire" -> 0,
    "config" -> 1, "payload.avro" -> 1, "payload.jsonschema" -> 1, "payload.protobuf" -> 1, "payload.dynamodb" -> 1,
    "aws" -> 2,
    "offsets" -> 3, "kpl" -> 3, "payload.registry" -> 3, "metrics" -> 3,
    "fetching" -> 4,
    "reader" -> 5, "writer" -> 5,
    "source" -> 6, "sink" -> 6,
    Root -> 7)

  val Side: Map[String, Side] = Rank.keys.map { p =>
    p -> (p match {
      case "reader" | "writer" => Executors
      case "source" | "sink" | Root => Driver
      case _ => EitherJvm
    })
  }.toMap

  /** The write side (sink over writer) uses only these packages below it, nothing of the read side. */
  val WriteSideMayUse: Set[String] = Set("errors", "compat", "runtime", "wire", "config", "aws", "kpl", "metrics")
  val ReadSide: Set[String] = Set("reader", "source")
  val WriteSide: Set[String] = Set("writer", "sink")

  // `io.sparkkinesis.<package>[.<sub>...]` or `io.sparkkinesis.<Type>` (a type of the root package), or an import of
  // several names at once, `io.sparkkinesis.{...}`.
  private val Reference = """io\.sparkkinesis\.([A-Za-z_][A-Za-z0-9_]*(?:\.[a-z_][a-z0-9_]*)*)""".r
  private val Selectors = """io\.sparkkinesis\.\{([^}]*)\}""".r
  private val Name = """[A-Za-z_][A-Za-z0-9_]*""".r
  private val MayImport = """(?s)May import:\s*(.*?)\.(?:\s|$)""".r

  /**
   * The package a dotted name right under io.sparkkinesis stands for: the longest known package it starts with (a
   * nested package such as `payload.avro`), its first part if none is known, or the root for a type.
   */
  private def packageNamed(name: String): String =
    if (name.head.isUpper) Root
    else {
      val parts = name.split('.').toSeq
      (parts.size to 1 by -1).map(n => parts.take(n).mkString(".")).find(Rank.contains).getOrElse(parts.head)
    }
  private val BlockComment = """(?s)/\*.*?\*/""".r
  private val LineComment = """//[^\n]*""".r

  def allowed(from: String, to: String): Boolean =
    from == to || from == Root || (Rank.contains(from) && Rank.get(to).exists(_ < Rank(from)) &&
      !(Side(from) == Executors && Side(to) == Driver) &&
      !(WriteSide.contains(from) && !WriteSide.contains(to) && !WriteSideMayUse.contains(to)) &&
      !(ReadSide.contains(from) && WriteSide.contains(to)))

  /** The packages (other than the root) a file's text refers to, outside comments. */
  def referencedIn(text: String): Seq[String] = {
    val code = LineComment.replaceAllIn(BlockComment.replaceAllIn(text, ""), "")
    // Each selector's first name (`A => B` renames A).
    val selected = Selectors.findAllMatchIn(code).flatMap(_.group(1).split(",").toSeq.flatMap(Name.findFirstIn(_)))
    (Reference.findAllMatchIn(code).map(_.group(1)) ++ selected).filterNot(_.startsWith("shaded")).map(packageNamed)
      .toSeq.distinct
  }

  /** "from -> to" for each package `text` (a file of package `from`) uses but may not, once each. */
  def violationsIn(from: String, text: String): Seq[String] =
    referencedIn(text).filterNot(allowed(from, _)).map(to => s"$from -> $to")

  /**
   * The packages a README lists on its line "May import: a, b and c." (Nil for "Imports no package"), or None when
   * it has neither.
   */
  def mayImport(readme: String): Option[Seq[String]] =
    if (readme.contains("Imports no package")) Some(Nil)
    else
      MayImport.findFirstMatchIn(readme).map(_.group(1).split("""[,\s]+""").toSeq.filter(w => w.nonEmpty && w != "and"))
}
