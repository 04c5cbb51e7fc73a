package io.sparkkinesis.source

import scala.collection.mutable
import io.sparkkinesis.compat.CollectionConverters._

import org.scalatest.funsuite.AnyFunSuite

import io.sparkkinesis.aws.{DynamoDbStreams, StreamRef}
import io.sparkkinesis.offsets.{KinesisSourceOffset, RecordPosition, ShardKey, ShardPosition, StartPosition}
import software.amazon.awssdk.services.kinesis.KinesisClient
import software.amazon.awssdk.services.kinesis.model._
import software.amazon.awssdk.services.dynamodb.{model => ddb}
import software.amazon.awssdk.services.dynamodb.streams.DynamoDbStreamsClient

/** A ListShards-only fake: a stream with `shards` shards served in pages, checking the API's paging rules. */
final class PagedListShards(@volatile var shardsOf: Map[String, Seq[Shard]], pageSize: Int) extends KinesisClient {
  val requests = mutable.ArrayBuffer.empty[ListShardsRequest]

  /** The thread of each request. */
  val threads = mutable.ArrayBuffer.empty[String]
  override def serviceName(): String = "kinesis"
  override def close(): Unit = ()
  override def listShards(r: ListShardsRequest): ListShardsResponse = synchronized {
    requests += r
    threads += Thread.currentThread().getName
    val (stream, from) = Option(r.nextToken()) match {
      case Some(token) =>
        require(r.streamName() == null && r.streamARN() == null, "NextToken must not come with StreamName or StreamARN")
        val at = token.lastIndexOf('#')
        (token.take(at), token.drop(at + 1).toInt)
      case None => (Option(r.streamName()).getOrElse(r.streamARN().split("/").last), 0)
    }
    val all =
      shardsOf.getOrElse(stream, throw ResourceNotFoundException.builder().message(s"no stream $stream").build())
    val page = all.slice(from, from + math.min(pageSize, Option(r.maxResults()).map(_.intValue).getOrElse(pageSize)))
    val next = from + page.size
    val b = ListShardsResponse.builder().shards(page.asJava)
    if (next < all.size) b.nextToken(s"$stream#$next")
    b.build()
  }
}

object PagedListShards {
  def shard(id: Int, parents: Seq[Int] = Nil, closed: Boolean = false): Shard = {
    val b = Shard.builder().shardId(f"shardId-$id%012d")
      .hashKeyRange(HashKeyRange.builder().startingHashKey("0").endingHashKey("1").build())
      .sequenceNumberRange {
        val s = SequenceNumberRange.builder().startingSequenceNumber("1")
        if (closed) s.endingSequenceNumber("100")
        s.build()
      }
    parents.headOption.foreach(p => b.parentShardId(f"shardId-$p%012d"))
    parents.drop(1).headOption.foreach(p => b.adjacentParentShardId(f"shardId-$p%012d"))
    b.build()
  }
}

/**
 * A DescribeStream-only DynamoDB Streams fake that answers every shard whatever the request's ShardFilter, as moto
 * does; it keeps each request's filter.
 */
final class UnfilteredDescribeStream(@volatile var shards: Seq[ddb.Shard]) extends DynamoDbStreamsClient {
  val filters = mutable.ArrayBuffer.empty[Option[(String, String)]]
  override def serviceName(): String = "dynamodb"
  override def close(): Unit = ()
  override def describeStream(r: ddb.DescribeStreamRequest): ddb.DescribeStreamResponse = synchronized {
    filters += Option(r.shardFilter()).map(f => (f.typeAsString(), f.shardId()))
    ddb.DescribeStreamResponse.builder().streamDescription(ddb.StreamDescription.builder().streamArn(r.streamArn())
        .streamStatus(ddb.StreamStatus.ENABLED).shards(shards.asJava).build()).build()
  }
}

object UnfilteredDescribeStream {
  def shard(id: String, parent: Option[String] = None, closed: Boolean = false): ddb.Shard = {
    val seqs = ddb.SequenceNumberRange.builder().startingSequenceNumber("100")
    if (closed) seqs.endingSequenceNumber("200")
    val b = ddb.Shard.builder().shardId(id).sequenceNumberRange(seqs.build())
    parent.foreach(b.parentShardId)
    b.build()
  }
}

class ShardTrackerSuite extends AnyFunSuite {
  import PagedListShards.shard

  private val orders = StreamRef("orders", None, None)

  test("a stream with 2,500 shards is listed completely across pages, following the paging rules, in bounded time") {
    val fake = new PagedListShards(Map("orders" -> (0 until 2500).map(i => shard(i))), pageSize = 1000)
    val tracker = new ShardTracker(ShardTracker.listShards(() => fake), Seq(orders), intervalMillis = 1000)
    val started = System.nanoTime()
    val listed = tracker.list()
    val offset = KinesisSourceOffset(
      listed.keys.map(k => k -> (ShardPosition.NotStarted(StartPosition.TrimHorizon): ShardPosition)).toMap)
    val readable = tracker.readable(offset)
    val millis = (System.nanoTime() - started) / 1000000
    assert(listed.size == 2500)
    assert(readable.size == 2500)
    assert(fake.requests.size == 3)
    assert(fake.requests.head.streamName() == "orders" && fake.requests.head.nextToken() == null)
    assert(fake.requests.tail.forall(r => r.streamName() == null && r.nextToken() != null))
    assert(millis < 5000, s"listing and planning 2,500 shards took $millis ms")
  }

  test("a stream named by ARN is listed by ARN, and later pages carry only the token") {
    val arn = "arn:aws:kinesis:us-east-1:123456789012:stream/orders"
    val fake = new PagedListShards(Map("orders" -> (0 until 5).map(i => shard(i))), pageSize = 2)
    new ShardTracker(ShardTracker.listShards(() => fake), Seq(StreamRef("orders", Some(arn), Some("us-east-1"))), 1000)
      .list()
    assert(fake.requests.head.streamARN() == arn)
    assert(fake.requests.size == 3)
    assert(fake.requests.tail.forall(r => r.streamARN() == null && r.streamName() == null))
  }

  test("children wait until every parent is Ended in the offset; shards whose parents are unknown are readable") {
    val shards = Seq(shard(0, closed = true), shard(1, closed = true), shard(2, Seq(0)), shard(3, Seq(0)),
      shard(4, Seq(1, 3)), shard(5, Seq(99)))
    val fake = new PagedListShards(Map("orders" -> shards), 1000)
    val tracker = new ShardTracker(ShardTracker.listShards(() => fake), Seq(orders), 1000)
    tracker.list()
    def key(i: Int) = ShardKey("orders", f"shardId-$i%012d")
    val after = ShardPosition.After(RecordPosition("5", 0, lastInAggregate = true))
    val start = KinesisSourceOffset(
      (0 to 5).map(i => key(i) -> (ShardPosition.NotStarted(StartPosition.TrimHorizon): ShardPosition)).toMap)
    assert(tracker.readable(start) == Seq(key(0), key(1), key(5)))
    val parent0Done = start.updated(key(0), ShardPosition.Ended).updated(key(1), after)
    assert(tracker.readable(parent0Done) == Seq(key(1), key(2), key(3), key(5)))
    val mergeHalfDone = parent0Done.updated(key(3), ShardPosition.Ended)
    assert(!tracker.readable(mergeHalfDone).contains(key(4)), "a merge child waits for both parents")
    assert(tracker.readable(mergeHalfDone.updated(key(1), ShardPosition.Ended)).contains(key(4)))
  }

  test("ended parents of shards not ended yet: what a real-time task needs to go on into a merged child") {
    val shards = Seq(shard(0, closed = true), shard(1, closed = true), shard(2, Seq(0)), shard(3, Seq(0)),
      shard(4, Seq(1, 3)))
    val tracker = new ShardTracker(ShardTracker.listShards(() => new PagedListShards(Map("orders" -> shards), 1000)),
      Seq(orders), 1000)
    tracker.list()
    val start = KinesisSourceOffset(
      (0 to 4).map(i => key(i) -> (ShardPosition.NotStarted(StartPosition.TrimHorizon): ShardPosition)).toMap)
    assert(tracker.endedParents(start).isEmpty)
    val parent0Done = start.updated(key(0), ShardPosition.Ended)
    assert(tracker.endedParents(parent0Done) == Set(key(0)))
    val mergeHalfDone = parent0Done.updated(key(3), ShardPosition.Ended)
    assert(tracker.endedParents(mergeHalfDone) == Set(key(0), key(3)), "3 ended, a parent of 4")
    assert(tracker.endedParents(mergeHalfDone.updated(key(2), ShardPosition.Ended)) == Set(key(3)),
      "every child of 0 ended: 0 is no longer needed")
  }

  test("a stream that does not exist fails with a clear error rather than looking finished") {
    val fake = new PagedListShards(Map.empty, 1000)
    val tracker = new ShardTracker(ShardTracker.listShards(() => fake), Seq(orders), 1000)
    val e = intercept[io.sparkkinesis.errors.KinesisException](tracker.list())
    assert(e.getMessage.startsWith("[KINESIS_STREAM_NOT_FOUND] Stream 'orders' does not exist"))
  }

  private def key(i: Int) = ShardKey("orders", f"shardId-$i%012d")
  private val readTo5 = ShardPosition.After(RecordPosition("5", 0, lastInAggregate = true))

  test("a listing that changes nothing keeps the offset as it is, its pinned first records with it") {
    val fake = new PagedListShards(Map("orders" -> Seq(shard(0), shard(1))), 1000)
    val tracker = new ShardTracker(ShardTracker.listShards(() => fake), Seq(orders), intervalMillis = 0)
    // The end of a first batch from trim horizon: each shard's first record pinned (a replay reads from there).
    val offset =
      KinesisSourceOffset(Map(key(0) -> readTo5, key(1) -> readTo5), firsts = Map(key(0) -> "1", key(1) -> "2"))
    val same = tracker.refresh(offset, System.currentTimeMillis(), force = true)
    // A copy without the pins would differ from Spark's start and make Spark run a batch with nothing in it.
    assert(same == offset && same.json() == offset.json())
    // Shard 0 ended and left the listing; its child is new: the pins of the shards that stay are kept.
    fake.shardsOf = Map("orders" -> Seq(shard(1), shard(2, Seq(0))))
    val before = KinesisSourceOffset(Map(key(0) -> ShardPosition.Ended, key(1) -> readTo5), Map(key(1) -> "2"))
    val changed = tracker.refresh(before, System.currentTimeMillis(), force = true)
    assert(changed.shards.keySet == Set(key(1), key(2)) && changed.firsts == Map(key(1) -> "2"))
  }

  test("a shard read to its end is dropped from the offset once retention removes it from the listing") {
    val fake = new PagedListShards(Map("orders" -> Seq(shard(0, closed = true), shard(1, Seq(0)))), 1000)
    val tracker = new ShardTracker(ShardTracker.listShards(() => fake), Seq(orders), intervalMillis = 0)
    val offset = KinesisSourceOffset(Map(key(0) -> ShardPosition.Ended, key(1) -> readTo5))
    assert(tracker.refresh(offset, System.currentTimeMillis()) == offset, "a listed ended shard stays")
    fake.shardsOf = Map("orders" -> Seq(shard(1, Seq(0))))
    val refreshed = tracker.refresh(offset, System.currentTimeMillis())
    assert(refreshed.shards == Map(key(1) -> readTo5))
    assert(tracker.readable(refreshed) == Seq(key(1)))
    assert(tracker.lostShards == 0)
  }

  test("an unfinished shard that retention removed is data loss: the query fails, naming the shard and position") {
    val fake = new PagedListShards(Map("orders" -> Seq(shard(1, Seq(0)))), 1000)
    val tracker = new ShardTracker(ShardTracker.listShards(() => fake), Seq(orders), intervalMillis = 0)
    val offset =
      KinesisSourceOffset(Map(key(0) -> readTo5, key(1) -> ShardPosition.NotStarted(StartPosition.TrimHorizon)))
    val e = intercept[io.sparkkinesis.errors.KinesisException](tracker.refresh(offset, System.currentTimeMillis()))
    assert(e.condition == "KINESIS_DATA_LOSS")
    assert(
      e.getMessage.contains("shardId-000000000000 of stream 'orders'") && e.getMessage.contains("failOnDataLoss=false"))
    assert(e.getMessage.contains("read it only up to after sequence number 5"), e.getMessage)
  }

  test("with failOnDataLoss=false a removed unfinished shard is dropped and counted, and its child becomes readable") {
    val fake = new PagedListShards(Map("orders" -> Seq(shard(1, Seq(0)))), 1000)
    val tracker =
      new ShardTracker(ShardTracker.listShards(() => fake), Seq(orders), intervalMillis = 0, failOnDataLoss = false)
    val offset =
      KinesisSourceOffset(Map(key(0) -> readTo5, key(1) -> ShardPosition.NotStarted(StartPosition.TrimHorizon)))
    val refreshed = tracker.refresh(offset, System.currentTimeMillis())
    assert(refreshed.shards.keySet == Set(key(1)))
    assert(tracker.lostShards == 1)
    assert(tracker.readable(refreshed) == Seq(key(1)))
  }

  private def notStarted(keys: Int*): Map[ShardKey, ShardPosition] =
    keys.map(i => key(i) -> (ShardPosition.NotStarted(StartPosition.TrimHorizon): ShardPosition)).toMap

  /** Waits until the tracker's listing thread has asked for a listing `n` times, and that last listing is done. */
  private def awaitAheadListings(fake: PagedListShards, tracker: ShardTracker, n: Int): Unit = {
    def ahead = fake.synchronized(fake.threads.count(_ == "kinesis-shard-listing"))
    val until = System.currentTimeMillis() + 10000
    while ((ahead < n || !tracker.aheadDone) && System.currentTimeMillis() < until) Thread.sleep(5)
    assert(ahead >= n && tracker.aheadDone, s"the listing thread asked $ahead times in 10 s")
  }

  /** Lists, then waits for the clock to pass the listing's millisecond: a listing begun then is a newer one. */
  private def listedBefore(tracker: ShardTracker, intervalMillis: Long): Unit = {
    tracker.list()
    val listedAt = tracker.nextListingMillis - intervalMillis
    while (System.currentTimeMillis() <= listedAt) Thread.sleep(1)
  }

  test("a tracker that lists ahead lists on the driver's listing thread, and a due plan takes that listing") {
    val fake = new PagedListShards(Map("orders" -> Seq(shard(0), shard(1))), 1000)
    val tracker = new ShardTracker(ShardTracker.listShards(() => fake), Seq(orders), intervalMillis = 60000)
    try {
      listedBefore(tracker, 60000)
      // A split after the plan's last listing: the listing taken ahead sees it.
      fake.shardsOf = Map("orders" -> Seq(shard(0, closed = true), shard(1), shard(2, Seq(0)), shard(3, Seq(0))))
      tracker.listAhead()
      awaitAheadListings(fake, tracker, 1)
      val callerCalls = fake.synchronized(fake.threads.count(_ == Thread.currentThread().getName))
      val refreshed = tracker.refresh(KinesisSourceOffset(notStarted(0, 1)), tracker.nextListingMillis)
      assert(fake.synchronized(fake.threads.count(_ == Thread.currentThread().getName)) == callerCalls,
        "the due plan called ListShards itself")
      assert(refreshed.shards.keySet == Set(key(0), key(1), key(2), key(3)))
      assert(tracker.readable(refreshed) == Seq(key(0), key(1)), "the children wait for their parent")
      assert(tracker.isClosed(key(0)))
    } finally tracker.stopListingAhead()
  }

  test("a listing taken ahead that lacks a shard of the offset, or a forced one, is listed by the plan itself") {
    val fake = new PagedListShards(Map("orders" -> Seq(shard(0), shard(1))), 1000)
    val tracker = new ShardTracker(ShardTracker.listShards(() => fake), Seq(orders), intervalMillis = 60000)
    try {
      listedBefore(tracker, 60000)
      tracker.listAhead()
      awaitAheadListings(fake, tracker, 1)
      // The readers went into a child of a split the listing taken ahead predates: it must not call the child gone.
      fake.shardsOf = Map("orders" -> Seq(shard(0, closed = true), shard(1), shard(2, Seq(0)), shard(3, Seq(0))))
      val offset = KinesisSourceOffset(notStarted(1, 3) ++ Map(key(0) -> ShardPosition.Ended, key(2) -> readTo5))
      def callerCalls = fake.synchronized(fake.threads.count(_ == Thread.currentThread().getName))
      val before = callerCalls
      val refreshed = tracker.refresh(offset, tracker.nextListingMillis)
      assert(callerCalls == before + 1, "the plan did not list itself")
      assert(refreshed == offset)
      assert(tracker.lostShards == 0)
      val forced = callerCalls
      tracker.refresh(offset, System.currentTimeMillis(), force = true)
      assert(callerCalls == forced + 1, "a forced listing is the plan's own")
    } finally tracker.stopListingAhead()
  }

  test("DynamoDB: an ended shard's children come from DescribeStream's CHILD_SHARDS filter, not a listing") {
    import UnfilteredDescribeStream.{shard => ds}
    val arn = "arn:aws:dynamodb:us-east-1:123456789012:table/orders/stream/2026-01-01T00:00:00.000"
    val stream = StreamRef(arn, Some(arn), Some("us-east-1"))
    def k(id: String) = ShardKey(arn, id)
    // A stream's last 24 hours: x ended long ago, d its child is read, a is the other open shard.
    val fake = new UnfilteredDescribeStream(Seq(ds("x", closed = true), ds("d", Some("x")), ds("a")))
    val tracker = new ShardTracker((s, p) => DynamoDbStreams.list(fake, s, p), Seq(stream), intervalMillis = 60000,
      listChildren = Some((s, id, p) => DynamoDbStreams.children(fake, s, id, p)))
    val start = tracker.refresh(KinesisSourceOffset(Map.empty), System.currentTimeMillis())
    assert(start.shards.keySet == Set(k("x"), k("d"), k("a")) && fake.filters == Seq(None), "the start lists")
    val read = start.updated(k("x"), ShardPosition.Ended)
    assert(tracker.refresh(read, System.currentTimeMillis()) eq read, "x was closed in the listing")
    assert(fake.filters.size == 1)

    // a ends before the service lists its children: looked up once, and again only when a refresh is forced.
    fake.shards = Seq(ds("x", closed = true), ds("d", Some("x")), ds("a", closed = true))
    val aEnded = read.updated(k("a"), ShardPosition.Ended)
    assert(tracker.refresh(aEnded, System.currentTimeMillis()) eq aEnded)
    assert(tracker.refresh(aEnded, System.currentTimeMillis()) eq aEnded)
    assert(fake.filters.drop(1) == Seq(Some(("CHILD_SHARDS", "a"))))
    // The split's children are listed now, and so is a child of d (open, still read) that only a listing may add:
    // moto-like, the service answers every shard whatever the filter, and only a's children are taken.
    fake.shards = fake.shards ++ Seq(ds("b", Some("a")), ds("c", Some("a")), ds("g", Some("d")))
    val split = tracker.refresh(aEnded, System.currentTimeMillis(), force = true)
    assert(fake.filters.drop(1) == Seq(Some(("CHILD_SHARDS", "a")), Some(("CHILD_SHARDS", "a"))))
    assert(split.shards.keySet == Set(k("x"), k("d"), k("a"), k("b"), k("c")))
    assert(split.shards(k("b")) == ShardPosition.NotStarted(StartPosition.TrimHorizon))
    assert(tracker.parentsOf(k("b")) == Seq(k("a")) && tracker.readable(split) == Seq(k("b"), k("c"), k("d")))
    assert(tracker.refresh(split, System.currentTimeMillis(), force = true) eq split, "a's children are known")
    assert(fake.filters.size == 3)

    // The periodic discovery interval: a whole listing again, which finds g.
    val listed = tracker.refresh(split, tracker.nextListingMillis)
    assert(fake.filters.last.isEmpty && fake.filters.size == 4)
    assert(listed.shards.keySet == Set(k("x"), k("d"), k("a"), k("b"), k("c"), k("g")))
  }
}
