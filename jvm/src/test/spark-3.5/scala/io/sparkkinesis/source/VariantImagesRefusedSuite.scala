package io.sparkkinesis.source

import org.scalatest.funsuite.AnyFunSuite

import io.sparkkinesis.compat.CollectionConverters._
import io.sparkkinesis.config.Dialect
import io.sparkkinesis.errors.KinesisOptionException

/** `imageColumnType=variant` on Spark 3.5, which has no VARIANT type: refused by name, before any call. */
class VariantImagesRefusedSuite extends AnyFunSuite {

  test("imageColumnType=variant fails with the option's name and what to use instead") {
    val e = intercept[KinesisOptionException](SourceOptions.parse(
        Map("tableName" -> "orders", "region" -> "us-east-1", "imageColumnType" -> "variant").asJava,
        Dialect.DynamoDbStreams))
    assert(
      e.getMessage.contains("[KINESIS_INVALID_OPTION_VALUE]") && e.getMessage.contains("imageColumnType") &&
        e.getMessage.contains("from_dynamodb_json"), e.getMessage)
  }
}
