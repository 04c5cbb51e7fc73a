package io.sparkkinesis.source

import java.util.concurrent.ScheduledFuture
import java.util.concurrent.atomic.AtomicReference

import scala.util.control.NonFatal

import org.apache.spark.internal.Logging

import io.sparkkinesis.aws.{RetryPolicy, ShardDescription, ShardListing, StreamRef}
import software.amazon.awssdk.services.kinesis.KinesisClient
import io.sparkkinesis.errors.KinesisErrors
import io.sparkkinesis.offsets.{KinesisSourceOffset, ShardKey, ShardPosition, StartPosition}

/**
 * Driver-side shard discovery and lineage. Lists the shards of every stream at most every `intervalMillis`
 * (`listShards`: the source's `fetching.ShardService`, ListShards or DynamoDB's DescribeStream), and
 * keeps the offset in step with the listing:
 *  - a shard that appeared is added, to be read from its trim horizon;
 *  - a shard read to its end (`Ended`) that the listing no longer has (retention removed it) is dropped: nothing
 *    can bring it back, so the offset no longer needs it;
 *  - a shard the listing no longer has but that was not read to its end lost records to retention: that is data
 *    loss, which fails the query (`failOnDataLoss`), or is logged, counted in `lostShards` and the shard dropped.
 * It also says which shards may be read now: a child only once each parent it has in the offset has been read to
 * its end in an offset already in Spark's offset log, so per partition key order holds across splits and merges.
 *
 * A real-time query lists ahead ([[listAhead]]): a daemon thread lists every `intervalMillis`, and a batch's plan
 * that finds a listing due takes the latest of those instead of calling ListShards between two batches, where
 * records wait for the call. It takes one only when it is fresh (younger than `intervalMillis`, newer than the last
 * listing used) and names every shard of the offset: anything else (a shard gone, or a child the readers went into
 * after the listing was taken) is decided by a listing taken then, as is a listing `force`d after a shard ended.
 */
private[sparkkinesis] final class ShardTracker(
    listShards: (StreamRef, RetryPolicy) => Seq[ShardDescription],
    streams: Seq[StreamRef],
    intervalMillis: Long,
    failOnDataLoss: Boolean = true,
    policy: RetryPolicy = RetryPolicy.Default) extends Logging {
  private var lastListing = 0L
  private var parents = Map.empty[ShardKey, Seq[ShardKey]]
  private var closed = Set.empty[ShardKey]

  /** Shards dropped from the offset unread to their end because the listing no longer had them. */
  @volatile var lostShards = 0L

  /** The latest listing taken ahead, and when it was begun. */
  private val ahead = new AtomicReference[Option[(Map[ShardKey, ShardDescription], Long)]](None)
  private var aheadTask: Option[ScheduledFuture[_]] = None

  def list(): Map[ShardKey, ShardDescription] = {
    val shards = fetch()
    adopt(shards, System.currentTimeMillis())
  }

  private def fetch(): Map[ShardKey, ShardDescription] =
    streams.flatMap { s =>
      listShards(s, policy).map(d => ShardKey(s.name, d.shardId) -> d)
    }.toMap

  private def adopt(shards: Map[ShardKey, ShardDescription], at: Long): Map[ShardKey, ShardDescription] = {
    parents = shards.map { case (k, d) => k -> d.parents.map(p => ShardKey(k.stream, p)) }
    closed = shards.collect { case (k, d) if d.isClosed => k }.toSet
    lastListing = at
    shards
  }

  /** From now on, lists every `intervalMillis` on the driver's listing thread (see the class comment). */
  def listAhead(): Unit = synchronized {
    if (aheadTask.isEmpty) aheadTask = Some(ListingTimer.every(intervalMillis) { () =>
      val begun = System.currentTimeMillis()
      try ahead.set(Some((fetch(), begun)))
      catch { case NonFatal(e) => logDebug(s"A shard listing taken ahead failed; the next plan lists itself: $e") }
    })
  }

  /** Whether a listing taken ahead is at hand (for tests). */
  private[source] def aheadDone: Boolean = ahead.get.isDefined

  /** Stops listing ahead. */
  def stopListingAhead(): Unit = synchronized {
    aheadTask.foreach(_.cancel(false))
    aheadTask = None
  }

  /** The listing taken ahead, when it may stand for one taken `now` for `offset` (see the class comment). */
  private def takeAhead(offset: KinesisSourceOffset, now: Long): Option[Map[ShardKey, ShardDescription]] =
    ahead.get.collect {
      case (shards, begun)
          if begun >= lastListing && now - begun < intervalMillis &&
            offset.shards.keys.forall(shards.contains) =>
        adopt(shards, begun)
    }

  /** `offset` brought in step with a fresh listing, when one is due or `force`d (see the class comment). */
  def refresh(offset: KinesisSourceOffset, now: Long, force: Boolean = false): KinesisSourceOffset =
    if (!force && now - lastListing < intervalMillis) offset
    else {
      val listed = (if (force) None else takeAhead(offset, now)).getOrElse(list())
      val gone = offset.shards.filter { case (k, _) => !listed.contains(k) }
      gone.collect { case (k, p) if p != ShardPosition.Ended => k -> p }.toSeq.sortBy(_._1).foreach { case (k, p) =>
        val detail = s"the shard is no longer listed (its records expired with the stream's retention period) " +
          s"but the query had read it only up to ${ShardPosition.describe(p)}"
        if (failOnDataLoss) throw KinesisErrors.dataLoss(s"shard ${k.shardId} of stream '${k.stream}'", detail)
        logWarning(s"Data loss on shard ${k.shardId} of stream '${k.stream}': $detail. Going on without it " +
          "(failOnDataLoss=false).")
        lostShards += 1
      }
      val added = listed.keys.filterNot(offset.shards.contains)
      // Nothing gone and nothing new: the offset itself, its pinned first records with it. A copy without them
      // would differ from Spark's start and make Spark run a batch with nothing in it.
      if (gone.isEmpty && added.isEmpty) offset
      else {
        val kept = offset.copy(shards = offset.shards -- gone.keys, firsts = offset.firsts -- gone.keys)
        added.foldLeft(kept)((o, k) => o.updated(k, ShardPosition.NotStarted(StartPosition.TrimHorizon)))
      }
    }

  /** The shard's parents, by the last listing (none for a shard the stream was created with). */
  def parentsOf(key: ShardKey): Seq[ShardKey] = parents.getOrElse(key, Nil)

  /** When the next listing is due (the last one plus `intervalMillis`). */
  def nextListingMillis: Long = lastListing + intervalMillis

  /** Whether the last listing said the shard is closed (it has an ending sequence number). */
  def isClosed(key: ShardKey): Boolean = closed.contains(key)

  /**
   * Shards ended in `offset` that a shard not ended yet has as a parent (by the last listing): with them, a real-time
   * task that reads one parent of a merged shard to its end knows whether the other parent ended before.
   */
  def endedParents(offset: KinesisSourceOffset): Set[ShardKey] =
    offset.shards.toSeq.collect { case (k, p) if p != ShardPosition.Ended => parentsOf(k) }.flatten
      .filter(parent => offset.shards.get(parent).contains(ShardPosition.Ended)).toSet

  // The last answer of `readable`, for the offset and listing it was given for: a quiet query asks every trigger.
  private var lastReadable: Option[(KinesisSourceOffset, Map[ShardKey, Seq[ShardKey]], Seq[ShardKey])] = None

  /** Shards of `offset` that may be read now (not ended, and every known parent ended in `offset`). */
  def readable(offset: KinesisSourceOffset): Seq[ShardKey] = lastReadable match {
    case Some((o, p, answer)) if (o eq offset) && (p eq parents) => answer
    case _ =>
      val answer = offset.shards.toSeq.collect {
        case (k, p)
            if p != ShardPosition.Ended &&
              parentsOf(k).forall(parent => offset.shards.get(parent).forall(_ == ShardPosition.Ended)) =>
          k
      }.sorted
      lastReadable = Some((offset, parents, answer))
      answer
  }
}

private[sparkkinesis] object ShardTracker {

  /** Kinesis's ListShards through `client` (tests give a fake one). */
  def listShards(client: () => KinesisClient): (StreamRef, RetryPolicy) => Seq[ShardDescription] =
    (stream, policy) => ShardListing.list(stream, policy)(client().listShards)
}
