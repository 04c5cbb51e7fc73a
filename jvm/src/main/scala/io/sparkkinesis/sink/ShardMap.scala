package io.sparkkinesis.sink

import java.nio.charset.StandardCharsets
import java.security.MessageDigest
import java.util.concurrent.CompletionException

import scala.jdk.CollectionConverters._

import io.sparkkinesis.aws.StreamRef
import io.sparkkinesis.errors.KinesisErrors
import io.sparkkinesis.reader.Failure
import software.amazon.awssdk.services.kinesis.KinesisAsyncClient
import software.amazon.awssdk.services.kinesis.model.{ListShardsRequest, ListShardsResponse}

/**
 * The open shards of a stream by hash key range, to tell which shard a record goes to (Kinesis routes a
 * record by its explicit hash key, else by the MD5 of its partition key read as a 128-bit number).
 */
final class ShardMap private (starts: Array[BigInt], shardIds: Array[String]) {

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
}

object ShardMap {
  private val MaxPages = 10000

  def hashKey(partitionKey: String, explicitHashKey: String): BigInt =
    if (explicitHashKey != null) BigInt(explicitHashKey)
    else BigInt(1, MessageDigest.getInstance("MD5").digest(partitionKey.getBytes(StandardCharsets.UTF_8)))

  /** Lists the stream's open shards (those without an ending sequence number), following NextToken. */
  def load(client: KinesisAsyncClient, stream: StreamRef): ShardMap = {
    val open = Seq.newBuilder[(BigInt, String)]
    var token: String = null
    var pages = 0
    do {
      val request =
        if (token != null) ListShardsRequest.builder().nextToken(token).build()
        else {
          val b = ListShardsRequest.builder()
          stream.arn.fold(b.streamName(stream.name))(b.streamARN).build()
        }
      val response = call(stream, client.listShards(request).join())
      response.shards().asScala.foreach { s =>
        if (s.sequenceNumberRange().endingSequenceNumber() == null)
          open += BigInt(s.hashKeyRange().startingHashKey()) -> s.shardId()
      }
      token = response.nextToken()
      pages += 1
    } while (token != null && token.nonEmpty && pages < MaxPages)
    val sorted = open.result().distinct.sortBy(_._1)
    if (sorted.isEmpty)
      throw KinesisErrors.serviceError("ListShards", stream.toString, new IllegalStateException("no open shard"))
    new ShardMap(sorted.map(_._1).toArray, sorted.map(_._2).toArray)
  }

  private def call(stream: StreamRef, f: => ListShardsResponse): ListShardsResponse =
    try f
    catch {
      case e: CompletionException if e.getCause != null =>
        Failure.of(e.getCause) match {
          case Failure.NotFound => throw KinesisErrors.streamNotFound(stream.toString, e.getCause)
          case Failure.AccessDenied => throw KinesisErrors.accessDenied(stream.toString, "ListShards", e.getCause)
          case Failure.NoCredentials => throw KinesisErrors.noCredentials(e.getCause)
          case _ => throw KinesisErrors.serviceError("ListShards", stream.toString, e.getCause)
        }
    }
}
