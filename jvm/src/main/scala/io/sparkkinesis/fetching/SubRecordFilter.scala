package io.sparkkinesis.fetching

import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.atomic.AtomicLong

import io.sparkkinesis.aws.{AwsConnection, RetryPolicy, ShardListing, StreamRef}
import io.sparkkinesis.kpl.{HashKeyRange, UserRecord}

/**
 * Which user records of a shard's KPL aggregates a read keeps. With `dropOutOfRangeSubRecords` (the default), as the
 * KCL does: those whose hash key (explicit, else the MD5 of the partition key) lies in the hash key range of the shard
 * the aggregate was read from. The others are copies a producer put in the wrong shard (an aggregate routes by its
 * first record's key; after a split, a writer whose shard map predates it packs keys of both children together), and
 * a producer that follows the KCL's rule (our sink, the KPL) has sent them again to the shard they belong to. Plain
 * records are never dropped: Kinesis put them in their own shard. A dropped record still has its place in the shard:
 * the positions of the records kept around it are those of an unfiltered read, so offsets and replays are unchanged.
 *
 * The shard's range is looked up once, when the filter meets its first aggregate ([[ShardRanges]]), so a stream
 * without aggregates costs nothing. Counts what it drops (the source's `droppedSubRecords` metric).
 */
private[sparkkinesis] final class SubRecordFilter(range: () => Option[HashKeyRange]) {
  private lazy val known = range()
  private val droppedCount = new AtomicLong

  /** Whether a user record of an aggregate read from the filter's shard is kept; counts it when not. */
  def keeps(u: UserRecord): Boolean = {
    val kept = known.forall(_.holds(u.partitionKey, u.explicitHashKey))
    if (!kept) droppedCount.incrementAndGet()
    kept
  }

  /** User records dropped so far. */
  def dropped: Long = droppedCount.get()
}

private[sparkkinesis] object SubRecordFilter {

  /** Keeps every user record (`dropOutOfRangeSubRecords=false`, and fetchers tests build by hand). */
  val KeepAll: SubRecordFilter = new SubRecordFilter(() => None)

  /** The filter of one shard: its range looked up (once) when the first aggregate is met. */
  def forShard(connection: AwsConnection, stream: StreamRef, shardId: String, enabled: Boolean): SubRecordFilter =
    if (!enabled) KeepAll else new SubRecordFilter(() => ShardRanges.of(connection, stream, shardId))
}

/**
 * The hash key ranges of the shards executors read, per JVM. A shard's range never changes (a reshard makes new
 * shards), so an entry never goes stale: a shard not known yet lists its stream once (ListShards, as the driver's
 * shard discovery does, through the same client and retry policy as the fetchers), which also gives the range of
 * every other shard of the stream. A shard the listing does not have (gone since) has no range: nothing is dropped.
 */
private[sparkkinesis] object ShardRanges {
  private val MaxEntries = 200000
  private val known = new ConcurrentHashMap[(AwsConnection, StreamRef, String), HashKeyRange]()

  def of(connection: AwsConnection, stream: StreamRef, shardId: String): Option[HashKeyRange] =
    Option(known.get((connection, stream, shardId))).orElse {
      val listed = ShardListing.list(stream, RetryPolicy.Default.on(connection))(request =>
        ShardFetchers.clients(connection).listShards(request))
      if (known.size() + listed.size > MaxEntries) known.clear() // many streams over a long life: start again
      listed.foreach(s => known.put((connection, stream, s.shardId), HashKeyRange(s.startingHashKey, s.endingHashKey)))
      Option(known.get((connection, stream, shardId)))
    }
}
