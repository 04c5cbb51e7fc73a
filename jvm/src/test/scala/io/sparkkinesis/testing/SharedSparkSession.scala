package io.sparkkinesis.testing

import org.apache.spark.sql.SparkSession
import org.scalatest.{BeforeAndAfterAll, Suite}

/**
 * One local Spark session for a suite, on loopback and without a UI, stopped after the suite. Every Spark suite of
 * the connector mixes this in instead of building its own.
 */
trait SharedSparkSession extends BeforeAndAfterAll { self: Suite =>

  /** The master: two cores, and no task retries (`local[2,2]` would allow one retry of each task). */
  protected def master: String = "local[2]"

  /** Spark settings of the suite's own on top of these (settings a started session can no longer take). */
  protected def sparkConf: Map[String, String] = Map.empty

  protected lazy val spark: SparkSession = SparkSession.builder()
    .master(master)
    .appName(getClass.getSimpleName)
    .config("spark.ui.enabled", "false")
    .config("spark.driver.host", "127.0.0.1")
    .config("spark.driver.bindAddress", "127.0.0.1")
    .config("spark.sql.shuffle.partitions", "2")
    .config(sparkConf)
    .getOrCreate()

  override protected def afterAll(): Unit =
    try spark.stop()
    finally super.afterAll()
}
