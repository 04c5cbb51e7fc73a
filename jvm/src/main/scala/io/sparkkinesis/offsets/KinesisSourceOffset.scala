package io.sparkkinesis.offsets

import org.apache.spark.sql.connector.read.streaming.Offset

/**
 * The source's offset: every known shard's position. Immutable; written to Spark's offset log as JSON through
 * [[OffsetJson]] (one versioned codec), so the exact range of every micro-batch is fixed before it runs.
 *
 * `firsts`: for a shard whose range up to this offset began at a position not tied to a record (trim horizon, a
 * timestamp), the sequence number of the range's first record. A replay reads the range from that record, so
 * records of it that retention trimmed since are found missing rather than silently left out.
 */
private[sparkkinesis] final case class KinesisSourceOffset(
    shards: Map[ShardKey, ShardPosition],
    firsts: Map[ShardKey, String] = Map.empty) extends Offset {
  // Written once: Spark compares offsets by their JSON, on every trigger, and a quiet query's trigger comes every
  // 10 ms with the same offset (with thousands of shards, writing it each time was most of a quiet query's CPU).
  private lazy val written = OffsetJson.write(this)
  override def json(): String = written

  /**
   * This offset, the end of a range that starts at `from`, with the first record of each shard's range that began
   * at a position not tied to a record (`firstOf`, from the prefetch reports) and no other. `firstOf` is asked once
   * per shard read to a record: with thousands of shards it must answer in constant time (a map's `get`, not a
   * search through the reports, which would make a round quadratic in shards).
   */
  def pinningFirsts(from: KinesisSourceOffset, firstOf: ShardKey => Option[String]): KinesisSourceOffset =
    copy(firsts = shards.iterator.flatMap {
      case (k, ShardPosition.After(_)) if from.shards.get(k).exists(ShardPosition.startsUntied) =>
        firstOf(k).map(k -> _)
      case _ => None
    }.toMap)

  /**
   * [[pinningFirsts]] with the first records as a map (shard -> sequence number of its range's first record), built
   * once from a round's reports: `reports.flatMap(r => r.first.map(f => r.key -> f.sequenceNumber)).toMap`.
   */
  def pinningFirstsOf(from: KinesisSourceOffset, firsts: Map[ShardKey, String]): KinesisSourceOffset =
    pinningFirsts(from, k => firsts.get(k))

  def updated(key: ShardKey, position: ShardPosition): KinesisSourceOffset =
    copy(shards = shards.updated(key, position))
}
