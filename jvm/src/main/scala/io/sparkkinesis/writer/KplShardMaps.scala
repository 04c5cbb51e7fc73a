package io.sparkkinesis.writer

import java.util.concurrent.CompletableFuture

import scala.collection.mutable

import software.amazon.awssdk.services.kinesis.KinesisAsyncClient

import io.sparkkinesis.aws.RetryPolicy

/** Where a KPL writer packs a record: the shard it goes to now, and the unit of order its key belongs to. */
private[writer] final case class KplRoute(shard: String, unit: String)

/**
 * A KPL writer's view of the shards of its target streams, per stream:
 *  - the shard map records are packed by: the executor's ([[ShardMap.forStream]]) when the writer first writes
 *    there, listed again ([[listAgain]], off the writer's lock, then [[install]]) when a record lands in a shard the
 *    map did not predict (a reshard);
 *  - the map the writer began with, whose shards stay its units of order for its whole life: a key belongs to one
 *    unit however the stream is resharded meanwhile, so with `ordering=perKey` (at most one record per unit in
 *    flight) a key's records never travel in two units at once. After a split a unit spans the children; after a
 *    merge the merged shard takes the records of two units.
 * Used under the writer's lock only.
 */
private[writer] final class KplShardMaps(client: KinesisAsyncClient, streams: SinkStreams, listing: RetryPolicy) {
  private val current = mutable.HashMap.empty[Int, ShardMap]
  private val first = mutable.HashMap.empty[Int, ShardMap]

  /** The shard map records of `stream` are packed by now. */
  def apply(stream: Int): ShardMap =
    current.getOrElseUpdate(stream, {
        val map = ShardMap.forStream(client, streams(stream), listing)
        first.getOrElseUpdate(stream, map)
        map
      })

  def route(stream: Int, hashKey: BigInt): KplRoute = {
    val map = apply(stream)
    KplRoute(map.shardOf(hashKey), first(stream).shardOf(hashKey))
  }

  /** Lists `stream` again, off the caller's thread (the writer's lock is not held while it waits). */
  def listAgain(stream: Int): CompletableFuture[ShardMap] = {
    val ref = streams(stream)
    CompletableFuture.supplyAsync(() => ShardMap.load(client, ref, listing), ShardMap.listings)
  }

  /** Packs records of `stream` by `map` from now on, as will the executor's next writers. */
  def install(stream: Int, map: ShardMap): Unit = {
    apply(stream)
    current(stream) = map
    ShardMap.keep(client, streams(stream), map)
  }
}
