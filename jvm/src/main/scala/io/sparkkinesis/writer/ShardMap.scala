package io.sparkkinesis.writer

import software.amazon.awssdk.services.kinesis.KinesisAsyncClient

import io.sparkkinesis.aws.{RetryPolicy, ShardListing, StreamRef}
import io.sparkkinesis.errors.KinesisErrors
import io.sparkkinesis.kpl.{HashKeyRange, UserRecord}
import io.sparkkinesis.runtime.DaemonThreads

/**
 * The open shards of a stream by hash key range, to tell which shard a record goes to (Kinesis routes a
 * record by its explicit hash key, else by the MD5 of its partition key read as a 128-bit number), and the hash key
 * range of every shard listed, closed ones too, to tell whether a record landed where it belongs.
 */
private[sparkkinesis] final class ShardMap private (
    starts: Array[BigInt],
    shardIds: Array[String],
    ranges: Map[String, HashKeyRange]) {

  /** The shard that owns `hashKey`. */
  def shardOf(hashKey: BigInt): String = {
    var lo = 0
    var hi = starts.length - 1
    while (lo < hi) { // the last shard whose range starts at or below hashKey
      val mid = (lo + hi + 1) >>> 1
      if (starts(mid) <= hashKey) lo = mid else hi = mid - 1
    }
    shardIds(lo)
  }

  def shardCount: Int = shardIds.length

  /** Whether `shardId` is one of the open shards. */
  def isOpen(shardId: String): Boolean = openIds.contains(shardId)
  private lazy val openIds = shardIds.toSet

  /** Whether the listing had `shardId`, open or closed. */
  def lists(shardId: String): Boolean = ranges.contains(shardId)

  /**
   * Whether `record` lies in the hash key range of `shardId`, by the rule the source keeps user records of an
   * aggregate by (`dropOutOfRangeSubRecords`, as the KCL does); None for a shard the listing did not have.
   */
  def holds(shardId: String, record: UserRecord): Option[Boolean] =
    ranges.get(shardId).map(_.holds(record.partitionKey, record.explicitHashKey))
}

private[sparkkinesis] object ShardMap {

  /** How long a listing serves the writers of this JVM before the stream is listed again. */
  val ExpiryMillis = 30000L
  private val cache = new StreamCache[ShardMap](ExpiryMillis)

  /**
   * The stream's shard map for the writers of this executor: listed at most once per `ExpiryMillis` per client
   * (that is, per connection) and stream, rather than once per task.
   */
  def forStream(
      client: KinesisAsyncClient,
      stream: StreamRef,
      policy: RetryPolicy = RetryPolicy.Default,
      nowMillis: Long = System.currentTimeMillis()): ShardMap =
    cache.get(client, stream, nowMillis)(load(client, stream, policy))

  /**
   * Keeps `map`, listed again (a record landed in a shard the map did not predict: the stream was resharded), for the
   * writers of this executor in place of the stale one.
   */
  def keep(
      client: KinesisAsyncClient,
      stream: StreamRef,
      map: ShardMap,
      nowMillis: Long = System.currentTimeMillis()): ShardMap =
    cache.put(client, stream, nowMillis, map)

  /**
   * Where writers list a stream again after a reshard ([[KplShardMaps.listAgain]]), so that no writer's lock is held
   * while the call waits: daemon threads, made as listings need them (rarely: once per reshard a writer meets) and
   * gone after a minute unused.
   */
  private[writer] val listings: java.util.concurrent.ExecutorService =
    java.util.concurrent.Executors.newCachedThreadPool(DaemonThreads.factory("kinesis-sink-shard-listing",
        numbered = true))

  def hashKey(partitionKey: String, explicitHashKey: String): BigInt =
    if (explicitHashKey != null) BigInt(explicitHashKey)
    else HashKeyRange.ofPartitionKey(partitionKey)

  /** Lists the stream's shards: the open ones (without an ending sequence number) to route by, all for their ranges. */
  def load(client: KinesisAsyncClient, stream: StreamRef, policy: RetryPolicy = RetryPolicy.Default): ShardMap = {
    val listed = ShardListing.list(stream, policy)(request => client.listShards(request).join())
    val open = listed.filterNot(_.isClosed).map(s => s.startingHashKey -> s.shardId).distinct.sortBy(_._1)
    if (open.isEmpty)
      throw KinesisErrors.serviceError("ListShards", stream.toString, new IllegalStateException("no open shard"))
    new ShardMap(open.map(_._1).toArray, open.map(_._2).toArray,
      listed.map(s => s.shardId -> HashKeyRange(s.startingHashKey, s.endingHashKey)).toMap)
  }
}
