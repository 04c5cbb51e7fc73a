package io.sparkkinesis.source

import java.util.concurrent.{ExecutorService, Executors, ThreadFactory, TimeUnit}
import java.util.concurrent.atomic.{AtomicInteger, AtomicLong}

import scala.concurrent.{Await, ExecutionContext, Future}
import scala.concurrent.duration.Duration
import scala.util.control.NonFatal

import org.apache.spark.internal.Logging

import io.sparkkinesis.fetching.{ShardFetcher, ShardFetchers}
import io.sparkkinesis.offsets.{ShardKey, ShardPosition}

/**
 * What a quiet query costs. While records flow, shards are read by prefetch rounds, each a small Spark job. Once no
 * round has found a record for `quietAfterMillis`, the driver looks for new records itself instead: one GetRecords
 * call of one record per shard, at the pace the executors would have polled (`idleFetchPeriod`), from where the
 * query stands. A quiet query then runs no Spark job at all; the first shard with news (a record, its end, or an
 * error for the executors to meet and report) wakes the rounds up again. The records the driver sees are not kept:
 * the round that follows reads them.
 */
private[sparkkinesis] final class QuietWatch(
    options: SourceOptions,
    quietAfterMillis: Long = QuietWatch.QuietAfterMillis)
  extends Logging {
  private var lastNewsMillis = System.currentTimeMillis()
  private var watching = false
  // The driver's own fetchers, by shard, with the position each was opened at.
  @volatile private var fetchers = Map.empty[ShardKey, (ShardPosition, ShardFetcher)]
  private var pool: Option[ExecutorService] = None
  private val lookCalls = new AtomicLong()

  /** GetRecords calls the driver has made looking for records (the `driverGetRecordsCalls` metric). */
  def calls: Long = lookCalls.get()

  /** A round found records (or shards not caught up): the query is not quiet. */
  def news(nowMillis: Long): Unit = {
    lastNewsMillis = nowMillis
    if (watching) logInfo("Records again: prefetch rounds resume")
    watching = false
    fetchers = Map.empty
  }

  /** Whether the driver looks for records instead of running rounds. */
  def quiet(nowMillis: Long): Boolean = {
    if (!watching && nowMillis - lastNewsMillis >= quietAfterMillis) {
      logInfo(s"No records for ${quietAfterMillis / 1000} s: the driver watches the shards, no prefetch jobs run")
      watching = true
    }
    watching
  }

  /**
   * The shards of `keys` with news after their positions in `offset`: records, their end, or a failure the
   * executors should meet and report (the driver does not judge it). One call per shard, in parallel.
   */
  def look(keys: Seq[ShardKey], offset: Map[ShardKey, ShardPosition]): Seq[ShardKey] = {
    implicit val ec: ExecutionContext = ExecutionContext.fromExecutorService(threads())
    val looks = keys.map(k => Future(k -> hasNews(k, offset(k))))
    looks.map(f => Await.result(f, Duration.Inf)).collect { case (k, true) => k }
  }

  private def hasNews(key: ShardKey, at: ShardPosition): Boolean =
    try {
      val fetcher = fetchers.get(key) match {
        case Some((opened, f)) if opened == at => f
        case _ =>
          val f = ShardFetchers.open(options.connection, options.streamsByName(key.stream), key.shardId,
            ShardPosition.resumeFrom(at)._1, options.fetch.copy(maxRecordsPerCall = 1))
          synchronized { fetchers = fetchers.updated(key, at -> f) }
          f
      }
      fetcher.shardEnded || {
        lookCalls.incrementAndGet()
        val page = fetcher.fetch()
        page.records.nonEmpty || page.shardEnded
      }
    } catch {
      case NonFatal(e) =>
        logInfo(s"Looking for records on $key failed (${e.getClass.getSimpleName}); a prefetch round reads it")
        true
    }

  private def threads(): ExecutorService = synchronized {
    pool.getOrElse {
      val count = new AtomicInteger()
      val created = Executors.newFixedThreadPool(QuietWatch.Threads,
        new ThreadFactory {
          override def newThread(r: Runnable): Thread = {
            val t = new Thread(r, s"kinesis-quiet-watch-${count.incrementAndGet()}")
            t.setDaemon(true)
            t
          }
        })
      pool = Some(created)
      created
    }
  }

  def close(): Unit = synchronized {
    pool.foreach { p => p.shutdownNow(); p.awaitTermination(10, TimeUnit.SECONDS) }
    pool = None
    fetchers = Map.empty
  }
}

private[sparkkinesis] object QuietWatch {

  /** How long without records before the driver takes over looking for them. */
  val QuietAfterMillis = 30000L

  /** Driver threads that make the calls (they wait on the network, not the CPU). */
  val Threads = 8
}
