package io.sparkkinesis.source

import org.apache.spark.sql.connector.read.{Scan, ScanBuilder}

/** A read's options, checked and typed; Spark asks it for the scan. */
private[sparkkinesis] final class KinesisScanBuilder(options: SourceOptions) extends ScanBuilder {
  override def build(): Scan = new KinesisScan(options)
}
