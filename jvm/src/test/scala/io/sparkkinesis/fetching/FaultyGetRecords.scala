package io.sparkkinesis.fetching

import java.lang.reflect.{InvocationHandler, InvocationTargetException, Method, Proxy}
import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.atomic.{AtomicInteger, AtomicLong}

import software.amazon.awssdk.core.exception.SdkClientException
import software.amazon.awssdk.services.kinesis.KinesisClient
import software.amazon.awssdk.services.kinesis.model._

/**
 * A fault layer around a real client of a local server, for GetRecords faults no local server plays on demand:
 *  - `throttle(shardId)`: every GetRecords on that shard is answered ProvisionedThroughputExceededException, until
 *    `calm()`;
 *  - `dropConnections(shardId)`: every GetRecords on that shard reaches the server, but the connection drops before
 *    the answer (an SdkClientException caused by a SocketException "Connection reset"), until `calm()`;
 *  - `expireEvery(n)`: every n-th GetRecords (of any shard) is answered ExpiredIteratorException, until `calm()`.
 * It counts GetShardIterator calls by shard (`shardIterators`). Iterators are opaque, so the layer learns them, as the harness's fault proxy does: the iterator GetShardIterator
 * hands out belongs to the shard asked for, and each GetRecords answer's next iterator to the same shard.
 */
final class FaultyGetRecords(real: KinesisClient) {
  private val shardOf = new ConcurrentHashMap[String, String]()
  @volatile private var throttled: Option[String] = None
  @volatile private var dropped: Option[String] = None
  @volatile private var expireEveryN = 0
  private val getRecordsCalls = new AtomicLong
  private val iteratorCalls = new ConcurrentHashMap[String, AtomicInteger]()

  /** GetShardIterator calls made through the layer on `shardId` so far. */
  def shardIterators(shardId: String): Int = Option(iteratorCalls.get(shardId)).fold(0)(_.get())

  /** Faults delivered, by kind ("throttled", "dropped", "expired"). */
  val injected: Map[String, AtomicInteger] = Seq("throttled", "dropped", "expired").map(_ -> new AtomicInteger).toMap

  def throttle(shardId: String): Unit = throttled = Some(shardId)
  def dropConnections(shardId: String): Unit = dropped = Some(shardId)
  def expireEvery(n: Int): Unit = expireEveryN = n
  def calm(): Unit = { throttled = None; dropped = None; expireEveryN = 0 }
  def count(kind: String): Int = injected(kind).get()

  val client: KinesisClient = Proxy.newProxyInstance(getClass.getClassLoader, Array(classOf[KinesisClient]),
    new InvocationHandler {
      override def invoke(proxy: Any, method: Method, args: Array[AnyRef]): AnyRef = method.getName match {
        case "getShardIterator" if args != null && args.length == 1 && args(0).isInstanceOf[GetShardIteratorRequest] =>
          iteratorCalls.computeIfAbsent(args(0).asInstanceOf[GetShardIteratorRequest].shardId(), _ => new AtomicInteger)
            .incrementAndGet()
          val response = forward(method, args).asInstanceOf[GetShardIteratorResponse]
          Option(response.shardIterator())
            .foreach(shardOf.put(_, args(0).asInstanceOf[GetShardIteratorRequest].shardId()))
          response
        case "getRecords" if args != null && args.length == 1 && args(0).isInstanceOf[GetRecordsRequest] =>
          getRecords(method, args)
        case _ => forward(method, args)
      }
    }).asInstanceOf[KinesisClient]

  private def getRecords(method: Method, args: Array[AnyRef]): AnyRef = {
    val shard = Option(shardOf.get(args(0).asInstanceOf[GetRecordsRequest].shardIterator()))
    val n = getRecordsCalls.incrementAndGet()
    if (shard.isDefined && shard == throttled) {
      injected("throttled").incrementAndGet()
      throw ProvisionedThroughputExceededException.builder()
        .message(s"Rate exceeded for shard ${shard.get} (fault)").statusCode(400).build()
    }
    val every = expireEveryN
    if (every > 0 && n % every == 0) {
      injected("expired").incrementAndGet()
      throw ExpiredIteratorException.builder().message("Iterator expired (fault)").statusCode(400).build()
    }
    val response = forward(method, args).asInstanceOf[GetRecordsResponse]
    shard.foreach(s => Option(response.nextShardIterator()).foreach(shardOf.put(_, s)))
    if (shard.isDefined && shard == dropped) {
      injected("dropped").incrementAndGet()
      throw SdkClientException.builder().message("Unable to execute HTTP request: Connection reset (fault)")
        .cause(new java.net.SocketException("Connection reset")).build()
    }
    response
  }

  private def forward(method: Method, args: Array[AnyRef]): AnyRef =
    try if (args == null) method.invoke(real) else method.invoke(real, args: _*)
    catch { case e: InvocationTargetException => throw e.getCause }
}

object FaultyGetRecords {

  /** Runs `body` with executors' GetRecords fetchers on `layer`'s client (local mode: one JVM). */
  def through[T](layer: FaultyGetRecords)(body: => T): T = {
    val before = ShardFetchers.clients
    ShardFetchers.clients = _ => layer.client
    try body
    finally ShardFetchers.clients = before
  }
}
