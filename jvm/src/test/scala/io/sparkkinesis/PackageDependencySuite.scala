package io.sparkkinesis

import java.nio.charset.StandardCharsets
import java.nio.file.{Files, Path, Paths}

import io.sparkkinesis.compat.CollectionConverters._

import org.scalatest.funsuite.AnyFunSuite

/**
 * The connector's packages depend on each other in one direction only (docs/design.md, "Packages"):
 * {{{
 * errors, compat, runtime <- config, avro, jsonschema, protobuf <- aws <- offsets, kpl, registry, metrics <- fetching
 *   <- prefetch <- reader <- source
 *   <- (root)
 * sink <- (root), and the sink uses only errors, compat, runtime, config, aws, kpl and metrics
 * }}}
 * A file may use its own package and the packages below it, never one above it or beside it; the root package (the
 * provider and the table: wiring) is on top, so no other package may use what it defines. This suite reads every
 * source file of the connector and fails on any reference (import or fully qualified name, outside comments) that
 * points the other way, so a cycle cannot come back unnoticed.
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

  test("every package of the connector has a place in the layering") {
    assert(sourceRoots.size >= 5, s"the common tree and the version folders: $sourceRoots")
    val packages = sources.map { case (root, f) => packageOf(root, f) }.distinct
    assert(packages.nonEmpty)
    val unplaced = packages.filterNot(p => p == Root || p == Sink || Rank.contains(p))
    assert(unplaced.isEmpty, s"packages with no place in PackageDependencySuite's layering: $unplaced")
  }

  test("every package says in its README.md what it owns and what it may import") {
    val common = sourceRoots.filter(_.toString.contains("main/scala/io")).head
    val folders = sources.filter(_._1 == common).map(_._2.getParent).distinct
    val missing = folders.filterNot { d =>
      val readme = d.resolve("README.md")
      Files.isRegularFile(readme) && {
        val text = new String(Files.readAllBytes(readme), StandardCharsets.UTF_8)
        text.contains("May import") || text.contains("Imports no package")
      }
    }
    assert(missing.isEmpty, s"packages without a README.md that says what they may import: $missing")
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
    assert(violationsIn("source", "import io.sparkkinesis.sink.KinesisWrite") == Seq("source -> sink"))
    assert(violationsIn("kpl", "import io.sparkkinesis.offsets.RecordPosition") == Seq("kpl -> offsets"))
    assert(violationsIn("offsets", "// see io.sparkkinesis.source.X\n/** [[io.sparkkinesis.reader.Y]] */").isEmpty)
    assert(violationsIn("reader", "import io.sparkkinesis.prefetch.PrefetchBuffers").isEmpty)
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
  val Sink = "sink"

  /** Lower ranks are lower layers; equal ranks are peers, which may not use each other. */
  val Rank: Map[String, Int] = Map(
    "errors" -> 0, "compat" -> 0, "runtime" -> 0,
    "config" -> 1, "avro" -> 1, "jsonschema" -> 1, "protobuf" -> 1,
    "aws" -> 2,
    "offsets" -> 3, "kpl" -> 3, "registry" -> 3, "metrics" -> 3,
    "fetching" -> 4,
    "prefetch" -> 5,
    "reader" -> 6,
    "source" -> 7)

  val SinkMayUse: Set[String] = Set("errors", "compat", "runtime", "config", "aws", "kpl", "metrics")

  // `io.sparkkinesis.<package>` or `io.sparkkinesis.<Type>` (a type of the root package), or an import of several
  // names at once, `io.sparkkinesis.{...}`.
  private val Reference = """io\.sparkkinesis\.([A-Za-z_]+)\b""".r
  private val Selectors = """io\.sparkkinesis\.\{([^}]*)\}""".r
  private val Name = """[A-Za-z_][A-Za-z0-9_]*""".r

  /** The package a name right under io.sparkkinesis stands for: a package's own name, else (a type) the root. */
  private def packageNamed(name: String): String = if (name.head.isUpper) Root else name
  private val BlockComment = """(?s)/\*.*?\*/""".r
  private val LineComment = """//[^\n]*""".r

  def allowed(from: String, to: String): Boolean =
    from == to || from == Root || (from match {
      case Sink => SinkMayUse.contains(to)
      case _ => to != Sink && Rank.contains(from) && Rank.get(to).exists(_ < Rank(from))
    })

  /** "from -> to" for each package `text` (a file of package `from`) uses but may not, once each. */
  def violationsIn(from: String, text: String): Seq[String] = {
    val code = LineComment.replaceAllIn(BlockComment.replaceAllIn(text, ""), "")
    // Each selector's first name (`A => B` renames A).
    val selected = Selectors.findAllMatchIn(code).flatMap(_.group(1).split(",").toSeq.flatMap(Name.findFirstIn(_)))
    (Reference.findAllMatchIn(code).map(_.group(1)) ++ selected).filterNot(_ == "shaded").map(packageNamed)
      .toSeq.distinct.filterNot(allowed(from, _)).map(to => s"$from -> $to")
  }
}
