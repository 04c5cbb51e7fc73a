package io.sparkkinesis.metrics

/**
 * One run of a streaming query as its metrics see it: the figures its Kinesis source and sink hand over (read on
 * demand from what the driver already holds), the name its metrics carry (the query's name, else its id), and its
 * CloudWatch publisher when it has one. Figures are read at most once every [[QueryMetrics.FreshMillis]], however
 * many gauges ask.
 */
private[sparkkinesis] final class QueryMetrics(val runId: String, val queryId: String, val name: String) {
  @volatile private[metrics] var reads: Option[(Seq[String], () => Seq[ReadStats])] = None
  @volatile private[metrics] var writes: Option[(AnyRef, Option[String], () => WriteStats)] = None
  @volatile private[metrics] var publisher: Option[CloudWatchPublisher] = None
  private var cached: Option[(Long, QueryStats)] = None

  /** The source name in Spark's metrics system: the prefix of every gauge of the query. */
  def sourceName: String = s"kinesis.$name"

  /** The streams the source reads (none without a Kinesis source). */
  def readStreams: Seq[String] = reads.fold(Seq.empty[String])(_._1)

  def stats(nowMillis: Long = System.currentTimeMillis()): QueryStats = synchronized {
    cached match {
      case Some((at, s)) if nowMillis - at < QueryMetrics.FreshMillis && nowMillis >= at => s
      case _ =>
        val s = QueryStats(reads.fold(Seq.empty[ReadStats])(_._2()), writes.map(_._3()))
        cached = Some((nowMillis, s))
        s
    }
  }
}

private[sparkkinesis] object QueryMetrics {
  val FreshMillis = 500L
}
