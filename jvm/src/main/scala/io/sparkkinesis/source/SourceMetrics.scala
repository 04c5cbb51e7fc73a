package io.sparkkinesis.source

import io.sparkkinesis.config.ForeignMetrics
import io.sparkkinesis.fetching.{FetchCounts, ShardReading}
import io.sparkkinesis.metrics.ReadStats
import io.sparkkinesis.offsets.{KinesisSourceOffset, ShardKey, ShardPosition}
import io.sparkkinesis.reader.ShardCut
import io.sparkkinesis.compat.ScalaCompat._

/**
 * The source's metrics in StreamingQueryProgress.sources[].metrics, from what the latest prefetch rounds and
 * real-time tasks saw of each shard ([[ShardReading]]); and, per stream, the figures of the query's metrics that leave
 * the process ([[byStream]]: Spark's metrics system, CloudWatch).
 */
private[sparkkinesis] final class SourceMetrics {
  private var latest = Map.empty[ShardKey, ShardReading]
  // The running totals of shards forgotten (they left the offset), so that the query's totals never go back.
  private var forgotten = FetchCounts.Zero
  // Records and bytes the prefetch rounds planned into batches (or real-time tasks handed on), by shard; and by
  // stream, those of shards forgotten.
  private var planned = Map.empty[ShardKey, (Long, Long)]
  private var forgottenByStream = Map.empty[String, (FetchCounts, Long, Long)]
  private val backlog = new BacklogEstimate
  // The offset the latest progress report said the query had consumed, for [[byStream]].
  private var lastConsumed = Option.empty[KinesisSourceOffset]

  /** Drops the reports of shards that left the offset, keeping their counts in the totals. */
  def forget(gone: Set[ShardKey]): Unit = synchronized {
    gone.flatMap(k => latest.get(k)).foreach(r => forgotten = forgotten + r.counts)
    gone.foreach { k =>
      val (counts, records, bytes) = forgottenByStream.getOrElse(k.stream, (FetchCounts.Zero, 0L, 0L))
      val (r, b) = planned.getOrElse(k, (0L, 0L))
      forgottenByStream += k.stream ->
        ((counts + latest.get(k).fold(FetchCounts.Zero)(_.counts), records + r, bytes + b))
    }
    latest --= gone
    planned --= gone
    backlog.forget(gone)
  }

  /**
   * A prefetch round's cuts at `nowMillis`: their readings (as [[record]]), the records and bytes they planned into
   * the next batch, and what the backlog estimate learns from them.
   */
  def recordRound(cuts: Seq[ShardCut], nowMillis: Long): Unit = synchronized {
    record(cuts.map(_.reading))
    cuts.foreach { c =>
      val total = addRead(c.key, c.records, c.bytes)
      c.reading.millisBehindLatest.foreach { behind =>
        backlog.observe(c.key, c.reading.measuredAtMillis.getOrElse(nowMillis), behind, total._1 + c.bufferedRecords,
          total._2 + c.bufferedBytes, c.reading.held)
      }
    }
  }

  /** Adds `records` and `bytes` read from `key` to its totals, and returns them. */
  private def addRead(key: ShardKey, records: Long, bytes: Long): (Long, Long) = {
    val (r, b) = planned.getOrElse(key, (0L, 0L))
    val total = (r + records, b + bytes)
    planned += key -> total
    total
  }

  /**
   * Per stream at `nowMillis`: the lag of the shards being read (as in the progress), the backlog estimate (records
   * and bytes buffered beyond the planned batches, plus [[BacklogEstimate]]'s estimate of those not fetched yet), and
   * running totals of throttled calls and of records and bytes planned into batches.
   */
  def byStream(streams: Seq[String], nowMillis: Long = System.currentTimeMillis()): Seq[ReadStats] = synchronized {
    streams.map { stream =>
      val shards = latest.filter(_._1.stream == stream)
      val reading = shards.filter { case (k, _) =>
        lastConsumed.forall(_.shards.get(k).forall(_ != ShardPosition.Ended))
      }
      val behind = reading.values.flatMap(_.millisBehindLatest).toSeq
      val pending = shards.values.toSeq.map { r =>
        val (records, bytes) = if (reading.contains(r.key)) backlog.aheadOfFetcher(r.key, nowMillis) else (0L, 0L)
        (r.bufferedRecords + records, r.bufferedBytes + bytes)
      }
      val (goneCounts, goneRecords, goneBytes) = forgottenByStream.getOrElse(stream, (FetchCounts.Zero, 0L, 0L))
      val read = planned.filter(_._1.stream == stream).values
      ReadStats(stream,
        avgMsBehindLatest = if (behind.isEmpty) 0d else behind.sum.toDouble / behind.size,
        maxMsBehindLatest = behind.maxOption.getOrElse(0L),
        pendingRecords = pending.map(_._1).sum,
        pendingBytes = pending.map(_._2).sum,
        throttledCalls = goneCounts.throttled + shards.values.map(_.counts.throttled).sum,
        recordsRead = goneRecords + read.map(_._1).sum,
        bytesRead = goneBytes + read.map(_._2).sum)
    }
  }

  /** Readings whose counts are running totals over the shard's reading (a prefetch buffer's). */
  def record(readings: Seq[ShardReading]): Unit = synchronized {
    readings.foreach(r => latest = latest.updated(r.key, r))
  }

  /**
   * Readings whose counts cover one stretch of reading only (a real-time batch's tasks, at `nowMillis`): added to the
   * shard's earlier counts, and the records and bytes they handed on to the read totals, so that the metrics stay
   * running totals as with the prefetch buffers; and what the backlog estimate learns from them.
   */
  def accumulate(readings: Seq[ShardReading], nowMillis: Long = System.currentTimeMillis()): Unit = synchronized {
    readings.foreach { r =>
      val total = latest.get(r.key).fold(r)(before => r.copy(counts = before.counts + r.counts))
      latest = latest.updated(r.key, total)
      val read = addRead(r.key, r.deliveredRecords, r.deliveredBytes)
      // The tasks' last reads were just before their batch's end: the backlog then, held until the next batch's end.
      r.millisBehindLatest.foreach { behind =>
        backlog.observe(r.key, r.measuredAtMillis.getOrElse(nowMillis), behind, read._1, read._2, continuous = true)
      }
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
    consumed.foreach(c => lastConsumed = Some(c))
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
      "droppedSubRecords" -> totals.droppedSubRecords.toString,
      "consumerMode" -> (if (consumers.isEmpty) "polling" else "efo"),
      "consumerName" -> consumers.distinct.mkString(","),
      "subscriptionsRenewed" -> totals.renewed.toString,
      "subscriptionsFailed" -> totals.failed.toString)
    ForeignMetrics.withTheirNames(ours, open + closed, streams, consumers.distinct.size)
  }
}
