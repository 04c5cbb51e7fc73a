package io.sparkkinesis.writer

import io.sparkkinesis.aws.{AwsConnection, KinesisClients}
import software.amazon.awssdk.services.kinesis.KinesisAsyncClient

/**
 * Where a writer gets its Kinesis client. It travels with [[SinkOptions]] to the executors, so it must be
 * serializable. The default is the JVM-wide client cache; tests put a fault-injecting client here.
 */
private[sparkkinesis] trait SinkClientFactory extends Serializable {
  def client(connection: AwsConnection, maxConcurrency: Int): KinesisAsyncClient
}

private[sparkkinesis] object SinkClientFactory {

  /** The cached client of [[KinesisClients]], shared by every writer of the executor with the same connection. */
  case object Shared extends SinkClientFactory {
    override def client(connection: AwsConnection, maxConcurrency: Int): KinesisAsyncClient =
      KinesisClients.async(connection, maxConcurrency)
  }
}
