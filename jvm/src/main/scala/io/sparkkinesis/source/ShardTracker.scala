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
 *
 * Where the service can ask for one shard's children alone (`listChildren`: DynamoDB's DescribeStream with the
 * `CHILD_SHARDS` filter, `fetching.ShardService.findsChildren`), a shard read to its end between two listings is not
 * followed by a listing of the whole stream: its children are looked up, once, and added as a listing would add them
 * (readable once it has ended). The query's first listing and the periodic ones stay whole listings, and so remain
 * what finds a shard gone; a `force`d refresh looks up the children of the ended shards that have none known yet
 * (a child the service had not listed yet when its parent was looked up).
 */
private[sparkkinesis] final class ShardTracker(
    listShards: (StreamRef, RetryPolicy) => Seq[ShardDescription],
    streams: Seq[StreamRef],
    intervalMillis: Long,
    failOnDataLoss: Boolean = true,
    policy: RetryPolicy = RetryPolicy.Default,
    listChildren: Option[(StreamRef, String, RetryPolicy) => Seq[ShardDescription]] = None) extends Logging {
  private var lastListing = 0L
  private var parents = Map.empty[ShardKey, Seq[ShardKey]]
  private var closed = Set.empty[ShardKey]

  /** Shards whose children are known: closed in the last whole listing, or whose children were looked up since. */
  private var childrenKnown = Set.empty[ShardKey]

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
    childrenKnown = closed
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
    listChildren match {
      case Some(lookup) if now - lastListing < intervalMillis => withChildren(offset, lookup, force)
      case _ if !force && now - lastListing < intervalMillis => offset
      case _ => relisted(offset, (if (force) None else takeAhead(offset, now)).getOrElse(list()))
    }

  /** `offset` in step with the whole listing `listed`: shards gone dropped (or data loss), new ones added. */
  private def relisted(offset: KinesisSourceOffset, listed: Map[ShardKey, ShardDescription]): KinesisSourceOffset = {
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
      withNew(kept, added)
    }
  }

  /**
   * `offset` with the children of its ended shards whose children are not known yet, looked up by `lookup` (when
   * `force`d, also of those with none known: see the class comment).
   */
  private def withChildren(
      offset: KinesisSourceOffset,
      lookup: (StreamRef, String, RetryPolicy) => Seq[ShardDescription],
      force: Boolean): KinesisSourceOffset = {
    lazy val withAChild = parents.values.flatten.toSet
    val ended = offset.shards.toSeq.collect {
      case (k, ShardPosition.Ended) if !childrenKnown.contains(k) || (force && !withAChild.contains(k)) => k
    }.sorted
    if (ended.isEmpty) offset
    else {
      // A shard of a stream the query no longer names has no lookup: the plan reports that stream itself.
      val found = ended.flatMap { k =>
        streams.find(_.name == k.stream).toSeq.flatMap(lookup(_, k.shardId, policy)).filter(
          _.parents.contains(k.shardId))
          .map(d => ShardKey(k.stream, d.shardId) -> d)
      }.toMap
      parents ++= found.map { case (k, d) => k -> d.parents.map(p => ShardKey(k.stream, p)) }
      closed ++= found.collect { case (k, d) if d.isClosed => k }
      childrenKnown ++= ended
      val added = found.keys.filterNot(offset.shards.contains).toSeq.sorted
      if (added.nonEmpty)
        logInfo(s"Shards ${ended.map(_.shardId).mkString(", ")} ended; their children " +
          s"${added.map(_.shardId).mkString(", ")} were looked up without listing the stream")
      if (added.isEmpty) offset else withNew(offset, added)
    }
  }

  /** `offset` with `added` shards, to be read from their trim horizon. */
  private def withNew(offset: KinesisSourceOffset, added: Iterable[ShardKey]): KinesisSourceOffset =
    added.foldLeft(offset)((o, k) => o.updated(k, ShardPosition.NotStarted(StartPosition.TrimHorizon)))

  /** The shard's parents, by the last listing (none for a shard the stream was created with). */
  def parentsOf(key: ShardKey): Seq[ShardKey] = parents.getOrElse(key, Nil)

  /** When the next listing is due (the last one plus `intervalMillis`). */
  def nextListingMillis: Long = lastListing + intervalMillis

  /** Whether the last listing (or lookup of children) said the shard is closed (it has an ending sequence number). */
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
