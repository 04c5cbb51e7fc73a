package io.sparkkinesis.config

/**
 * The names Databricks' Kinesis source gives the source metrics (`StreamingQueryProgress.sources[].metrics`), added
 * to this connector's so that dashboards built on them keep working; avg/max/minMsBehindLatest are the same names in
 * both. As with options ([[ForeignOptions]]), other programs' names are declared here and nowhere else.
 */
private[sparkkinesis] object ForeignMetrics {

  /** Their name of what this connector reports under its own: the same value. */
  val aliases: Seq[(String, String)] = Seq(
    "totalPrefetchedBytes" -> "bufferedBytes",
    "numClosedShards" -> "closedShards",
    "numAwsRateLimitErrors" -> "throttledCalls",
    "mode" -> "consumerMode")

  /**
   * `ours` with Databricks' names added: the aliases, and the counts they report that this connector has no metric
   * of its own for: the shards in the offset (`totalShards`, open and closed), the streams read, and the consumers.
   */
  def withTheirNames(ours: Map[String, String], totalShards: Int, streams: Int, consumers: Int): Map[String, String] =
    ours ++ aliases.map { case (theirs, mine) => theirs -> ours(mine) } ++ Map(
      "numTotalShards" -> totalShards.toString,
      "numStreams" -> streams.toString,
      "numRegisteredConsumers" -> consumers.toString)
}
