package io.sparkkinesis.writer

import java.nio.charset.StandardCharsets
import java.util.concurrent.ConcurrentHashMap

import scala.util.Random

import org.scalatest.funsuite.AnyFunSuite

import io.sparkkinesis.aws.KinesisClients
import io.sparkkinesis.errors.KinesisException
import io.sparkkinesis.writer.SinkTestStreams._
import io.sparkkinesis.testing.{Integration, LocalKinesisServers}
import io.sparkkinesis.testing.TestStreams
import io.sparkkinesis.testing.TestStreams.{connection, readAll, syncClient}
import software.amazon.awssdk.awscore.exception.AwsErrorDetails
import software.amazon.awssdk.services.kinesis.model.{KinesisException => SdkKinesisException, PutRecordsRequestEntry}

/**
 * The writer against kinesalite through the fault-injecting client: limits, partial failures, ordering under
 * retries and fatal errors (issue 5, "Done when" 1 to 4; scenarios S1 to S4).
 */
@Integration
class KinesisDataWriterFaultSuite extends AnyFunSuite with LocalKinesisServers {
  private val Mi = 1024 * 1024

  private def server = kinesalite
  private def realClient = KinesisClients.async(connection(server), 16)
  private def freshStream(shards: Int): String = TestStreams.freshStream(server, "sink", shards)

  test("S1: 10,000 rows of mixed sizes, some near 1 MiB with 256-character keys: every call within 500 " +
    "records and 5 MiB, every row read back exactly once") {
    val stream = freshStream(4)
    val fake = new FaultInjectingClient(Some(realClient))
    val rnd = new Random(7)
    val rows = (0 until 10000).map { i =>
      val key = if (i % 3 == 0) ("k" * 250) + f"$i%06d" else s"key-${i % 101}"
      val prefix = s"row-$i|"
      val size =
        // Close to the 1 MiB record limit: scattered, and in runs that fill calls by bytes.
        if (i % 400 == 7 || (i >= 2000 && i < 2012) || (i >= 7000 && i < 7009))
          Mi - key.length - prefix.length - rnd.nextInt(16)
        else rnd.nextInt(6000)
      (prefix + ("x" * size), key)
    }
    val metrics = writeTask(options(server, stream, FixedClientFactory(fake)), textSchema,
      rows.iterator.map { case (d, k) => row(d, k) })

    val calls = fake.recordedCalls
    assert(calls.nonEmpty)
    calls.foreach { c =>
      assert(c.entries <= 500, s"a call carried ${c.entries} records")
      assert(c.bytes <= 5L * Mi, s"a call carried ${c.bytes} bytes")
    }
    assert(calls.exists(_.bytes > 4L * Mi), "the near-1 MiB rows should fill some calls by bytes")
    val read = readAll(server, stream)
    assert(read.size == rows.size)
    assert(read.map(r => (r.text, r.partitionKey)).toSet == rows.toSet)
    assert(metrics(SinkMetrics.RecordsWritten) == 10000)
    assert(metrics(SinkMetrics.PutRecordsCalls) == calls.size)
    assert(metrics(SinkMetrics.BytesWritten) == rows.map { case (d, k) => d.length + k.length.toLong }.sum)
  }

  test("S2: with 20% of records throttled at random, only those are retried, all land once, metrics count them") {
    val stream = freshStream(2)
    val fake = new FaultInjectingClient(Some(realClient), seed = 2, entryFailureRate = 0.2)
    val n = 3000
    val metrics = writeTask(options(server, stream, FixedClientFactory(fake)), textSchema,
      (0 until n).iterator.map(i => row(s"r$i", s"k${i % 50}")))

    val read = readAll(server, stream)
    assert(read.map(_.text).sorted == (0 until n).map(i => s"r$i").sorted)
    val injected = fake.injectedFailures
    assert(injected > n / 10, s"only $injected failures were injected")
    // Only failed records were sent again: each payload was sent once plus once per failure.
    (0 until n).foreach { i =>
      val p = s"r$i"
      val failures = Option(fake.failed.get(p)).map(_.get).getOrElse(0)
      assert(fake.sent.get(p).get == failures + 1, s"$p sent ${fake.sent.get(p).get} times, failed $failures")
    }
    assert(metrics(SinkMetrics.RetriedRecords) == injected)
    assert(metrics(SinkMetrics.ThrottledRecords) == injected)
    assert(metrics(SinkMetrics.RecordsWritten) == n)
    assert(metrics(SinkMetrics.PutRecordsCalls) == fake.recordedCalls.size)
    // AIMD: throttled calls shrink the window, so later calls carry fewer records than a full request.
    assert(fake.recordedCalls.drop(4).exists(_.entries < 100), fake.recordedCalls.map(_.entries).take(20))
  }

  test("S3: ordering=perKey keeps every key's input order under injected partial failures") {
    val stream = freshStream(4)
    val fake = new FaultInjectingClient(Some(realClient), seed = 3, entryFailureRate = 0.3)
    val keys = 25
    val perKey = 60
    val input = (0 until keys * perKey).map(i => (s"k${i % keys}", i / keys))
    writeTask(options(server, stream, FixedClientFactory(fake), Map("ordering" -> "perKey")), textSchema,
      input.iterator.map { case (k, seq) => row(s"$k:$seq", k) })

    assert(fake.injectedFailures > 100)
    val read = readAll(server, stream)
    assert(read.size == input.size)
    read.groupBy(_.partitionKey).foreach { case (key, records) =>
      val seqs = records.sortBy(r => BigInt(r.sequenceNumber)).map(_.text.split(':')(1).toInt)
      assert(seqs == (0 until perKey), s"key $key arrived in order $seqs")
    }
  }

  test("without perKey a retried record can land after a later record of its key; with perKey it cannot") {
    def run(ordering: String): Seq[String] = {
      val stream = freshStream(1)
      val failedOnce = ConcurrentHashMap.newKeySet[String]()
      // The first send of "a:0" fails; everything else succeeds.
      val fake = new FaultInjectingClient(Some(realClient),
        failEntry = (e: PutRecordsRequestEntry) =>
          new String(e.data().asByteArrayUnsafe(), StandardCharsets.UTF_8) == "a:0" && failedOnce.add("a:0"))
      writeTask(options(server, stream, FixedClientFactory(fake), Map("ordering" -> ordering)), textSchema,
        Iterator(row("a:0", "a"), row("a:1", "a"), row("a:2", "a")))
      readAll(server, stream).map(_.text)
    }
    assert(run("unordered") == Seq("a:1", "a:2", "a:0"))
    assert(run("perKey") == Seq("a:0", "a:1", "a:2"))
  }

  test("S4: a missing stream fails at once with its name") {
    val start = System.nanoTime()
    val e = intercept[KinesisException] {
      writeTask(options(server, "no-such-stream", FixedClientFactory(realClient)), textSchema,
        Iterator(row("x", "k")))
    }
    assert(e.getMessage.startsWith("[KINESIS_STREAM_NOT_FOUND] Stream 'no-such-stream' does not exist"))
    assert(System.nanoTime() - start < 20L * 1000 * 1000 * 1000)
  }

  test("S4: rejected credentials fail at once, after one call") {
    val denied = SdkKinesisException.builder().statusCode(400).message("The security token is invalid")
      .awsErrorDetails(AwsErrorDetails.builder().errorCode("UnrecognizedClientException").build()).build()
    val fake = new FaultInjectingClient(None, callFailure = _ => Some(denied))
    val e = intercept[KinesisException] {
      writeTask(options(server, "s", FixedClientFactory(fake)), textSchema, Iterator(row("x", "k")))
    }
    assert(e.condition == "KINESIS_ACCESS_DENIED", e.getMessage)
    assert(fake.recordedCalls.size == 1)
  }

  test("S4: an oversize record fails with its position and size, or is dropped and counted") {
    val big = "x" * (Mi + 1)
    val rows = Seq(row("a", "k"), row("b", "k"), row(big, "k"), row("c", "k"))
    val fake = new FaultInjectingClient(None)
    val e = intercept[KinesisException] {
      writeTask(options(server, "s", FixedClientFactory(fake)), textSchema, rows.iterator, partitionId = 3)
    }
    assert(e.getMessage.contains("[KINESIS_RECORD_TOO_LARGE] The record at row 2 of partition 3"))
    assert(e.getMessage.contains(s"is ${Mi + 2} bytes"))
    assert(e.getMessage.contains(s"over the limit of $Mi bytes"))

    val dropping = new FaultInjectingClient(None)
    val metrics = writeTask(options(server, "s", FixedClientFactory(dropping), Map("oversizeRecordAction" -> "drop")),
      textSchema, rows.iterator)
    assert(metrics(SinkMetrics.DroppedRecords) == 1)
    assert(metrics(SinkMetrics.RecordsWritten) == 3)
  }

  test("S4: records throttled for good fail after maxRetries with the error codes seen, not forever") {
    val fake = new FaultInjectingClient(None, entryFailureRate = 1.0)
    val e = intercept[KinesisException] {
      writeTask(options(server, "s", FixedClientFactory(fake), Map("maxRetries" -> "3")), textSchema,
        Iterator(row("x", "k")))
    }
    assert(e.condition == "KINESIS_RETRIES_EXHAUSTED")
    assert(e.getMessage.contains("The record at row 0 of partition 0 (task 1) for stream 's' failed 4 times"))
    assert(e.getMessage.contains("ProvisionedThroughputExceededException"))
    assert(fake.recordedCalls.size == 4)
  }

  test("S4: maxRetryDuration ends retrying even when maxRetries is far away") {
    val fake = new FaultInjectingClient(None, entryFailureRate = 1.0)
    val start = System.nanoTime()
    val e = intercept[KinesisException] {
      writeTask(options(server, "s", FixedClientFactory(fake), Map("maxRetries" -> "1000", "maxRetryDuration" -> "1s")),
        textSchema, Iterator(row("x", "k")))
    }
    assert(e.condition == "KINESIS_RETRIES_EXHAUSTED")
    val seconds = (System.nanoTime() - start) / 1e9
    assert(seconds >= 1.0 && seconds < 10, s"took $seconds s")
  }

  test("with maxRetries left unset, a record throttled for good is retried until maxRetryDuration, not 10 times") {
    val fake = new FaultInjectingClient(None, entryFailureRate = 1.0)
    val start = System.nanoTime()
    val e = intercept[KinesisException] {
      writeTask(options(server, "s", FixedClientFactory(fake), Map("maxRetryDuration" -> "30s")), textSchema,
        Iterator(row("x", "k")))
    }
    val seconds = (System.nanoTime() - start) / 1e9
    assert(e.condition == "KINESIS_RETRIES_EXHAUSTED")
    // Ten retries with backoff capped at 5 s take 13 to 26 s; the duration alone ends these.
    assert(seconds >= 30.0 && seconds < 60, s"took $seconds s")
    val failures = "failed ([0-9]+) times".r.findFirstMatchIn(e.getMessage).map(_.group(1).toInt)
    assert(failures.exists(_ > 11), e.getMessage)
  }

  test("S4: a record error code that retrying cannot fix fails at once") {
    val fake = new FaultInjectingClient(None, entryFailureRate = 1.0, entryFailureCode = "KMSAccessDeniedException")
    val e = intercept[KinesisException] {
      writeTask(options(server, "s", FixedClientFactory(fake)), textSchema, Iterator(row("x", "k")))
    }
    assert(e.condition == "KINESIS_RECORD_REJECTED")
    assert(e.getMessage.contains("KMSAccessDeniedException"))
    assert(fake.recordedCalls.size == 1)
  }

  test("whole calls that fail with a transient error are retried and every record lands") {
    val stream = freshStream(1)
    val unavailable = SdkKinesisException.builder().statusCode(503).message("unavailable")
      .awsErrorDetails(AwsErrorDetails.builder().errorCode("ServiceUnavailable").build()).build()
    val fake = new FaultInjectingClient(Some(realClient), callFailure = n => if (n < 2) Some(unavailable) else None)
    val metrics = writeTask(options(server, stream, FixedClientFactory(fake)), textSchema,
      (0 until 700).iterator.map(i => row(s"r$i", "k")))
    assert(readAll(server, stream).map(_.text).sorted == (0 until 700).map(i => s"r$i").sorted)
    assert(metrics(SinkMetrics.RetriedRecords) > 0)
    assert(metrics(SinkMetrics.ThrottledRecords) == 0)
  }

  test("Done 6 (JVM side): aggregation=kpl packs rows per shard; every row comes back once, in its own shard") {
    val stream = freshStream(4)
    val fake = new FaultInjectingClient(Some(realClient))
    val n = 3000
    val metrics = writeTask(options(server, stream, FixedClientFactory(fake), Map("aggregation" -> "kpl")), textSchema,
      (0 until n).iterator.map(i => row(s"agg-$i" + ("." * (i % 200)), s"key-$i")))
    val raw = readAll(server, stream)
    assert(raw.size < n / 10, s"${raw.size} Kinesis records for $n rows: not aggregated")
    val shards = syncClient(server).listShards(
      software.amazon.awssdk.services.kinesis.model.ListShardsRequest.builder().streamName(stream).build()).shards()
    import io.sparkkinesis.compat.CollectionConverters._
    val ranges = shards.asScala.map(s =>
      s.shardId() ->
        (BigInt(s.hashKeyRange().startingHashKey()), BigInt(s.hashKeyRange().endingHashKey()))).toMap
    val users = raw.flatMap { r =>
      val records = io.sparkkinesis.kpl.Kpl.deaggregate(r.data, r.partitionKey).getOrElse(fail("not an aggregate"))
      records.foreach { u =>
        val (lo, hi) = ranges(r.shardId)
        val h = ShardMap.hashKey(u.partitionKey, u.explicitHashKey.orNull)
        assert(h >= lo && h <= hi, s"${u.partitionKey} is outside ${r.shardId}")
      }
      records.map(u => new String(u.data, StandardCharsets.UTF_8))
    }
    assert(users.sorted == (0 until n).map(i => s"agg-$i" + ("." * (i % 200))).sorted)
    assert(metrics(SinkMetrics.RecordsWritten) == n)
    assert(fake.recordedCalls.forall(c => c.bytes <= 5L * Mi))
  }

  test("aggregation=kpl with ordering=perKey keeps every key's order under partial failures") {
    val stream = freshStream(3)
    val fake = new FaultInjectingClient(Some(realClient), seed = 9, entryFailureRate = 0.3)
    val keys = 30
    val perKey = 200
    writeTask(options(server, stream, FixedClientFactory(fake),
        Map("aggregation" -> "kpl", "ordering" -> "perKey", "aggregationMaxSize" -> "1k")), textSchema,
      (0 until keys * perKey).iterator.map(i => row(s"k${i % keys}:${i / keys}", s"k${i % keys}")))
    assert(fake.injectedFailures >= 10, s"only ${fake.injectedFailures} aggregates failed")
    val users = readAll(server, stream).flatMap { r =>
      io.sparkkinesis.kpl.Kpl.deaggregate(r.data, r.partitionKey).getOrElse(fail("not an aggregate"))
    }
    assert(users.size == keys * perKey)
    users.groupBy(_.partitionKey).foreach { case (key, records) =>
      val seqs = records.map(u => new String(u.data, StandardCharsets.UTF_8).split(':')(1).toInt)
      assert(seqs == (0 until perKey), s"key $key arrived in order $seqs")
    }
  }

  test("aggregation=kpl, ordering=perKey, maxRecordDelay: rows that come while the shard's aggregate is in flight " +
    "leave together in the next one, not one small aggregate per tick queued behind it (issue 39)") {
    val stream = freshStream(1)
    val fake = new FaultInjectingClient(Some(realClient))
    fake.responseDelayMillis = 100
    val rows = 400
    val w = new KinesisDataWriter(options(server, stream, FixedClientFactory(fake),
        Map("aggregation" -> "kpl", "ordering" -> "perKey", "maxRecordDelay" -> "5ms")),
      SinkSchema.of(textSchema, None), 0, 1L)
    val started = System.nanoTime()
    // Rows as a real-time task gets them, spread over about half a second: each tick (5 ms) finds a few.
    (0 until rows).foreach { i =>
      w.write(row(s"k${i % 10}:${i / 10}", s"k${i % 10}"))
      java.util.concurrent.locks.LockSupport.parkNanos(1000000L)
    }
    w.commit()
    w.close()
    val seconds = (System.nanoTime() - started) / 1e9
    // One aggregate in flight at a time, each call 100 ms or more: the rows' half second (and the last call) take
    // about 6 calls; one aggregate per tick would take about a hundred, one after another (over 10 s).
    val calls = fake.recordedCalls.size
    assert(calls <= 20, f"$calls PutRecords calls for $rows rows over $seconds%.1f s")
    val users = readAll(server, stream).flatMap { r =>
      io.sparkkinesis.kpl.Kpl.deaggregate(r.data, r.partitionKey).getOrElse(fail("not an aggregate"))
    }
    assert(users.size == rows)
    users.groupBy(_.partitionKey).foreach { case (key, records) =>
      val seqs = records.map(u => new String(u.data, StandardCharsets.UTF_8).split(':')(1).toInt)
      assert(seqs == (0 until rows / 10), s"key $key arrived in order $seqs")
    }
  }

  test("aggregation=kpl: a row too large for an aggregate goes on its own after its shard's aggregate, in order") {
    val stream = freshStream(2)
    val fake = new FaultInjectingClient(Some(realClient), seed = 4, entryFailureRate = 0.2)
    val keys = 5
    val n = 600
    def data(i: Int) = s"k${i % keys}:$i:" + (if (i % 50 == 7) "B" * 3000 else "")
    val metrics = writeTask(options(server, stream, FixedClientFactory(fake),
        Map("aggregation" -> "kpl", "ordering" -> "perKey", "aggregationMaxSize" -> "2k")), textSchema,
      (0 until n).iterator.map(i => row(data(i), s"k${i % keys}")))
    assert(fake.injectedFailures > 0)
    val raw = readAll(server, stream)
    val users = raw.flatMap { r =>
      io.sparkkinesis.kpl.Kpl.deaggregate(r.data, r.partitionKey)
        .map(_.map(u => u.partitionKey -> new String(u.data, StandardCharsets.UTF_8)))
        .getOrElse(Seq(r.partitionKey -> r.text))
    }
    assert(raw.count(r => io.sparkkinesis.kpl.Kpl.deaggregate(r.data, r.partitionKey).isEmpty) == n / 50)
    assert(users.map(_._2).sorted == (0 until n).map(data).sorted)
    users.groupBy(_._1).foreach { case (key, records) =>
      val seqs = records.map(_._2.split(':')(1).toInt)
      assert(seqs == seqs.sorted, s"key $key arrived out of order")
    }
    assert(metrics(SinkMetrics.RecordsWritten) == n)
  }

  test("aggregation=kpl: throttled ListShards calls of the shard map are retried and do not fail the task") {
    val stream = freshStream(2)
    def throttled = software.amazon.awssdk.services.kinesis.model.LimitExceededException.builder()
      .message("Rate exceeded for stream").statusCode(400)
      .awsErrorDetails(AwsErrorDetails.builder().errorCode("LimitExceededException").build()).build()
    val fake = new FaultInjectingClient(Some(realClient), listShardsFailure = n => if (n < 2) Some(throttled) else None)
    val n = 200
    val metrics = writeTask(options(server, stream, FixedClientFactory(fake), Map("aggregation" -> "kpl")), textSchema,
      (0 until n).iterator.map(i => row(s"listed-$i", s"key-$i")))
    assert(fake.listShardsCalls == 3, "two throttled calls, then the listing")
    val users = readAll(server, stream).flatMap { r =>
      io.sparkkinesis.kpl.Kpl.deaggregate(r.data, r.partitionKey).getOrElse(fail("not an aggregate"))
    }
    assert(users.map(u => new String(u.data, StandardCharsets.UTF_8)).sorted == (0 until n).map(i => s"listed-$i").sorted)
    assert(metrics(SinkMetrics.RecordsWritten) == n)
  }

  test("the sink's shard map is listed once per executor and stream, and again after it expires") {
    val stream = freshStream(2)
    val ref = io.sparkkinesis.aws.StreamRef(stream, None, None)
    val client = realClient
    val first = ShardMap.forStream(client, ref, nowMillis = 1000L)
    assert(ShardMap.forStream(client, ref, nowMillis = 1000L + ShardMap.ExpiryMillis - 1) eq first)
    val later = ShardMap.forStream(client, ref, nowMillis = 1000L + ShardMap.ExpiryMillis)
    assert(!(later eq first) && later.shardCount == 2)
  }
}
