package io.sparkkinesis.reader

import java.util.UUID

import org.scalatest.funsuite.AnyFunSuite
import software.amazon.awssdk.core.SdkBytes
import software.amazon.awssdk.services.kinesis.model.{PutRecordsRequest, PutRecordsRequestEntry}

import io.sparkkinesis.aws.StreamRef
import io.sparkkinesis.compat.CollectionConverters._

import io.sparkkinesis.offsets.{ShardKey, ShardPosition, StartPosition}
import io.sparkkinesis.testing.{LocalKinesisServers, SharedSparkSession, TestStreams}

/**
 * A query's opening round cuts after one short page per shard and leaves the backlog to read-ahead, which reads it
 * while the first batch runs; a later round reads and cuts as before. On kinesalite, with a backlog of several
 * opening pages per shard. Past its time budget the opening round reads no more shards than the pool takes up at
 * once, and leaves the others to read-ahead too.
 */
class OpeningRoundSuite extends AnyFunSuite with LocalKinesisServers with SharedSparkSession {
  private val PerShard = Prefetcher.OpeningPageRecords * 3

  /** A fresh stream of `shards` shards with `perShard` records put into each (by explicit hash key); its shards. */
  private def filledStream(prefix: String, shards: Int, perShard: Int): (String, Seq[ShardKey]) = {
    val server = kinesalite
    val name = TestStreams.freshStream(server, prefix, shards)
    val client = TestStreams.syncClient(server)
    TestStreams.shards(server, name).foreach { s =>
      (1 to perShard).grouped(500).foreach { batch =>
        val entries = batch.map { i =>
          PutRecordsRequestEntry.builder().partitionKey("k").explicitHashKey(s.hashKeyRange().startingHashKey())
            .data(SdkBytes.fromUtf8String(s"${s.shardId()}-$i")).build()
        }
        val answer = client.putRecords(PutRecordsRequest.builder().streamName(name).records(entries.asJava).build())
        assert(answer.failedRecordCount() == 0)
      }
    }
    (name, TestStreams.shards(server, name).map(s => ShardKey(name, s.shardId())))
  }

  private val fetch = io.sparkkinesis.fetching.FetchSettings(maxRecordsPerCall = 10000, minPeriodMillis = 0L)

  private def requests(name: String, keys: Seq[ShardKey], from: Map[ShardKey, ShardPosition]) =
    keys.map(k => ShardFetchRequest(k, StreamRef(name, None, None), from(k), Long.MaxValue, Long.MaxValue))

  private def fromStart(keys: Seq[ShardKey]): Map[ShardKey, ShardPosition] =
    keys.map(_ -> (ShardPosition.NotStarted(StartPosition.TrimHorizon): ShardPosition)).toMap

  /** Waits (at most a minute) until read-ahead has buffered `total` records of `keys` for `source`. */
  private def awaitBuffered(source: String, keys: Seq[ShardKey], total: Int): Unit = {
    val deadline = System.nanoTime() + 60L * 1000 * 1000 * 1000
    def buffered = keys.map(k => ShardSessions.shared.buffer(source, k).fold(0)(_.buffered)).sum
    while (buffered < total) {
      assert(System.nanoTime() < deadline, s"read-ahead buffered $buffered of $total records")
      Thread.sleep(50)
    }
  }

  test("the opening round cuts after one page of OpeningPageRecords per shard; read-ahead buffers the rest") {
    val (name, keys) = filledStream("opening", 2, PerShard)
    val connection = TestStreams.connection(kinesalite)
    val source = UUID.randomUUID().toString
    def requests(from: Map[ShardKey, ShardPosition]) = this.requests(name, keys, from)
    spark.sparkContext // the executor's location comes from SparkEnv
    try {
      val start = fromStart(keys)
      val opening = Prefetcher.run(FetchTaskSpec(source, requests(start), connection, fetch, None, None,
          opening = true))
      assert(opening.map(c => c.key -> c.records).toMap == keys.map(_ -> Prefetcher.OpeningPageRecords.toLong).toMap)
      assert(opening.forall(!_.caughtUp), "a full opening page says more is waiting")
      // Read-ahead goes on alone: every record of every shard ends up buffered, with no round asking for it.
      awaitBuffered(source, keys, keys.size * PerShard)
      // The next round cuts everything that is left, from the buffers.
      val next = Prefetcher.run(FetchTaskSpec(source, requests(opening.map(c => c.key -> c.end).toMap), connection,
          fetch, None, None))
      assert(next.map(c => c.key -> c.records).toMap ==
        keys.map(_ -> (PerShard - Prefetcher.OpeningPageRecords).toLong).toMap)
    } finally ShardSessions.shared.retire(Seq(source))
  }

  test("past its budget the opening round reads only the shards the pool takes up at once; read-ahead reads the rest") {
    val extra = 4
    val perShard = 30
    val (name, keys) = filledStream("opening-budget", FetchThreads.Size + extra, perShard)
    val connection = TestStreams.connection(kinesalite)
    val source = UUID.randomUUID().toString
    spark.sparkContext
    val budget = Prefetcher.openingBudgetMillis
    Prefetcher.openingBudgetMillis = -1L // every shard after the pool's first ones is past the budget
    try {
      val opening = Prefetcher.run(FetchTaskSpec(source, requests(name, keys, fromStart(keys)), connection, fetch,
          None, None, opening = true))
      val (read, unread) = opening.partition(_.records > 0)
      assert(read.size == FetchThreads.Size && read.forall(_.records == perShard), opening.map(_.records))
      // Cut where the query stands and not caught up: the next round must take them, and they are not quiet.
      assert(unread.size == extra && unread.forall(c => !c.caughtUp && c.end == fromStart(keys)(c.key)), unread)
      // Read-ahead reads the shards the round left, with no round asking for them.
      awaitBuffered(source, unread.map(_.key), extra * perShard)
      val next = Prefetcher.run(FetchTaskSpec(source, requests(name, keys, opening.map(c => c.key -> c.end).toMap),
          connection, fetch, None, None))
      assert(next.map(c => c.key -> c.records).toMap ==
        keys.map(k => k -> (if (unread.exists(_.key == k)) perShard.toLong else 0L)).toMap)
    } finally {
      Prefetcher.openingBudgetMillis = budget
      ShardSessions.shared.retire(Seq(source))
    }
  }
}
