package io.sparkkinesis.source

import java.lang.management.ManagementFactory
import java.nio.file.Files
import java.util.concurrent.{CompletableFuture, ConcurrentHashMap}
import java.util.concurrent.atomic.AtomicLong

import org.apache.spark.sql.{ForeachWriter, Row, SparkSession}
import org.apache.spark.sql.streaming.Trigger
import software.amazon.awssdk.services.kinesis.model.{SubscribeToShardRequest, SubscribeToShardResponseHandler}

import io.sparkkinesis.fetching.{ShardFetchers, SubscriptionSource}
import io.sparkkinesis.testing.LocalKinesisServer
import io.sparkkinesis.testing.TestStreams._

/**
 * Benchmark (not a test, not part of CI; bench/realtime/idle_efo.sh runs it): the CPU an idle real-time query with
 * enhanced fan-out costs. One query on kinesis-mock (SubscribeToShard) reads an idle stream of `shards` shards
 * (default 50) in `local[2]` (two task slots: two tasks of 25 shards), in one five-minute batch; once every shard's
 * subscription is open and a settling pause has passed, the process CPU time of this JVM (driver and executor
 * alike) is measured over `seconds` (default 60) of idle and printed as a share of one core, with the threads that
 * used the most. Then a record is put and read, to show the query was reading all along.
 *
 *   SPARK_JARS_DIR=... bin/sbt 'connector/Test/runMain io.sparkkinesis.source.IdleFanOutCpu 50 60'
 */
object IdleFanOutCpu {

  def main(args: Array[String]): Unit = {
    // The JVM exits when the measurement does (threads of the SDK and Spark would keep it alive).
    val status =
      try { run(args); 0 }
      catch { case e: Throwable => e.printStackTrace(); 1 }
    sys.exit(status)
  }

  private def run(args: Array[String]): Unit = {
    val shards = args.lift(0).map(_.toInt).getOrElse(50)
    val seconds = args.lift(1).map(_.toInt).getOrElse(60)
    val server = LocalKinesisServer.start(LocalKinesisServer.KinesisMock)
    val subscribed = ConcurrentHashMap.newKeySet[String]()
    ShardFetchers.subscriptions = connection => {
      val real = SubscriptionSource.of(connection)
      new SubscriptionSource {
        override def subscribe(
            r: SubscribeToShardRequest,
            h: SubscribeToShardResponseHandler): CompletableFuture[Void] = {
          subscribed.add(r.shardId()); real.subscribe(r, h)
        }
      }
    }
    val spark = SparkSession.builder().master("local[2]").appName("IdleFanOutCpu")
      .config("spark.ui.enabled", "false").config("spark.driver.host", "127.0.0.1")
      .config("spark.driver.bindAddress", "127.0.0.1").config("spark.sql.shuffle.partitions", "2").getOrCreate()
    try {
      val stream = freshStream(server, "idle-efo", shards)
      val query = spark.readStream.format("kinesis")
        .options(options(server, stream) ++ Map("initialPosition" -> "trim_horizon", "consumerMode" -> "efo",
          "requireConsumerDeregistration" -> "true"))
        .load().selectExpr("CAST(data AS STRING) AS data")
        .writeStream.foreach(new Counted).option("checkpointLocation", Files.createTempDirectory("idle-efo").toString)
        .outputMode("update").trigger(Trigger.RealTime("5 minutes")).start()
      try {
        def waitFor(what: String, limitSeconds: Int)(done: => Boolean): Unit = {
          val deadline = System.nanoTime() + limitSeconds * 1000000000L
          while (!done) {
            query.exception.foreach(e => throw e)
            require(System.nanoTime() < deadline, s"$what: not within $limitSeconds s")
            Thread.sleep(100)
          }
        }
        waitFor(s"subscriptions on all $shards shards", 180)(subscribed.size >= shards)
        Thread.sleep(10000) // settling: start-up work (class loading, the first events) out of the window
        val os = ManagementFactory.getOperatingSystemMXBean.asInstanceOf[com.sun.management.OperatingSystemMXBean]
        val threads = ManagementFactory.getThreadMXBean
        def threadTimes: Map[String, Long] = threads.getAllThreadIds.toSeq.flatMap { id =>
          Option(threads.getThreadInfo(id)).map(i => i.getThreadName.replaceAll("[0-9]+", "N") -> id)
        }.groupBy(_._1).map { case (name, ids) =>
          name -> ids.map(i => math.max(0L, threads.getThreadCpuTime(i._2))).sum
        }
        val (cpu0, wall0, byThread0) = (os.getProcessCpuTime, System.nanoTime(), threadTimes)
        waitFor(s"$seconds s of idle", seconds + 10)(System.nanoTime() - wall0 >= seconds * 1000000000L)
        val (cpu1, wall1, byThread1) = (os.getProcessCpuTime, System.nanoTime(), threadTimes)
        require(query.recentProgress.isEmpty, "a batch ended within the window: not one real-time batch")
        val share = 100.0 * (cpu1 - cpu0) / (wall1 - wall0)
        val javaThreads = byThread1.values.sum - byThread0.values.sum
        println(
          f"IDLE-EFO shards=$shards seconds=${(wall1 - wall0) / 1e9}%.1f processCpu=${(cpu1 - cpu0) / 1e9}%.2fs " +
            f"share=$share%.2f%% of one core (Java threads ${javaThreads / 1e9}%.2fs, the rest the JVM's own: GC, JIT)")
        byThread1.map { case (n, t) => n -> (t - byThread0.getOrElse(n, 0L)) }.toSeq.sortBy(-_._2).take(6).foreach {
          case (n, t) => println(f"IDLE-EFO   thread $n%-60s ${t / 1e9}%.2fs")
        }
        val before = Counted.rows.get()
        put(server, stream, Seq("k" -> "after-idle"))
        waitFor("the record put after the idle minute", 60)(Counted.rows.get() > before)
        println("IDLE-EFO the record put after the idle window was read")
      } finally query.stop()
    } finally {
      spark.stop()
      server.stop()
    }
  }

  object Counted { val rows = new AtomicLong }

  final class Counted extends ForeachWriter[Row] {
    override def open(partitionId: Long, epochId: Long): Boolean = true
    override def process(r: Row): Unit = Counted.rows.incrementAndGet()
    override def close(errorOrNull: Throwable): Unit = ()
  }
}
