package io.sparkkinesis.source

import java.nio.file.Files
import java.util.Optional
import java.util.concurrent.ConcurrentLinkedQueue
import java.util.concurrent.atomic.AtomicInteger

import io.sparkkinesis.compat.CollectionConverters._

import org.apache.spark.api.java.function.VoidFunction2
import org.apache.spark.sql.{Dataset, Row}
import org.apache.spark.sql.streaming.Trigger
import org.scalatest.funsuite.AnyFunSuite

import io.sparkkinesis.offsets.{KinesisSourceOffset, RecordPosition, ShardKey, ShardPosition}
import io.sparkkinesis.reader.{FetchTaskSpec, Prefetcher, ShardCut}
import io.sparkkinesis.testing.{Integration, LocalKinesisServer, LocalKinesisServers, SharedSparkSession}
import io.sparkkinesis.testing.TestStreams._

/**
 * The streaming source from the JVM API (`spark.readStream.format("kinesis")`), on kinesalite: every record once
 * across a restart from the checkpoint, and read limits honoured batch by batch. The records are put with the SDK.
 */
@Integration
class KinesisStreamingSourceSuite extends AnyFunSuite with LocalKinesisServers with SharedSparkSession {
  import KinesisStreamingSourceSuite._

  private def server: LocalKinesisServer = kinesalite

  /** Runs one AvailableNow query from `checkpoint` and returns its batches: (batch id, record data) pairs. */
  private def drain(
      stream: String,
      checkpoint: String,
      extra: Map[String, String] = Map.empty,
      on: LocalKinesisServer = server,
      trigger: Trigger = Trigger.AvailableNow()): Seq[(Long, String)] = {
    val sink = new Collector
    val query = spark.readStream.format("kinesis")
      .options(options(on, stream) ++ Map("initialPosition" -> "trim_horizon") ++ extra).load()
      .selectExpr("CAST(data AS STRING) AS data")
      .writeStream.foreachBatch(sink).option("checkpointLocation", checkpoint)
      .trigger(trigger).start()
    assert(query.awaitTermination(180000L), s"the $trigger query did not end within 3 minutes")
    query.exception.foreach(e => fail(e))
    sink.rows.asScala.toSeq
  }

  test("every batch an AvailableNow run logs has records: none is run for a listing that changed nothing") {
    val stream = freshStream(server, "source-no-empty", 3)
    val checkpoint = Files.createTempDirectory("kinesis-source").toString
    put(server, stream, (0 until 300).map(i => s"k${i % 41}" -> s"r$i"))
    val rows = drain(stream, checkpoint)
    assert(rows.map(_._2).sorted == (0 until 300).map(i => s"r$i").sorted)
    // The last listing of the run (AvailableNow lists once more before it ends) used to drop the offset's pinned
    // first records, which made an offset Spark had not seen, and a batch with nothing in it.
    val logged = new java.io.File(checkpoint, "offsets").list().filter(_.forall(_.isDigit)).map(_.toLong).sorted.toSeq
    assert(logged == rows.map(_._1).distinct.sorted, s"batches in the offset log: $logged")
  }

  test("AvailableNow reads every record once, and a restart from the checkpoint reads only what came after") {
    val stream = freshStream(server, "source-restart", 3)
    val checkpoint = Files.createTempDirectory("kinesis-source").toString
    put(server, stream, (0 until 1500).map(i => s"k${i % 41}" -> s"r$i"))
    val first = drain(stream, checkpoint).map(_._2)
    assert(first.size == 1500 && first.toSet == (0 until 1500).map(i => s"r$i").toSet)

    put(server, stream, (1500 until 2000).map(i => s"k${i % 41}" -> s"r$i"))
    val second = drain(stream, checkpoint).map(_._2)
    assert(second.sorted == (1500 until 2000).map(i => s"r$i").sorted)
  }

  /** The last line of the newest file of the query's offset log: the source's offset, for failure messages. */
  private def lastOffset(checkpoint: String): String = {
    val files = new java.io.File(checkpoint, "offsets").listFiles().filter(_.getName.forall(_.isDigit))
    if (files.isEmpty) "(none)"
    else scala.io.Source.fromFile(files.maxBy(_.getName.toLong)).getLines().toSeq.last
  }

  private def records(from: Int, until: Int): Seq[(String, String)] =
    (from until until).map(i => s"k${i % 53}" -> s"r$i")

  test("AvailableNow reads the children of a shard split before the run: 4,000 of 4,000 (kinesis-mock)") {
    val mock = kinesisMock
    val stream = freshStream(mock, "source-split", 2)
    put(mock, stream, records(0, 2000))
    split(mock, stream, "shardId-000000000000")
    put(mock, stream, records(2000, 4000))
    awaitClockPastArrivals(mock, stream)
    val checkpoint = Files.createTempDirectory("kinesis-source").toString
    val read = drain(stream, checkpoint, on = mock).map(_._2)
    val everyRecordOnce = read.size == 4000 && read.toSet == records(0, 4000).map(_._2).toSet
    assert(everyRecordOnce, s"read ${read.size} of 4000; last offset: ${lastOffset(checkpoint)}")
  }

  test("AvailableNow reads every shard after a split and a merge before the run: 4,000 of 4,000 (kinesalite)") {
    val stream = freshStream(server, "source-split-merge", 2)
    put(server, stream, records(0, 2000))
    split(server, stream, "shardId-000000000000")
    put(server, stream, records(2000, 3000))
    val open = shards(server, stream).filter(_.sequenceNumberRange().endingSequenceNumber() == null)
      .sortBy(s => BigInt(s.hashKeyRange().startingHashKey()))
    // The upper child of the split and the old second shard are adjacent.
    merge(server, stream, open(1).shardId(), open(2).shardId())
    put(server, stream, records(3000, 4000))
    awaitClockPastArrivals(server, stream)
    val checkpoint = Files.createTempDirectory("kinesis-source").toString
    val read = drain(stream, checkpoint).map(_._2)
    val everyRecordOnce = read.size == 4000 && read.toSet == records(0, 4000).map(_._2).toSet
    assert(everyRecordOnce, s"read ${read.size} of 4000; last offset: ${lastOffset(checkpoint)}")
  }

  test("Trigger.Once reads everything at its start in one batch: 20 pages a shard or more, a split, a small buffer") {
    val stream = freshStream(server, "source-once", 2)
    put(server, stream, records(0, 4000))
    split(server, stream, "shardId-000000000000")
    put(server, stream, records(4000, 8000))
    awaitClockPastArrivals(server, stream)
    // Pages of 100 records: about 20 full pages on each first shard before the split, as many again on the shard
    // not split, 10 on each child. A 1 MiB buffer holds fewer records than the backlog, so the batch's end is found
    // over several rounds and its records are read again. Trigger.Once ignores maxRecordsPerTrigger, as Spark says.
    val once = Map("maxRecordsPerFetch" -> "100", "fetchBufferSize" -> "1m", "maxRecordsPerTrigger" -> "500")
    val checkpoint = Files.createTempDirectory("kinesis-source").toString
    val first = drain(stream, checkpoint, once, trigger = Trigger.Once())
    assert(first.map(_._1).distinct.size == 1, s"batches: ${first.groupBy(_._1).map { case (b, rs) => b -> rs.size }}")
    val read = first.map(_._2)
    assert(read.size == 8000 && read.toSet == records(0, 8000).map(_._2).toSet,
      s"read ${read.size} of 8000; last offset: ${lastOffset(checkpoint)}")

    // The next run reads exactly what came after, across a merge made in between.
    val open = shards(server, stream).filter(_.sequenceNumberRange().endingSequenceNumber() == null)
      .sortBy(s => BigInt(s.hashKeyRange().startingHashKey()))
    merge(server, stream, open(1).shardId(), open(2).shardId())
    put(server, stream, records(8000, 9000))
    awaitClockPastArrivals(server, stream)
    val second = drain(stream, checkpoint, once, trigger = Trigger.Once())
    assert(second.map(_._1).distinct.size == 1)
    assert(second.map(_._2).sorted == records(8000, 9000).map(_._2).sorted,
      s"read ${second.size} of 1000; last offset: ${lastOffset(checkpoint)}")
  }

  test("maxRecordsPerTrigger caps every batch, and the batches together hold every record once") {
    val stream = freshStream(server, "source-limit", 2)
    put(server, stream, (0 until 600).map(i => s"k${i % 13}" -> s"r$i"))
    val batches = drain(stream, Files.createTempDirectory("kinesis-source").toString,
      Map("maxRecordsPerTrigger" -> "100")).groupBy(_._1).map { case (b, rs) => b -> rs.map(_._2) }
    assert(batches.values.forall(_.size <= 100), batches.map { case (b, rs) => b -> rs.size })
    assert(batches.size >= 6)
    assert(batches.values.flatten.toSeq.sorted == (0 until 600).map(i => s"r$i").sorted)
  }

  test("maxRecordsPerTrigger follows the backlog: one hot shard of twenty fills nearly every batch") {
    val stream = freshStream(server, "source-hot-shard", 20)
    put(server, stream, (0 until 50000).map(i => "hot" -> s"r$i"))
    val batches = drain(stream, Files.createTempDirectory("kinesis-source").toString,
      Map("maxRecordsPerTrigger" -> "10000")).groupBy(_._1).toSeq.sortBy(_._1).map(_._2.size)
    assert(batches.sum == 50000, batches)
    // The opening round reads one short page per shard (reader.Prefetcher), so the first batch may be short; every
    // later batch but the one that empties the backlog reads at least 9,000 records.
    assert(batches.drop(1).dropRight(1).forall(_ >= 9000), batches)
    assert(batches.forall(_ <= 10000), batches)
  }

  test("streams added to streamName between runs start at initialPosition; a stream removed fails, named") {
    val (a, b) = (freshStream(server, "source-a", 1), freshStream(server, "source-b", 1))
    val checkpoint = Files.createTempDirectory("kinesis-source").toString
    put(server, a, (0 until 100).map(i => "k" -> s"a$i"))
    put(server, b, (0 until 100).map(i => "k" -> s"b$i"))
    assert(drain(a, checkpoint).map(_._2).sorted == (0 until 100).map(i => s"a$i").sorted)

    put(server, a, (100 until 150).map(i => "k" -> s"a$i"))
    // `b` is new to the checkpoint: read from its initial position (trim_horizon here), `a` from where it was.
    val both = drain(s"$a,$b", checkpoint).map(_._2)
    assert(both.sorted == ((100 until 150).map(i => s"a$i") ++ (0 until 100).map(i => s"b$i")).sorted)

    val e = intercept[Exception](drain(b, checkpoint))
    val messages = Iterator.iterate[Throwable](e)(_.getCause).takeWhile(_ != null).map(_.getMessage).mkString("\n")
    assert(messages.contains("[KINESIS_STREAMS_CHANGED]") && messages.contains(s"'$a'"), messages)
    assert(messages.contains("new checkpoint location"), messages)
  }

  test("an opening round of more shards than a task reads at once leaves the rest to later batches, none lost") {
    // Two tasks (local[2]) of 20 shards each: the first FetchThreads.Size of each task are read, and with no time
    // budget the other 4 are left to read-ahead and the next round. Every record once, over more than one batch.
    val stream = freshStream(server, "source-opening-budget", 40)
    put(server, stream, (0 until 2000).map(i => s"k$i" -> s"r$i"))
    val budget = Prefetcher.openingBudgetMillis
    Prefetcher.openingBudgetMillis = -1L
    val batches =
      try drain(stream, Files.createTempDirectory("kinesis-source").toString).groupBy(_._1).toSeq.sortBy(_._1)
      finally Prefetcher.openingBudgetMillis = budget
    assert(batches.flatMap(_._2.map(_._2)).sorted == (0 until 2000).map(i => s"r$i").sorted)
    assert(batches.size >= 2 && batches.head._2.size < 2000, batches.map { case (b, rs) => b -> rs.size })
  }

  test("a run's first prefetch round is its opening round (one short page per shard), the next ones are not") {
    val stream = freshStream(server, "source-opening", 2)
    put(server, stream, (0 until 3000).map(i => s"k${i % 37}" -> s"r$i"))
    spark.sparkContext
    val seen = new ConcurrentLinkedQueue[FetchTaskSpec]()
    val recording = new PrefetchJob {
      override def run(tasks: Seq[FetchTaskSpec]): Seq[ShardCut] = {
        tasks.foreach(seen.add)
        SparkPrefetchJob.run(tasks)
      }
    }
    val dir = Files.createTempDirectory("kinesis-source").resolve("sources").resolve("0")
    val source = new KinesisMicroBatchStream(
      SourceOptions.parse((options(server, stream) + ("initialPosition" -> "trim_horizon")).asJava), dir.toString,
      prefetchJob = recording)
    try {
      source.prepareForTriggerAvailableNow()
      val start = source.initialOffset()
      val first = source.latestOffset(start, source.getDefaultReadLimit)
      val opening = seen.asScala.toSeq
      assert(opening.nonEmpty && opening.forall(_.opening), opening)
      seen.clear()
      source.latestOffset(first, source.getDefaultReadLimit)
      assert(seen.asScala.forall(!_.opening), seen)
    } finally source.stop()
  }

  test("a batch of many shards has no more tasks than Spark has slots, each reading its shards' ranges in order") {
    val stream = freshStream(server, "source-grouped", 6)
    put(server, stream, (0 until 300).map(i => s"k${i % 37}" -> s"r$i"))
    val written = readAll(server, stream)
    spark.sparkContext
    val dir = Files.createTempDirectory("kinesis-source").resolve("sources").resolve("0")
    val source = new KinesisMicroBatchStream(
      SourceOptions.parse((options(server, stream) + ("initialPosition" -> "trim_horizon")).asJava), dir.toString)
    try {
      source.prepareForTriggerAvailableNow()
      val start = source.initialOffset()
      var end = start
      val deadline = System.nanoTime() + 60L * 1000 * 1000 * 1000
      while (end.asInstanceOf[KinesisSourceOffset].shards.values.count(_.isInstanceOf[ShardPosition.After]) < 6) {
        assert(System.nanoTime() < deadline, s"not every shard planned within 60 s: $end")
        end = source.latestOffset(start, source.getDefaultReadLimit)
      }
      val partitions = source.planInputPartitions(start, end)
      // local[2]: two slots, so two tasks for the six shards' ranges.
      assert(partitions.length == 2, partitions.toSeq)
      val factory = source.createReaderFactory()
      val read = partitions.toSeq.flatMap { p =>
        val reader = factory.createReader(p)
        try
          Iterator.continually(reader).takeWhile(_.next()).map(r => (r.get().getString(3), r.get().getString(4))).toSeq
        finally reader.close()
      }
      // Every record of the batch once, and within each shard in the order the stream holds them.
      val planned = end.asInstanceOf[KinesisSourceOffset].shards.collect { case (k, ShardPosition.After(p)) =>
        k.shardId -> p.sequenceNumber
      }
      val expected = written.filter(r => BigInt(r.sequenceNumber) <= BigInt(planned(r.shardId)))
      assert(read.size == expected.size && expected.size >= 6)
      for ((shard, records) <- expected.groupBy(_.shardId))
        assert(read.filter(_._1 == shard).map(_._2) == records.map(_.sequenceNumber), s"shard $shard")
    } finally source.stop()
  }

  test("the initial offset is read from the checkpoint once per run, not on every trigger before the first batch") {
    val stream = freshStream(server, "source-initial", 2)
    spark.sparkContext // the source takes the active session's Hadoop configuration
    val dir = Files.createTempDirectory("kinesis-source").resolve("sources").resolve("0")
    val source = new KinesisMicroBatchStream(
      SourceOptions.parse((options(server, stream) + ("initialPosition" -> "latest")).asJava), dir.toString)
    try {
      val first = source.initialOffset()
      val file = dir.resolve("kinesis-initial-offset.json")
      assert(Files.exists(file))
      Files.delete(file)
      // A second trigger without a batch: the same offset, and no checkpoint read (or write) behind it.
      assert(source.initialOffset() == first)
      assert(!Files.exists(file), "the checkpoint was read or written again")
    } finally source.stop()
  }

  /**
   * Spark's trigger loop on a source, without the batches: asks for the next offset again and again, 10 ms apart
   * when nothing moved (Spark's spark.sql.streaming.pollingDelay), for 60 s at most; `context` follows a timeout.
   */
  private final class TriggerLoop(source: KinesisMicroBatchStream, context: => String = "") {
    var offset: KinesisSourceOffset = source.initialOffset().asInstanceOf[KinesisSourceOffset]
    private val deadline = System.nanoTime() + 60L * 1000 * 1000 * 1000

    def step(): Boolean = {
      val next = source.latestOffset(offset, source.getDefaultReadLimit).asInstanceOf[KinesisSourceOffset]
      val moved = next != offset
      offset = next
      if (!moved) Thread.sleep(10)
      moved
    }

    def metric(name: String): Long = source.metrics(Optional.of(offset)).get(name).toLong

    def until(what: String)(done: => Boolean): Unit =
      while (!done) {
        assert(System.nanoTime() < deadline, s"timed out waiting until $what; offset $offset$context")
        step()
      }
  }

  test("a quiet query runs no prefetch job: the driver looks at the shards itself, and a new record costs one round") {
    val stream = freshStream(server, "source-quiet", 3)
    put(server, stream, records(0, 30))
    spark.sparkContext
    val jobs = new AtomicInteger()
    val visited = new ConcurrentLinkedQueue[Seq[ShardKey]]() // the shards of each round, in order
    val counting = new PrefetchJob {
      override def run(tasks: Seq[FetchTaskSpec]): Seq[ShardCut] = {
        jobs.incrementAndGet()
        visited.add(tasks.flatMap(_.shards.map(_.key)))
        SparkPrefetchJob.run(tasks)
      }
    }
    val dir = Files.createTempDirectory("kinesis-source").resolve("sources").resolve("0")
    val source = new KinesisMicroBatchStream(
      SourceOptions.parse((options(server, stream) + ("initialPosition" -> "trim_horizon")).asJava), dir.toString,
      counting, quietAfterMillis = 2000)
    try {
      val loop = new TriggerLoop(source, s", ${jobs.get()} jobs")
      import loop._

      until("the driver watches every shard")(metric("quietShards") == 3)
      assert(offset.shards.values.map {
          case ShardPosition.After(_) => 1
          case _ => 0
        }.sum == 3, s"the 30 records are planned before the query goes quiet: $offset")
      val quietJobs = jobs.get()
      val quietOffset = offset
      // Three looks at each shard (an idleFetchPeriod apart) without a job, and nothing planned.
      until("the driver has looked at every shard three times")(metric("driverGetRecordsCalls") >= 9)
      assert(jobs.get() == quietJobs && offset == quietOffset)
      assert(metric("quietShards") == 3)

      put(server, stream, Seq("late" -> "r-late"))
      val late = readAll(server, stream).find(_.text == "r-late").get
      until("the new record is planned")(offset != quietOffset)
      assert(jobs.get() > quietJobs)
      val key = offset.shards.keys.find(_.shardId == late.shardId).get
      assert(offset.shards(key) == ShardPosition.After(RecordPosition(late.sequenceNumber, 0, lastInAggregate = true)))
      assert(offset.shards.filter(_._1 != key) == quietOffset.shards.filter(_._1 != key))
      // The other shards stay quiet: the shard with the record is the only one a round visits, while the driver
      // goes on looking at the other two. That round left it caught up: a trickle, so it goes back to the driver at
      // once, and its record cost one round, not a round every idleFetchPeriod until it is quiet again.
      assert(metric("quietShards") == 2)
      val calls = metric("driverGetRecordsCalls")
      until("the driver has looked at every shard twice more")(metric("driverGetRecordsCalls") >= calls + 6)
      assert(metric("quietShards") == 3)
      val rounds = visited.asScala.toSeq.drop(quietJobs)
      assert(rounds == Seq(Seq(key)), s"rounds after the quiet spell: $rounds")
    } finally source.stop()
  }

  test("a busy shard stays in the rounds however long a batch runs: no driver look, no driver iterator") {
    val stream = freshStream(server, "source-busy", 1)
    put(server, stream, records(0, 10))
    spark.sparkContext
    val dir = Files.createTempDirectory("kinesis-source").resolve("sources").resolve("0")
    val source = new KinesisMicroBatchStream(
      SourceOptions.parse((options(server, stream) + ("initialPosition" -> "trim_horizon")).asJava), dir.toString,
      quietAfterMillis = 2000)
    try {
      val loop = new TriggerLoop(source)
      import loop._
      val key = offset.shards.keys.head
      def planned(text: String): Boolean = {
        val r = readAll(server, stream).find(_.text == text).get
        offset.shards(key) == ShardPosition.After(RecordPosition(r.sequenceNumber, 0, lastInAggregate = true))
      }
      until("the ten records are planned")(planned("r9"))
      // Three batches, each longer than quietAfterMillis, while records keep coming: no round runs during a batch,
      // and the one after it finds records again. The shard is busy throughout; the driver never takes it for quiet.
      for (i <- 10 until 13) {
        Thread.sleep(2500)
        put(server, stream, records(i, i + 1))
        until(s"record r$i is planned")(planned(s"r$i"))
        assert(metric("quietShards") == 0, s"the busy shard went to the driver's watch after batch ${i - 9}")
      }
      assert(metric("driverGetRecordsCalls") == 0)
    } finally source.stop()
  }
}

object KinesisStreamingSourceSuite {

  /** A foreachBatch sink that keeps (batch id, data) in memory: local mode runs it in the test's JVM. */
  final class Collector extends VoidFunction2[Dataset[Row], java.lang.Long] {
    val rows = new ConcurrentLinkedQueue[(Long, String)]()
    override def call(batch: Dataset[Row], id: java.lang.Long): Unit =
      batch.collect().foreach(r => rows.add(id.longValue() -> r.getString(0)))
  }
}
