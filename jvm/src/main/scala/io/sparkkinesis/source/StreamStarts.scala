package io.sparkkinesis.source

import org.apache.spark.internal.Logging
import org.apache.spark.sql.SparkSession

import io.sparkkinesis.errors.KinesisErrors
import io.sparkkinesis.offsets.{KinesisSourceOffset, ShardKey, ShardPosition, StartPosition}

/**
 * Where a streaming read starts: the query's first offset, and the streams `streamName` names that its checkpoint
 * never read. Used by the stream on the stream execution thread only.
 */
private[sparkkinesis] final class StreamStarts(
    options: SourceOptions,
    checkpointLocation: String,
    tracker: ShardTracker)
  extends Logging {

  /**
   * The query's first offset, read from (or written to) the checkpoint once per run: Spark asks for it on every
   * trigger until the first batch, which for a quiet stream read from `latest` would otherwise be a checkpoint
   * read per trigger (requests to S3 or HDFS).
   */
  lazy val first: KinesisSourceOffset =
    new InitialOffsetStore(checkpointLocation, SparkSession.active.sparkContext.hadoopConfiguration).getOrCreate {
      val listed = tracker.list().keySet
      options.shardStarts.checkKnown(listed)
      startingAt(listed)
    }

  /**
   * New shards at their start: their `initialShardPositions` entry, else `initialPosition`, with `latest` pinned
   * to now (written to the checkpoint with this offset, so a crash before the first commit cannot move it).
   */
  private def startingAt(shards: Iterable[ShardKey]): KinesisSourceOffset = {
    val start = options.initialPosition.getOrElse(StartPosition.Latest) match {
      case StartPosition.Latest => StartPosition.AtTimestamp(System.currentTimeMillis())
      case other => other
    }
    KinesisSourceOffset(shards.map { k =>
      k -> (ShardPosition.NotStarted(options.shardStarts.get(k).getOrElse(start)): ShardPosition)
    }.toMap)
  }

  /** Whether this run has compared the checkpoint's streams with `streamName` yet. */
  private var streamsReconciled = false

  /**
   * `offset` (from the checkpoint) with the streams `streamName` names now, once per run: a stream the checkpoint
   * never read joins at its start position; a stream it read that is no longer named fails the query with
   * [KINESIS_STREAMS_CHANGED], since its positions would otherwise be dropped without a word.
   */
  def withNamedStreams(offset: KinesisSourceOffset): KinesisSourceOffset =
    if (streamsReconciled) offset
    else {
      checkNoStreamRemoved(offset)
      val known = offset.shards.keySet.map(_.stream)
      val added = options.streams.filterNot(s => known.contains(s.name))
      val joined = if (added.isEmpty) offset
      else {
        val listed = tracker.list().keySet.filter(k => !known.contains(k.stream))
        logInfo(s"Streams new to the checkpoint start at their initial position: ${added.mkString(", ")}")
        KinesisSourceOffset(offset.shards ++ startingAt(listed).shards)
      }
      streamsReconciled = true
      joined
    }

  /** Fails with [KINESIS_STREAMS_CHANGED] when `offset` reads a stream `streamName` no longer names. */
  def checkNoStreamRemoved(offset: KinesisSourceOffset): Unit = {
    val removed = offset.shards.keySet.map(_.stream).diff(options.streamsByName.keySet)
    if (removed.nonEmpty) throw KinesisErrors.streamsChanged(removed.toSeq.sorted, options.streams.map(_.name))
  }
}
