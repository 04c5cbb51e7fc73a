package io.sparkkinesis.bench

import io.sparkkinesis.compat.CollectionConverters._

import software.amazon.awssdk.core.SdkBytes
import software.amazon.awssdk.services.kinesis.model.{PutRecordsRequest, PutRecordsRequestEntry}

import io.sparkkinesis.testing.{FakeKinesis, LocalKinesisServer, TestStreams}

/** Where [[ScaleBench]] makes its streams: the in-process fake, or a local server. */
sealed trait ScaleServer {
  def name: String

  /**
   * A stream `stream` of `shards` shards holding `perShard` records of `bytes` bytes in every shard; the connector's
   * options for it (without the stream's name).
   */
  def prepare(stream: String, shards: Int, perShard: Int, bytes: Int): Map[String, String]

  /** Calls the server answered so far, by operation (the fake counts them; a local server does not). */
  def calls: Map[String, Long] = Map.empty

  /** Frees what `prepare` made for `stream`. */
  def release(stream: String): Unit
}

/** The in-process fake ([[FakeKinesis]]): costs the connector little beside it, so its own cost shows. */
final class FakeScaleServer extends ScaleServer {
  private val fake = new FakeKinesis()
  private val options = FakeKinesis.serve(fake)

  override def name: String = "fake"

  override def prepare(stream: String, shards: Int, perShard: Int, bytes: Int): Map[String, String] = {
    fake.create(stream, shards)
    fake.fill(stream, perShard, bytes)
    options
  }

  override def calls: Map[String, Long] = fake.calls

  override def release(stream: String): Unit = fake.delete(stream)
}

/**
 * kinesalite, one server per stream: its shard limit (2,000, tests/harness/kinesalite.js) counts every stream's
 * shards. Records are put with explicit hash keys, `perShard` to every shard, 500 to a call.
 */
final class KinesaliteScaleServer extends ScaleServer {
  private var server: Option[LocalKinesisServer] = None

  override def name: String = "kinesalite"

  override def prepare(stream: String, shards: Int, perShard: Int, bytes: Int): Map[String, String] = {
    val s = LocalKinesisServer.start(LocalKinesisServer.Kinesalite)
    server = Some(s)
    TestStreams.createStream(s, stream, shards)
    val payload = SdkBytes.fromByteArrayUnsafe(Array.fill[Byte](bytes)('x'.toByte))
    val client = TestStreams.syncClient(s)
    val entries = TestStreams.shards(s, stream).flatMap { shard =>
      (0 until perShard).map(_ =>
        PutRecordsRequestEntry.builder().partitionKey(shard.shardId())
          .explicitHashKey(shard.hashKeyRange().startingHashKey()).data(payload).build())
    }
    entries.grouped(500).foreach { batch =>
      val response = client.putRecords(PutRecordsRequest.builder().streamName(stream).records(batch.asJava).build())
      require(response.failedRecordCount() == 0, s"${response.failedRecordCount()} records were refused")
    }
    TestStreams.connectionOptions(s)
  }

  override def release(stream: String): Unit = {
    server.foreach(_.stop())
    server = None
  }
}
