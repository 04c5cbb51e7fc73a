package io.sparkkinesis.sink

import java.util.concurrent.{CompletionException, ExecutionException, Executors, Future, Semaphore, ThreadFactory}
import java.util.concurrent.atomic.AtomicLong

import scala.collection.mutable
import scala.jdk.CollectionConverters._

import io.sparkkinesis.aws.StreamRef
import io.sparkkinesis.errors.{KinesisErrors, KinesisException}
import io.sparkkinesis.reader.{Backoff, Failure}
import software.amazon.awssdk.core.SdkBytes
import software.amazon.awssdk.services.kinesis.KinesisAsyncClient
import software.amazon.awssdk.services.kinesis.model.{PutRecordsRequest, PutRecordsRequestEntry}

/** Counters of one writer, reported as sink metrics. */
final class SinkCounters {
  val recordsWritten = new AtomicLong
  val bytesWritten = new AtomicLong
  val requests = new AtomicLong
  val retriedEntries = new AtomicLong
  val throttledEntries = new AtomicLong
}

/**
 * Sends PutRecords batches with at most `maxInFlight` requests outstanding. A batch whose entries partly fail
 * is sent again with only the failed entries, after a jittered exponential pause, up to `maxRetries` times;
 * a whole-request failure is retried the same way when it is transient. Errors that retrying cannot fix
 * (missing stream, access denied, validation) fail at once.
 */
final class PutRecordsSender(
    client: KinesisAsyncClient,
    stream: StreamRef,
    maxInFlight: Int,
    maxRetries: Int,
    counters: SinkCounters,
    backoff: Backoff = Backoff(baseMillis = 100, capMillis = 5000)) extends AutoCloseable {

  private val permits = new Semaphore(maxInFlight)
  private val pool = Executors.newFixedThreadPool(maxInFlight, new ThreadFactory {
    override def newThread(r: Runnable): Thread = {
      val t = new Thread(r, s"kinesis-sink-${stream.name}")
      t.setDaemon(true)
      t
    }
  })
  private val pending = mutable.Queue.empty[Future[_]]

  /** Queues a batch; blocks while `maxInFlight` batches are outstanding. Fails if an earlier batch failed. */
  def submit(batch: Seq[PutEntry]): Unit = {
    reapFinished()
    permits.acquire()
    try pending.enqueue(pool.submit(new Runnable { def run(): Unit = try send(batch) finally permits.release() }))
    catch { case e: Throwable => permits.release(); throw e }
  }

  /** Waits for every queued batch; rethrows the first failure. */
  def awaitAll(): Unit = while (pending.nonEmpty) await(pending.dequeue())

  override def close(): Unit = pool.shutdownNow()

  private def reapFinished(): Unit = while (pending.nonEmpty && pending.head.isDone) await(pending.dequeue())

  private def await(f: Future[_]): Unit =
    try f.get()
    catch { case e: ExecutionException => throw e.getCause }

  private def send(batch: Seq[PutEntry]): Unit = {
    var remaining = batch
    var attempt = 0
    val codes = mutable.ArrayBuffer.empty[String]
    while (remaining.nonEmpty) {
      val request = PutRecordsRequest.builder()
        .records(remaining.map(e => PutRecordsRequestEntry.builder()
          .partitionKey(e.partitionKey).data(SdkBytes.fromByteArrayUnsafe(e.data)).build()).asJava)
      stream.arn.fold(request.streamName(stream.name))(request.streamARN)
      counters.requests.incrementAndGet()
      val failed: Seq[PutEntry] =
        try {
          val results = client.putRecords(request.build()).join().records().asScala
          val failures = remaining.zip(results).filter { case (_, r) => r.errorCode() != null }
          failures.foreach { case (_, r) =>
            codes += r.errorCode()
            if (r.errorCode() == "ProvisionedThroughputExceededException") counters.throttledEntries.incrementAndGet()
          }
          val ok = remaining.size - failures.size
          counters.recordsWritten.addAndGet(ok)
          counters.bytesWritten.addAndGet(remaining.map(_.bytes).sum - failures.map(_._1.bytes).sum)
          failures.map(_._1)
        } catch {
          case e: CompletionException =>
            val cause = Option(e.getCause).getOrElse(e)
            Failure.of(cause) match {
              case Failure.Throttled | Failure.Transient =>
                codes += Failure.code(cause)
                remaining
              case Failure.NotFound => throw KinesisErrors.streamNotFound(stream.toString, cause)
              case Failure.AccessDenied => throw KinesisErrors.accessDenied(stream.toString, "PutRecords", cause)
              case _ => throw KinesisErrors.serviceError("PutRecords", stream.toString, cause)
            }
        }
      if (failed.nonEmpty) {
        if (attempt >= maxRetries)
          throw KinesisErrors.retriesExhausted(s"PutRecords of ${failed.size} record(s) to stream '$stream'",
            attempt + 1, codes, null)
        counters.retriedEntries.addAndGet(failed.size)
        Thread.sleep(backoff.delayMillis(attempt))
        attempt += 1
      }
      remaining = failed
    }
  }
}

