package io.sparkkinesis.testing

import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.atomic.AtomicLong

import io.sparkkinesis.compat.CollectionConverters._

import software.amazon.awssdk.awscore.exception.{AwsErrorDetails, AwsServiceException}
import software.amazon.awssdk.services.kinesis.model.{
  ExpiredNextTokenException,
  LimitExceededException,
  ProvisionedThroughputExceededException
}

/**
 * The service's call-rate limits, for [[FakeKinesis]] to enforce (docs/testing.md, "The in-process fake"): a call
 * over its operation's rate in the current second is answered with the exception the service sends, and counted.
 * The rates are Kinesis' (shared/reference: AWS's quotas page and the API reference), per the key the service
 * counts them by; a test may lower one to make throttling certain.
 *
 * @param listShardsPerStream     ListShards calls a second per stream (1,000)
 * @param nextTokenMillis         how long a ListShards NextToken stays valid (300 s)
 * @param shardIteratorsPerShard  GetShardIterator calls a second per shard (5)
 * @param getRecordsPerShard      GetRecords calls a second per shard (5)
 * @param describeSummaryPerAccount DescribeStreamSummary calls a second per account (20)
 * @param registerConsumerPerAccount RegisterStreamConsumer calls a second per account (5)
 * @param describeConsumerPerStream DescribeStreamConsumer calls a second per stream (20)
 * @param subscribePerShard       SubscribeToShard calls a second per consumer and shard (1)
 * @param throttleFirst           by operation, how many of its first calls are throttled whatever their rate: a
 *                                test that must see an operation throttled, whatever the machine's speed
 */
final case class ServiceLimits(
    listShardsPerStream: Int = 1000,
    nextTokenMillis: Long = 300000L,
    shardIteratorsPerShard: Int = 5,
    getRecordsPerShard: Int = 5,
    describeSummaryPerAccount: Int = 20,
    registerConsumerPerAccount: Int = 5,
    describeConsumerPerStream: Int = 20,
    subscribePerShard: Int = 1,
    throttleFirst: Map[String, Int] = Map.empty) {

  private val windows = new ConcurrentHashMap[String, Array[Long]]()
  private val throttledCalls = new ConcurrentHashMap[String, AtomicLong]()
  private val callsSeen = new ConcurrentHashMap[String, AtomicLong]()

  /** Calls answered with a throttling exception, by operation. */
  def throttled: Map[String, Long] = throttledCalls.asScala.map { case (op, n) => op -> n.get }.toMap

  def throttledTotal: Long = throttled.values.sum

  /**
   * Admits one call of `operation` counted under `key` (a stream, a shard, the account) at `nowMillis`, or throws
   * what the service answers a call over `perSecond`.
   */
  def admit(operation: String, key: String, perSecond: Int, nowMillis: Long): Unit = {
    val second = nowMillis / 1000
    val window = windows.computeIfAbsent(s"$operation|$key", _ => Array(second, 0L))
    val early = callsSeen.computeIfAbsent(operation, _ => new AtomicLong).incrementAndGet() <=
      throttleFirst.getOrElse(operation, 0)
    val over = early || window.synchronized {
      if (window(0) != second) { window(0) = second; window(1) = 0L }
      window(1) += 1
      window(1) > perSecond
    }
    if (over) {
      throttledCalls.computeIfAbsent(operation, _ => new AtomicLong).incrementAndGet()
      throw ServiceLimits.exceeded(operation, s"Rate exceeded for $operation on $key ($perSecond per second)")
    }
  }
}

object ServiceLimits {

  /** The exception the service answers an operation over its rate with (the API reference of each). */
  def exceeded(operation: String, message: String): AwsServiceException = {
    val builder = operation match {
      case "GetRecords" | "GetShardIterator" => ProvisionedThroughputExceededException.builder()
      case _ => LimitExceededException.builder()
    }
    val code = if (operation == "GetRecords" || operation == "GetShardIterator")
      "ProvisionedThroughputExceededException"
    else "LimitExceededException"
    builder.message(message).statusCode(400)
      .awsErrorDetails(AwsErrorDetails.builder().errorCode(code).errorMessage(message).serviceName("Kinesis").build())
      .build().asInstanceOf[AwsServiceException]
  }

  def expiredToken(message: String): AwsServiceException =
    ExpiredNextTokenException.builder().message(message).statusCode(400)
      .awsErrorDetails(AwsErrorDetails.builder().errorCode("ExpiredNextTokenException").errorMessage(message)
          .serviceName("Kinesis").build())
      .build()
}
