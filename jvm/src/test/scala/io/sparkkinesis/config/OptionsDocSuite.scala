package io.sparkkinesis.config

import java.nio.charset.StandardCharsets
import java.nio.file.{Files, Paths}

import org.scalatest.funsuite.AnyFunSuite

class OptionsDocSuite extends AnyFunSuite {

  test("docs/options.md is what the registry generates (run `make docs` after changing an option)") {
    val checkedIn = new String(Files.readAllBytes(Paths.get("docs/options.md")), StandardCharsets.UTF_8)
    assert(checkedIn == OptionsDoc.markdown, "docs/options.md is stale: run `make docs` and commit the result")
  }

  test("python/spark_kinesis/options.py is what the registry generates (run `make docs` after changing an option)") {
    val checkedIn = new String(Files.readAllBytes(Paths.get("python/spark_kinesis/options.py")), StandardCharsets.UTF_8)
    assert(checkedIn == OptionsDoc.python,
      "python/spark_kinesis/options.py is stale: run `make docs` and commit the result")
  }

  test("the Python checks carry the connector's stream patterns, value descriptions and initial positions") {
    val py = OptionsDoc.python
    assert(py.contains("STREAM_NAME_PATTERN: Final = \"" + StreamNamePatterns.Name + "\"\n"))
    assert(py.contains("STREAM_ARN_PATTERN: Final = \"" + StreamNamePatterns.Arn + "\"\n"))
    KinesisOptions.all.foreach(s => assert(py.contains("\"" + s.kind.describe + "\"),"), s.name))
    val positions = KinesisOptions.InitialPosition.kind match {
      case OptionKind.Choice(values) => values
      case other => fail(s"initialPosition is ${other.typeName}, not a choice")
    }
    assert(positions.contains("trim_horizon"))
    assert(py.contains(positions.map(p => "\"" + p + "\"").mkString("InitialPositionValue: TypeAlias = Literal[", ", ",
          "]\n")))
  }

  test("every option is documented with its name, default and since-version") {
    val doc = OptionsDoc.markdown
    KinesisOptions.all.foreach { s =>
      assert(doc.contains(s"| `${s.name}` |"), s.name)
      assert(s.doc.nonEmpty && s.since.nonEmpty, s.name)
    }
  }
}
