package io.sparkkinesis.testing

import org.scalatest.Tag

/**
 * A test too long for `make test` (a query on 10,000 shards): build.sbt leaves it out unless SPARK_KINESIS_ALL_SUITES
 * is set, as `make test-full` sets it. Run one alone with
 * `SPARK_KINESIS_ALL_SUITES=1 bin/sbt 'connector/testOnly <suite>'`.
 */
object FullOnly extends Tag("io.sparkkinesis.testing.FullOnly")
