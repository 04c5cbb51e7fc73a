package io.sparkkinesis.packaging

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.streaming.Trigger

/**
 * Run by `PackagedJarSuite` in a JVM of its own whose class path is Spark and the artifact's assembly jar, as a user's
 * application has it (this class is the only one it takes from the test classes): writes rows to a stream through
 * the sink, reads them back with a batch read and with an AvailableNow streaming query, and prints one line that
 * the suite checks. Only Spark's public API: nothing of the connector but its format name.
 *
 * Arguments: endpoint, stream, cborEnabled, rows.
 */
object PackagedJarMain {
  def main(args: Array[String]): Unit = {
    val Array(endpoint, stream, cbor, count) = args
    val rows = count.toInt
    val spark = SparkSession.builder().master("local[2]").appName("packaged-jar")
      .config("spark.ui.enabled", "false")
      .config("spark.driver.host", "127.0.0.1")
      .config("spark.driver.bindAddress", "127.0.0.1")
      .config("spark.sql.shuffle.partitions", "2")
      .getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    val options = Map(
      "endpointUrl" -> endpoint, "region" -> "us-east-1", "awsAccessKeyId" -> "local-test-key",
      "awsSecretKey" -> "local-test-secret", "cborEnabled" -> cbor, "streamName" -> stream)
    try {
      spark.range(rows).selectExpr("CAST(id AS STRING) AS data", "CAST(id % 7 AS STRING) AS partitionKey")
        .write.format("kinesis").options(options).mode("append").save()
      val batch = spark.read.format("kinesis").options(options).load()
        .selectExpr("CAST(data AS STRING)").collect().map(_.getString(0)).sorted.toSeq
      val table = s"packaged_jar_${System.nanoTime()}"
      spark.readStream.format("kinesis").options(options).option("initialPosition", "trim_horizon").load()
        .selectExpr("CAST(data AS STRING) AS data")
        .writeStream.format("memory").queryName(table).trigger(Trigger.AvailableNow()).start()
        .awaitTermination()
      val streamed = spark.table(table).collect().map(_.getString(0)).sorted.toSeq
      // Where the provider class came from: the jar, not a folder of classes.
      val provider = Class.forName("io.sparkkinesis.KinesisSourceProvider")
      val source = provider.getProtectionDomain.getCodeSource.getLocation
      val expected = (0 until rows).map(_.toString).sorted
      println(s"packaged jar: Spark ${spark.version}, Scala ${scala.util.Properties.versionNumberString}, " +
        s"provider from $source; written $rows, batch read ${batch.size} (all: ${batch == expected}), " +
        s"streaming read ${streamed.size} (all: ${streamed == expected})")
    } finally spark.stop()
  }
}
