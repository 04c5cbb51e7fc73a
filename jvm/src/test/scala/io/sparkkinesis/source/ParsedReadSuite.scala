package io.sparkkinesis.source

import io.sparkkinesis.compat.CollectionConverters._

import org.apache.spark.sql.util.CaseInsensitiveStringMap
import org.scalatest.funsuite.AnyFunSuite

/** A read's options are parsed once: the scan takes what the provider parsed, for the same options only. */
class ParsedReadSuite extends AnyFunSuite {
  private def map(extra: (String, String)*) = new CaseInsensitiveStringMap((Map(
      "streamName" -> "orders", "region" -> "us-east-1", "endpointUrl" -> "http://127.0.0.1:1") ++ extra).asJava)

  test("the options parsed when the read was defined serve the scan built from the same options, and no other") {
    val defined = map("shardsPerTask" -> "3")
    val read = ParsedRead(defined, SourceOptions.parse(defined))
    assert(read.of(map("shardsPerTask" -> "3")).exists(_ eq read.options))
    assert(read.of(map("shardsPerTask" -> "4")).isEmpty, "options changed since: parsed again")
    assert(read.of(map()).isEmpty)
  }
}
