package io.sparkkinesis.aws

import java.lang.management.ManagementFactory
import java.nio.file.{Files, Paths}

import io.sparkkinesis.compat.CollectionConverters._

import org.scalatest.funsuite.AnyFunSuite

import io.sparkkinesis.testing.{Integration, LocalKinesisServers, SharedSparkSession, TestStreams}

/**
 * A long-lived application: 20 queries one after another, each with keys of its own (as rotating temporary
 * credentials give), write and read a stream. Clients, threads and sockets stay bounded.
 */
@Integration
class ClientLifecycleSuite extends AnyFunSuite with LocalKinesisServers with SharedSparkSession {

  private def threads: Int = ManagementFactory.getThreadMXBean.getThreadCount

  /** Sockets this process holds open (Linux: file descriptors that point at sockets). */
  private def sockets: Int =
    Files.list(Paths.get("/proc/self/fd")).iterator().asScala
      .count(fd => scala.util.Try(Files.readSymbolicLink(fd).toString.startsWith("socket:")).getOrElse(false))

  test(
    "20 successive queries with distinct keys keep at most 16 clients of each kind, and threads and sockets bounded") {
    val stream = TestStreams.freshStream(kinesalite, "clients", 1)
    def run(i: Int): Unit = {
      val options = TestStreams.options(kinesalite, stream) ++ Map("awsAccessKeyId" -> s"rotated-key-$i")
      spark.range(10).selectExpr("CAST(id AS STRING) AS data", "'k' AS partitionKey")
        .write.format("kinesis").options(options).mode("append").save()
      assert(spark.read.format("kinesis").options(options).load().count() == 10L * (i + 1))
    }
    run(0)
    val (threadsBefore, socketsBefore) = (threads, sockets)
    (1 until 20).foreach(run) // more than the 16 clients of each kind one JVM keeps
    val (sync, async) = KinesisClients.cached
    assert(sync <= KinesisClients.MaxClients && async <= KinesisClients.MaxClients, (sync, async))
    // Clients let go are closed once their close delay has passed; then threads and sockets are back near where
    // one query left them. The bounds: 16 clients of each kind may stay open, each with a socket or two.
    val deadline = System.nanoTime() + (KinesisClients.CloseDelayMillis + 60000L) * 1000000L
    def settled = threads <= threadsBefore + 40 && sockets <= socketsBefore + 4 * KinesisClients.MaxClients
    while (!settled && System.nanoTime() < deadline) Thread.sleep(200)
    lazy val names = Thread.getAllStackTraces.keySet().asScala.toSeq.map(_.getName.replaceAll("[0-9]+", "#"))
      .groupBy(identity).map { case (k, v) => k -> v.size }.toSeq.sortBy(-_._2).take(12).mkString(", ")
    assert(settled, s"threads $threadsBefore -> $threads ($names), sockets $socketsBefore -> $sockets")
  }
}
