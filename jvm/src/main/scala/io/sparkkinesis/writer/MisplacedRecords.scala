package io.sparkkinesis.writer

import java.util.concurrent.{CompletableFuture, CompletionException, TimeUnit}

import scala.collection.mutable

import io.sparkkinesis.aws.RetryPolicy
import io.sparkkinesis.errors.KinesisErrors
import io.sparkkinesis.kpl.Kpl

/**
 * What to send after a KPL record landed in a shard other than the one it was packed for:
 *  - `first`: its user records that the landing shard's hash range does not hold, packed again, to go before
 *    anything else of the record's unit of order (the KCL drops the misplaced copies; these are the ones it keeps);
 *  - `more`: aggregates completed by packing again the records in progress for shards that closed;
 *  - `resentRecords`: how many user records `first` carries;
 *  - `later`: the shard listing does not show where the record landed yet, so what to send again is not known: the
 *    record is to be handed back when the next listing is due, at `lookAgainNanos`, or when the one under way ends
 *    (`Long.MaxValue`: its end wakes the sender), its unit of order held meanwhile. `more` may still carry
 *    aggregates to send now.
 */
private[writer] final case class Relocation(
    first: Seq[PutEntry],
    more: Seq[PutEntry],
    resentRecords: Int,
    later: Boolean = false,
    lookAgainNanos: Long = 0L)

private[writer] object Relocation {
  val Nothing: Relocation = Relocation(Nil, Nil, 0)
}

/**
 * With `aggregation=kpl`, PutRecords names the shard each record landed in. One other than the shard it was packed
 * for means the writer's shard map was made before a reshard: a record of one key routes by that key and is always
 * right, but an aggregate routes by its first record's key, and after a split its other records may belong to the
 * other child. Then the map is listed again (unless the map now in use already knows the landing shard and routes
 * elsewhere: the record was packed before the last listing), and the aggregate's records outside the landing
 * shard's range are sent again. After a merge the merged shard holds every key of its parents' aggregates: nothing
 * goes again.
 *
 * The listing runs off the writer's thread and lock ([[KplShardMaps.listAgain]]); the record waits for it
 * ([[Relocation.later]]). ListShards may answer with the shards from before the reshard for a while after it: while
 * a listing does not show the shard the record landed in (or still shows the shard it was packed for open), the
 * stream is listed again after a pause, under the sink's retry policy (`maxRetries` listings, `maxRetryDuration`),
 * then the write fails with [KINESIS_SHARD_LISTING_BEHIND]: sending the records again by a map that cannot place
 * them would put them in the same wrong shard, round after round. At most one listing per stream is under way or
 * due, whatever the number of records that wait for it. Used under the writer's lock only.
 */
private[writer] final class MisplacedRecords(
    maps: KplShardMaps,
    packer: KplRecordPacker,
    policy: RetryPolicy,
    streamName: Int => String,
    wake: () => Unit) {

  /** A stream whose listing fell behind a record's landing: the listing under way, or when the next is due. */
  private final class Behind(val sinceNanos: Long) {
    var listing: CompletableFuture[ShardMap] = _
    var listings = 0
    var nextNanos: Long = sinceNanos
  }
  private val behind = mutable.HashMap.empty[Int, Behind]

  def landed(entry: PutEntry, shardId: String, nowNanos: Long = System.nanoTime()): Relocation = {
    val known = maps(entry.stream)
    if (places(known, entry, shardId)) relocate(entry, shardId, known, Nil)
    else {
      val state = behind.getOrElseUpdate(entry.stream, new Behind(nowNanos))
      if (state.listing == null) {
        if (nowNanos >= state.nextNanos) {
          state.listing = maps.listAgain(entry.stream)
          state.listing.whenComplete((_: ShardMap, _: Throwable) => wake())
          Relocation(Nil, Nil, 0, later = true, lookAgainNanos = Long.MaxValue)
        } else Relocation(Nil, Nil, 0, later = true, lookAgainNanos = state.nextNanos)
      } else if (!state.listing.isDone) Relocation(Nil, Nil, 0, later = true, lookAgainNanos = Long.MaxValue)
      else {
        val map =
          try state.listing.join()
          catch { case e: CompletionException if e.getCause != null => throw e.getCause }
        state.listing = null
        state.listings += 1
        maps.install(entry.stream, map)
        val more = packer.repackStale(entry.stream)
        if (places(map, entry, shardId)) {
          behind -= entry.stream
          relocate(entry, shardId, map, more)
        } else {
          val waited = nowNanos - state.sinceNanos
          if (policy.exhausted(state.listings, waited))
            throw KinesisErrors.shardListingBehind(streamName(entry.stream), shardId, entry.packedFor,
              state.listings, TimeUnit.NANOSECONDS.toMillis(waited))
          state.nextNanos = nowNanos + TimeUnit.MILLISECONDS.toNanos(policy.delayMillis(state.listings))
          Relocation(Nil, more, 0, later = true, lookAgainNanos = state.nextNanos)
        }
      }
    }
  }

  /** Whether `map` knows where `entry` landed: it lists the landing shard, and no longer has its own shard open. */
  private def places(map: ShardMap, entry: PutEntry, shardId: String): Boolean =
    map.lists(shardId) && !map.isOpen(entry.packedFor)

  private def relocate(entry: PutEntry, shardId: String, map: ShardMap, more: Seq[PutEntry]): Relocation =
    if (entry.userRecords <= 1) Relocation(Nil, more, 0)
    else {
      val records = Kpl.deaggregate(entry.data, entry.partitionKey).getOrElse(
        throw new IllegalStateException(s"${entry.position} is not a KPL aggregate"))
      val outside = records.filterNot(r => map.holds(shardId, r).getOrElse(false))
      if (outside.isEmpty) Relocation(Nil, more, 0)
      else Relocation(packer.packAlone(entry.stream, outside, s"${entry.position} (sent again: it landed in $shardId)"),
        more, outside.size)
    }
}
