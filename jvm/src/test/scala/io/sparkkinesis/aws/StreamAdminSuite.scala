package io.sparkkinesis.aws

import org.scalatest.funsuite.AnyFunSuite
import software.amazon.awssdk.services.kinesis.model.StreamStatus

import io.sparkkinesis.errors.KinesisException
import io.sparkkinesis.testing.FakeKinesis

/**
 * What the catalog's stream calls do where no local server can go: a stream that stays CREATING (the service takes
 * its time, or is stuck) ends the wait with an error naming the stream and its status, instead of waiting forever.
 */
class StreamAdminSuite extends AnyFunSuite {

  test("a stream that does not become ACTIVE within the bound fails with KINESIS_STREAM_NOT_ACTIVE, naming it") {
    val fake = new FakeKinesis()
    val options = FakeKinesis.serve(fake)
    try {
      val connection = AwsConnection("us-east-1", options.get("endpointUrl"),
        CredentialsConfig.StaticKeys("fake-key", "fake-secret", None), cborEnabled = true)
      fake.create("slow-stream", 1)
      fake.reportedStatus = StreamStatus.CREATING
      val e = intercept[KinesisException](
        StreamAdmin.awaitActive(connection, StreamRef("slow-stream", None, None), withinSeconds = 1))
      assert(e.condition == "KINESIS_STREAM_NOT_ACTIVE")
      assert(e.getMessage.contains("'slow-stream'") && e.getMessage.contains("CREATING"), e.getMessage)
      fake.reportedStatus = StreamStatus.ACTIVE
      assert(StreamAdmin.awaitActive(connection, StreamRef("slow-stream", None, None), withinSeconds = 1).active)
    } finally FakeKinesis.withdraw(options)
  }
}
