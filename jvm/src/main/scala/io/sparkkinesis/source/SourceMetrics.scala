package io.sparkkinesis.source

import io.sparkkinesis.config.ForeignMetrics
import io.sparkkinesis.fetching.{FetchCounts, ShardReading}
import io.sparkkinesis.offsets.{KinesisSourceOffset, ShardKey, ShardPosition}
import io.sparkkinesis.compat.ScalaCompat._

/**
 * The source's metrics in StreamingQueryProgress.sources[].metrics, from what the latest prefetch rounds and
 * real-time tasks saw of each shard ([[ShardReading]]).
 */
private[sparkkinesis] final class SourceMetrics {
  private var latest = Map.empty[ShardKey, ShardReading]
  // The running totals of shards forgotten (they left the offset), so that the query's totals never go back.
  private var forgotten = FetchCounts.Zero

  /** Drops the reports of shards that left the offset, keeping their counts in the totals. */
  def forget(gone: Set[ShardKey]): Unit = synchronized {
    gone.flatMap(latest.get).foreach(r => forgotten = forgotten + r.counts)
    latest --= gone
  }

  /** Readings whose counts are running totals over the shard's reading (a prefetch buffer's). */
  def record(readings: Seq[ShardReading]): Unit = synchronized {
    readings.foreach(r => latest = latest.updated(r.key, r))
  }

  /**
   * Readings whose counts cover one stretch of reading only (a real-time batch's tasks): added to the shard's
   * earlier counts, so that the metrics stay running totals as with the prefetch buffers.
   */
  def accumulate(readings: Seq[ShardReading]): Unit = synchronized {
    readings.foreach { r =>
      val total = latest.get(r.key).fold(r)(before => r.copy(counts = before.counts + r.counts))
      latest = latest.updated(r.key, total)
    }
  }

  /**
   * `lostShards`: shards dropped unread to their end because retention removed them (see [[ShardTracker]]).
   * `driverCalls`: GetRecords calls the driver made looking for records while the query was quiet
   * ([[QuietWatch]]); `quietShards`: the shards it watches now. `consumers`: the enhanced fan-out consumers read
   * with (`consumerMode=efo`), none when polling. The `dataLoss` metric adds them to the trimmed-away positions the executors skipped (failOnDataLoss=false).
   * `streams`: how many streams the query reads. Besides this connector's names, the metrics Databricks' source
   * reports under the same meaning are there under its names ([[ForeignMetrics]]), so its dashboards keep working.
   */
  def snapshot(
      consumed: Option[KinesisSourceOffset],
      lostShards: Long = 0L,
      driverCalls: Long = 0L,
      quietShards: Int = 0,
      consumers: Seq[String] = Nil,
      streams: Int = 0): Map[String, String] = synchronized {
    val open = consumed.map(_.shards.count(_._2 != ShardPosition.Ended)).getOrElse(latest.size)
    val closed = consumed.map(_.shards.count(_._2 == ShardPosition.Ended)).getOrElse(0)
    // Lag is about shards still being read: not a closed shard's last answer, which says nothing about the stream's
    // tip, nor one of a shard no longer in the offset.
    val reading = latest.filter { case (k, _) => consumed.forall(_.shards.get(k).exists(_ != ShardPosition.Ended)) }
    val totals = latest.values.foldLeft(forgotten)((sum, r) => sum + r.counts)
    val behind = reading.values.flatMap(_.millisBehindLatest).toSeq
    val ours = Map(
      "avgMsBehindLatest" -> (if (behind.isEmpty) "0" else (behind.sum.toDouble / behind.size).toString),
      "maxMsBehindLatest" -> behind.maxOption.getOrElse(0L).toString,
      "minMsBehindLatest" -> behind.minOption.getOrElse(0L).toString,
      "bufferedRecords" -> latest.values.map(_.bufferedRecords).sum.toString,
      "bufferedBytes" -> latest.values.map(_.bufferedBytes).sum.toString,
      "openShards" -> open.toString,
      "closedShards" -> closed.toString,
      "getRecordsCalls" -> totals.calls.toString,
      "driverGetRecordsCalls" -> driverCalls.toString,
      "quietShards" -> quietShards.toString,
      "throttledCalls" -> totals.throttled.toString,
      "dataLoss" -> (totals.dataLoss + lostShards).toString,
      "consumerMode" -> (if (consumers.isEmpty) "polling" else "efo"),
      "consumerName" -> consumers.distinct.mkString(","),
      "subscriptionsRenewed" -> totals.renewed.toString,
      "subscriptionsFailed" -> totals.failed.toString)
    ForeignMetrics.withTheirNames(ours, open + closed, streams, consumers.distinct.size)
  }
}
