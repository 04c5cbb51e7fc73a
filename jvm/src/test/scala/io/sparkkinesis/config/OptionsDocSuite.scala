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

  test("every option is documented with its name, default and since-version") {
    val doc = OptionsDoc.markdown
    KinesisOptions.all.foreach { s =>
      assert(doc.contains(s"| `${s.name}` |"), s.name)
      assert(s.doc.nonEmpty && s.since.nonEmpty, s.name)
    }
  }
}
