package io.sparkkinesis.fetching

/**
 * How a query's tasks read its shards: by GetRecords ([[ReadMode.Polling]]), or by enhanced fan-out through each
 * stream's registered consumer ([[ReadMode.FanOut]], `consumerMode=efo`). Re-reads of planned ranges, the driver's
 * own looks, retried prefetch attempts and closed shards poll whatever the mode (see [[ShardFetchers]]).
 */
private[sparkkinesis] sealed trait ReadMode extends Serializable {

  /** The consumer ARN a shard of `stream` is read through, None when it is polled. */
  def consumerOf(stream: String): Option[String]
}

private[sparkkinesis] object ReadMode {
  case object Polling extends ReadMode {
    def consumerOf(stream: String): Option[String] = None
  }

  /** Enhanced fan-out: `consumerArns` holds each stream's consumer ARN, by stream name. */
  final case class FanOut(consumerArns: Map[String, String]) extends ReadMode {
    def consumerOf(stream: String): Option[String] = consumerArns.get(stream)
  }
}
