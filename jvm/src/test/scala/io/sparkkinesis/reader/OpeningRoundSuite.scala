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
 * opening pages per shard.
 */
class OpeningRoundSuite extends AnyFunSuite with LocalKinesisServers with SharedSparkSession {
  private val PerShard = Prefetcher.OpeningPageRecords * 3

  test("the opening round cuts after one page of OpeningPageRecords per shard; read-ahead buffers the rest") {
    val server = kinesalite
    val name = TestStreams.freshStream(server, "opening", 2)
    val keys = TestStreams.shards(server, name).map(s => ShardKey(name, s.shardId()))
    // Explicit hash keys at each shard's start: every record lands in the shard it is meant for.
    val client = TestStreams.syncClient(server)
    TestStreams.shards(server, name).foreach { s =>
      (1 to PerShard).grouped(500).foreach { batch =>
        val entries = batch.map { i =>
          PutRecordsRequestEntry.builder().partitionKey("k").explicitHashKey(s.hashKeyRange().startingHashKey())
            .data(SdkBytes.fromUtf8String(s"${s.shardId()}-$i")).build()
        }
        val answer = client.putRecords(PutRecordsRequest.builder().streamName(name).records(entries.asJava).build())
        assert(answer.failedRecordCount() == 0)
      }
    }
    val connection = TestStreams.connection(server)
    val source = UUID.randomUUID().toString
    val fetch = io.sparkkinesis.fetching.FetchSettings(maxRecordsPerCall = 10000, minPeriodMillis = 0L)
    def requests(from: Map[ShardKey, ShardPosition]) =
      keys.map(k => ShardFetchRequest(k, StreamRef(name, None, None), from(k), Long.MaxValue, Long.MaxValue))
    spark.sparkContext // the executor's location comes from SparkEnv
    try {
      val start = keys.map(_ -> (ShardPosition.NotStarted(StartPosition.TrimHorizon): ShardPosition)).toMap
      val opening = Prefetcher.run(FetchTaskSpec(source, requests(start), connection, fetch, None, None,
          opening = true))
      assert(opening.map(c => c.key -> c.records).toMap == keys.map(_ -> Prefetcher.OpeningPageRecords.toLong).toMap)
      assert(opening.forall(!_.caughtUp), "a full opening page says more is waiting")
      // Read-ahead goes on alone: every record of every shard ends up buffered, with no round asking for it.
      val deadline = System.nanoTime() + 60L * 1000 * 1000 * 1000
      def buffered = keys.map(k => ShardSessions.shared.buffer(source, k).fold(0)(_.buffered)).sum
      while (buffered < keys.size * PerShard) {
        assert(System.nanoTime() < deadline, s"read-ahead buffered $buffered of ${keys.size * PerShard} records")
        Thread.sleep(50)
      }
      // The next round cuts everything that is left, from the buffers.
      val next = Prefetcher.run(FetchTaskSpec(source, requests(opening.map(c => c.key -> c.end).toMap), connection,
          fetch, None, None))
      assert(next.map(c => c.key -> c.records).toMap ==
        keys.map(_ -> (PerShard - Prefetcher.OpeningPageRecords).toLong).toMap)
    } finally ShardSessions.shared.retire(Seq(source))
  }
}
