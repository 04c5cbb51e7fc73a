package io.sparkkinesis.fetching

import java.io.IOException

import org.scalatest.funsuite.AnyFunSuite

import software.amazon.awssdk.services.kinesis.model._

import io.sparkkinesis.aws.{Backoff, StreamRef}
import io.sparkkinesis.errors.KinesisException
import io.sparkkinesis.offsets.StartPosition

/**
 * The fan-out fetcher against subscriptions the test plays by hand ([[ScriptedSubscriptions]]), with a clock of
 * its own and no background tick: each case is what the service (or a fault no local server produces) does, and
 * what the fetcher must make of it. The end-to-end cases on kinesis-mock are in FanOutSourceSuite.
 */
class FanOutShardFetcherSuite extends AnyFunSuite {
  import ScriptedSubscriptions._

  private val Arn = "arn:aws:kinesis:us-east-1:000000000000:stream/orders/consumer/q:1"

  /**
   * What GetRecords would answer for the shard (the fallback while subscribing fails): the records `shard` holds,
   * from where it was opened, `perPage` a page; `openedAt` notes each start.
   */
  private final class PolledShard(shard: => Seq[Long], perPage: Int = 2) {
    val openedAt = scala.collection.mutable.ArrayBuffer.empty[StartPosition]
    def open(from: StartPosition): ShardFetcher = {
      openedAt += from
      var after = from match {
        case StartPosition.AfterSequence(s) => s.toLong
        case _ => 0L
      }
      new ShardFetcher {
        var n = 0L
        override def fetch(patient: Boolean): FetchedPage = {
          n += 1
          val page = shard.filter(_ > after).take(perPage)
          page.lastOption.foreach(after = _)
          FetchedPage(page.map(ScriptedSubscriptions.record(_)), if (shard.exists(_ > after)) 1000L else 0L, false)
        }
        override def shardEnded = false
        override def calls = n
        override def throttled = 0L
        override def dataLoss = 0L
      }
    }
  }

  private final class Rig(
      start: StartPosition = StartPosition.TrimHorizon,
      maxRecords: Int = 100,
      failOnDataLoss: Boolean = true,
      polled: Option[PolledShard] = None) {
    val subs = new ScriptedSubscriptions
    var now = 1000000L
    val fetcher = new FanOutShardFetcher(subs, Arn, StreamRef("orders", None, None), "shardId-000000000000", start,
      maxRecords, failOnDataLoss, silenceMillis = 30000L, maxFailures = 3, inUseLimitMillis = 360000L,
      fallback = polled.map(p => p.open _), queuedEvents = 2,
      backoff = Backoff(baseMillis = 1000, capMillis = 1000), clock = () => now, ticks = None)

    def seqs(page: FetchedPage): Seq[Long] = page.records.map(_.sequenceNumber().toLong)
    def startOf(o: subs.Opened): (ShardIteratorType, Option[String]) =
      (o.request.startingPosition().`type`(), Option(o.request.startingPosition().sequenceNumber()))
  }

  test("records come out in order, a page at most maxRecordsPerFetch, and the queue asks for no more than it holds") {
    val r = new Rig(maxRecords = 3)
    assert(r.fetcher.fetch().records.isEmpty, "nothing before the first event")
    assert(r.subs.opened.size == 1 && r.startOf(r.subs.last)._1 == ShardIteratorType.TRIM_HORIZON)
    val s = r.subs.last
    assert(s.demand == 2, "the queue holds 2 events: 2 are asked for")
    s.send(event(Seq(1, 2), 2, behind = 5000))
    s.send(event(Seq(3, 4, 5), 5, behind = 0))
    assert(s.demand == 0, "a full queue asks for nothing more")
    val first = r.fetcher.fetch()
    assert(r.seqs(first) == Seq(1, 2, 3) && first.millisBehindLatest == 0L)
    assert(r.seqs(r.fetcher.fetch()) == Seq(4, 5))
    assert(s.demand == 2, "drained events make room: 2 more are asked for")
    assert(r.subs.opened.size == 1, "one subscription serves every page")
  }

  test("before its first event a shard is not reported caught up (AvailableNow must not end on it)") {
    val r = new Rig()
    assert(r.fetcher.fetch().millisBehindLatest > 0)
    r.subs.last.send(event(Nil, 10))
    assert(r.fetcher.fetch().millisBehindLatest == 0L)
  }

  test("renewal after the service ends a subscription starts after the last continuation, not over from the start") {
    val r = new Rig(start = StartPosition.Latest)
    r.fetcher.fetch()
    r.subs.last.send(event(Nil, 40))
    r.subs.last.send(event(Nil, 41)) // empty events still move the position (a start at `latest` or a timestamp)
    r.fetcher.fetch()
    r.subs.last.complete()
    r.now += 300
    r.fetcher.fetch()
    assert(r.subs.opened.size == 1, "at most one SubscribeToShard per second per shard")
    r.now += 700
    r.fetcher.fetch()
    assert(r.subs.opened.size == 2)
    assert(r.startOf(r.subs.last) == ((ShardIteratorType.AFTER_SEQUENCE_NUMBER, Some("41"))))
    assert(r.fetcher.renewals == 1 && r.fetcher.subscribeFailures == 0)
  }

  test("records the service sends again after a renewal are not handed out twice") {
    val r = new Rig()
    r.fetcher.fetch()
    r.subs.last.send(event(Seq(1, 2), 2))
    assert(r.seqs(r.fetcher.fetch()) == Seq(1, 2))
    r.subs.last.complete()
    r.now += 1000
    r.fetcher.fetch()
    r.subs.last.send(event(Seq(2, 3), 3))
    assert(r.seqs(r.fetcher.fetch()) == Seq(3))
  }

  test("a subscription taken over (ResourceInUseException) is opened again after a pause, from the same place") {
    val r = new Rig()
    r.fetcher.fetch()
    r.subs.last.send(event(Seq(1), 1))
    r.fetcher.fetch()
    r.subs.last.fail(ResourceInUseException.builder().message("taken over").build())
    r.now += 999
    r.fetcher.fetch()
    assert(r.subs.opened.size == 1, "not before the backoff")
    r.now += 1001
    r.fetcher.fetch()
    assert(r.subs.opened.size == 2 && r.startOf(r.subs.last) == ((ShardIteratorType.AFTER_SEQUENCE_NUMBER, Some("1"))))
    r.subs.last.send(event(Seq(2), 2))
    assert(r.seqs(r.fetcher.fetch()) == Seq(2))
    assert(r.fetcher.subscribeFailures == 1)
  }

  test("an I/O error in the middle of a subscription loses nothing; events queued before it are still read") {
    val r = new Rig()
    r.fetcher.fetch()
    r.subs.last.send(event(Seq(1, 2), 2))
    r.subs.last.fail(new IOException("connection reset"))
    assert(r.seqs(r.fetcher.fetch()) == Seq(1, 2))
    r.now += 1000
    r.fetcher.fetch()
    assert(r.startOf(r.subs.last) == ((ShardIteratorType.AFTER_SEQUENCE_NUMBER, Some("2"))))
    r.subs.last.send(event(Seq(3), 3))
    assert(r.seqs(r.fetcher.fetch()) == Seq(3))
  }

  test("failures in a row without an event end the read, named; an event between them resets the count") {
    val r = new Rig()
    (1 to 3).foreach { _ =>
      r.fetcher.fetch()
      r.subs.last.fail(new IOException("reset"))
      r.now += 1000
    }
    r.fetcher.fetch()
    r.subs.last.send(event(Seq(1), 1)) // an event: the count starts again
    r.subs.last.fail(new IOException("reset"))
    (1 to 3).foreach { _ =>
      r.now += 1000
      r.fetcher.fetch()
      r.subs.last.fail(new IOException("reset"))
    }
    r.now += 1000
    val e = intercept[KinesisException](r.fetcher.fetch())
    assert(e.condition == "KINESIS_RETRIES_EXHAUSTED" && e.getMessage.contains("SubscribeToShard"))
  }

  test("a subscription that stays open but silent is cancelled and opened again") {
    val r = new Rig()
    r.fetcher.fetch()
    val silent = r.subs.last
    silent.send(event(Seq(1), 1))
    r.fetcher.fetch()
    r.now += 30001
    r.fetcher.fetch()
    assert(silent.cancelled, "the silent subscription is let go")
    assert(r.subs.opened.size == 2 && r.startOf(r.subs.last) == ((ShardIteratorType.AFTER_SEQUENCE_NUMBER, Some("1"))))
    silent.send(event(Seq(2), 2)) // a late event of the old subscription is not taken
    r.subs.last.send(event(Seq(2, 3), 3))
    assert(r.seqs(r.fetcher.fetch()) == Seq(2, 3))
    assert(r.fetcher.renewals == 1)
  }

  test("a full queue asks for nothing, and its quiet is not silence: the subscription is kept") {
    val r = new Rig()
    r.fetcher.fetch()
    val s = r.subs.last
    s.send(event(Seq(1), 1))
    s.send(event(Seq(2), 2))
    assert(s.demand == 0)
    r.now += 120000 // nobody reads for two minutes
    r.fetcher.maintain()
    assert(!s.cancelled && r.subs.opened.size == 1, "a subscription with nothing asked of it is not silent")
    assert(r.seqs(r.fetcher.fetch()) == Seq(1, 2))
    r.now += 30001 // asked for more, and nothing came
    r.fetcher.maintain()
    assert(s.cancelled && r.subs.opened.size == 2)
  }

  test("while subscribing fails the shard is read with GetRecords from the last record, until an event comes") {
    val shard = scala.collection.mutable.ArrayBuffer[Long](1, 2, 3, 4, 5)
    val polled = new PolledShard(shard.toSeq)
    val r = new Rig(polled = Some(polled))
    r.fetcher.fetch()
    r.subs.last.send(event(Seq(1), 1))
    assert(r.seqs(r.fetcher.fetch()) == Seq(1))
    assert(polled.openedAt.isEmpty, "no polling while the subscription delivers")
    r.subs.last.fail(ResourceInUseException.builder().message("Another active subscription exists").build())
    assert(r.seqs(r.fetcher.fetch()) == Seq(2, 3))
    assert(polled.openedAt == Seq(StartPosition.AfterSequence("1")), "polling starts after the last record")
    assert(r.seqs(r.fetcher.fetch()) == Seq(4, 5))
    assert(r.fetcher.calls == 3, "one subscribe and two GetRecords")
    r.now += 1000
    r.fetcher.fetch()
    assert(r.subs.opened.size == 2 && r.startOf(r.subs.last) == ((ShardIteratorType.AFTER_SEQUENCE_NUMBER, Some("5"))))
    r.subs.last.send(event(Seq(4, 5, 6), 6)) // a subscription opened earlier could send polled records again
    assert(r.seqs(r.fetcher.fetch()) == Seq(6))
    shard += 7
    r.subs.last.send(event(Seq(7), 7))
    assert(r.seqs(r.fetcher.fetch()) == Seq(7) && polled.openedAt.size == 1, "events serve again; polling stopped")
  }

  test("another reader holding the shard (ResourceInUse) is waited out past maxFailures, then fails named") {
    val r = new Rig()
    r.fetcher.fetch()
    (1 to 10).foreach { _ =>
      r.subs.last.fail(ResourceInUseException.builder().message("Another active subscription exists").build())
      r.now += 1000
      r.fetcher.fetch()
    }
    assert(r.subs.opened.size == 11, "ResourceInUse is not counted towards maxFailures (3)")
    r.subs.last.fail(ResourceInUseException.builder().message("Another active subscription exists").build())
    r.now += 360000
    r.fetcher.fetch()
    r.subs.last.fail(ResourceInUseException.builder().message("Another active subscription exists").build())
    val e = intercept[KinesisException](r.fetcher.fetch())
    assert(e.condition == "KINESIS_RETRIES_EXHAUSTED" && e.getMessage.contains("another reader has held this shard"))
    assert(e.getMessage.contains(Arn) && e.getMessage.contains("'consumerName'"))
  }

  test("idle shards cost no busy work: one subscription each, no renewal, demand only for events received") {
    // FLINK-36939: idle fan-out shards kept CPUs busy. Here 50 idle shards get an empty event every 5 s for ten
    // minutes of the fetchers' clock, read every 200 ms: nothing is opened again, nothing renewed, and each fetcher
    // asks for exactly one event per event it was sent, so neither side has work between events.
    val rigs = (1 to 50).map(_ => new Rig(start = StartPosition.Latest))
    rigs.foreach(_.fetcher.fetch())
    var seq = 0L
    (1 to 3000).foreach { step =>
      rigs.foreach { r =>
        r.now += 200
        if (step % 25 == 0) { seq += 1; r.subs.last.send(event(Nil, seq)) }
        assert(r.fetcher.fetch().records.isEmpty)
      }
    }
    rigs.foreach { r =>
      val s = r.subs.last
      assert(r.subs.opened.size == 1 && r.fetcher.renewals == 0 && r.fetcher.calls == 1, "one subscription, kept")
      assert(s.requested == s.delivered + 2, s"asked ${s.requested} for ${s.delivered} events (queue of 2)")
    }
  }

  test("the shard ends with the event that has its child shards, after every record before it, and is not reopened") {
    val r = new Rig()
    r.fetcher.fetch()
    r.subs.last.send(event(Seq(1, 2), 2))
    r.subs.last.send(lastEvent(Seq(3), Seq("shardId-000000000001", "shardId-000000000002")))
    val page = r.fetcher.fetch()
    assert(r.seqs(page) == Seq(1, 2, 3) && page.shardEnded && r.fetcher.shardEnded)
    r.now += 60000
    r.fetcher.maintain()
    assert(r.subs.opened.size == 1, "no subscription after the end")
  }

  test("a shard's end waits behind records still queued when pages are small") {
    val r = new Rig(maxRecords = 2)
    r.fetcher.fetch()
    r.subs.last.send(lastEvent(Seq(1, 2, 3), Seq("shardId-000000000001")))
    val first = r.fetcher.fetch()
    assert(r.seqs(first) == Seq(1, 2) && !first.shardEnded)
    val second = r.fetcher.fetch()
    assert(r.seqs(second) == Seq(3) && second.shardEnded)
  }

  test("throttled subscribe calls back off and are counted") {
    val r = new Rig()
    r.subs.refuseNext = Some(LimitExceededException.builder().message("Rate exceeded for consumer").build())
    r.fetcher.fetch()
    assert(r.fetcher.throttled == 1)
    r.now += 1000
    r.fetcher.fetch()
    assert(r.subs.opened.size == 2)
  }

  test(
    "a refused sequence number is data loss: named with failOnDataLoss, counted and read on from the trim horizon without") {
    val failing = new Rig(start = StartPosition.AfterSequence("7"))
    failing.subs.refuseNext = Some(InvalidArgumentException.builder().message("Invalid StartingSequenceNumber").build())
    assert(intercept[KinesisException](failing.fetcher.fetch()).condition == "KINESIS_DATA_LOSS")
    assert(intercept[KinesisException](failing.fetcher.fetch()).condition == "KINESIS_DATA_LOSS", "and stays failed")

    val going = new Rig(start = StartPosition.AfterSequence("7"), failOnDataLoss = false)
    going.subs.refuseNext = Some(InvalidArgumentException.builder().message("Invalid StartingSequenceNumber").build())
    going.fetcher.fetch()
    going.now += 1000
    going.fetcher.fetch()
    assert(going.fetcher.dataLoss == 1 && going.startOf(going.subs.last)._1 == ShardIteratorType.TRIM_HORIZON)
  }

  test("a consumer the service does not know fails the read at once") {
    val r = new Rig()
    r.subs.refuseNext = Some(ResourceNotFoundException.builder().message("Consumer not found").build())
    val e = intercept[KinesisException](r.fetcher.fetch())
    assert(e.getMessage.contains("SubscribeToShard") && e.getMessage.contains(Arn) && e.getMessage.contains(
      "Consumer not found"))
  }

  test("close cancels the subscription and opens no other") {
    val r = new Rig()
    r.fetcher.fetch()
    r.fetcher.close()
    assert(r.subs.last.cancelled)
    r.now += 60000
    r.fetcher.maintain()
    assert(r.subs.opened.size == 1)
  }

  test(
    "no deadlock with the SDK: its threads hold their own locks while they deliver events, the fetcher asks for more") {
    val r = new Rig()
    r.fetcher.fetch()
    val s = r.subs.last
    val total = 2000
    @volatile var stop = false
    val sdk = new Thread(() => {
      var seq = 1L
      while (seq <= total && !stop) {
        // As the SDK's event loop does: deliver while holding a lock that request() also takes.
        if (s.demand > 0) { s.sendHoldingSdkLock(event(Seq(seq), seq)); seq += 1 }
        else Thread.`yield`()
      }
    })
    sdk.setDaemon(true)
    sdk.start()
    // A deadlock stops all progress; a busy machine only slows it: fail on 10 s without a new record.
    val read = scala.collection.mutable.ArrayBuffer.empty[Long]
    var progressAt = System.nanoTime()
    while (read.size < total && System.nanoTime() - progressAt < 10L * 1000 * 1000 * 1000) {
      val page = r.seqs(r.fetcher.fetch())
      if (page.nonEmpty) { read ++= page; progressAt = System.nanoTime() }
    }
    stop = true
    assert(read == (1L to total), s"read ${read.size} of $total in order, then nothing for 10 s")
  }
}
