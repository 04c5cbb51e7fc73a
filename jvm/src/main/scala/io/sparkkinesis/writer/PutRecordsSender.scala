package io.sparkkinesis.writer

import java.util.concurrent.{CompletableFuture, TimeUnit}

import scala.collection.mutable
import scala.util.control.NonFatal
import io.sparkkinesis.compat.CollectionConverters._

import software.amazon.awssdk.core.SdkBytes
import software.amazon.awssdk.services.kinesis.KinesisAsyncClient
import software.amazon.awssdk.services.kinesis.model.{PutRecordsRequest, PutRecordsRequestEntry, PutRecordsResponse}

import io.sparkkinesis.aws.{Failure, RetryPolicy}
import io.sparkkinesis.errors.KinesisErrors

/**
 * How a writer sends: the limits of each target stream's calls (by stream number), records per call, calls in
 * flight, ordering, and the retry policy of each record.
 */
private[sparkkinesis] final case class SenderSettings(
    limits: Int => PutLimits,
    maxRecordsPerRequest: Int,
    maxInFlightRequests: Int,
    perKeyOrdering: Boolean,
    retry: RetryPolicy)

/**
 * Sends one writer's records with PutRecords through the async client. All decisions are taken under the writer's
 * lock (in [[offer]] and [[flush]] on the task's thread, in [[sendWaiting]] on a tick's); the client's callbacks
 * only hand responses back. Per call:
 *  - at most `maxRecordsPerRequest` records and the stream's `maxRequestBytes` bytes, all for one stream;
 *  - at most `maxInFlightRequests` calls, and at most the [[AimdLimiter]] window of records, in flight;
 *  - only the records that failed are retried, each after its own jittered exponential pause, until its
 *    `maxRetries` or `maxRetryDuration` is spent ([[RetryPolicy]]); error codes that retrying cannot fix fail the task at once.
 * Records wait in [[PendingEntries]], whose kind sets the ordering guarantee. Waiting records are bounded:
 * [[offer]] blocks while the buffer is full, so a task holds at most a few requests' worth of data.
 * A KPL record that lands in a shard other than the one it was packed for goes to `landedElsewhere`
 * ([[MisplacedRecords]]), whose records to send again go ahead of the others of their ordering key. While the shard
 * listing that tells which records to send again is not in (it runs off the lock), the record waits in `relisting`,
 * its ordering key held, and is handed to `landedElsewhere` again when the listing ends or is due again.
 */
private[sparkkinesis] final class PutRecordsSender(
    client: KinesisAsyncClient,
    streams: SinkStreams,
    settings: SenderSettings,
    counters: SinkCounters,
    landedElsewhere: (PutEntry, String) => Relocation = (_, _) => Relocation.Nothing) extends AutoCloseable {
  import PutRecordsSender._

  private val limiter = new AimdLimiter(settings.maxRecordsPerRequest, settings.maxInFlightRequests)
  // perKey needs a deeper buffer to find distinct keys to send together.
  private val bufferRecords = settings.maxRecordsPerRequest * (if (settings.perKeyOrdering) 8 else 2)
  // Two calls' worth of bytes, of the largest calls among the streams written to so far.
  private var bufferBytes = 0L

  private val lanes = new SenderLanes(settings.perKeyOrdering, settings.maxRecordsPerRequest,
    stream => settings.limits(stream).maxRequestBytes)
  private var waiting = 0
  private var inFlightCalls = 0
  private var inFlightRecords = 0
  private val inFlight = mutable.HashSet.empty[CompletableFuture[PutRecordsResponse]]
  private val errorCodes = mutable.TreeMap.empty[String, Int]
  private var failure: Throwable = _
  // The latest whole-call error, reported as the cause when a record's budget is spent.
  private var lastCallError: Option[Throwable] = None

  // Responses handed over by the client's threads.
  private val completed = new CompletionQueue[Completion]

  // KPL records that landed in a shard the writer's listing does not show yet, with that shard, and when the next
  // listing is due (Long.MaxValue while one is under way: its end wakes the sender).
  private val relisting = mutable.ArrayBuffer.empty[(PutEntry, String, Long)]

  /** From any thread: something the task's thread waits for (a shard listing) is ready. */
  def wake(): Unit = completed.signal()

  /** Queues a record and sends what is ready; blocks while the buffer is full. Rethrows a failure. */
  def offer(entry: PutEntry): Unit = {
    throwIfFailed()
    bufferBytes = math.max(bufferBytes, 2 * settings.limits(entry.stream).maxRequestBytes)
    lanes(entry.stream).add(entry)
    waiting += 1
    handleCompleted()
    send(force = false)
    while (failure == null && overBuffer) {
      awaitProgress()
      handleCompleted()
      send(force = true)
    }
    throwIfFailed()
  }

  /**
   * Whether a record of stream number `stream` with this ordering key would now wait behind another of its key
   * (`ordering=perKey`: one in flight, or waiting).
   */
  def holds(stream: Int, orderingKey: String): Boolean = lanes(stream).holds(orderingKey)

  /**
   * Queues `entries` (made after the calls that ended are taken in) and takes calls for whatever waits, full or not,
   * as far as the limits allow, without waiting for anything: for a writer whose records must not wait for a full
   * call (`maxRecordDelay`). The calls count as in flight at once (the window, `maxInFlightRequests` and
   * `ordering=perKey` see them), but leave only when the caller [[DeferredCall.make]]s them, after letting go of the
   * writer's lock: making a call may wait (the SDK resolves credentials on the calling thread). A failure is kept for
   * the task's next [[offer]] or [[flush]] to throw.
   */
  def sendWaiting(entries: => Seq[PutEntry] = Nil): Seq[DeferredCall] = {
    val deferred = mutable.ArrayBuffer.empty[DeferredCall]
    try {
      // The calls that ended first: what they free (a key, a unit of order) is free for `entries` to see.
      handleCompleted()
      entries.foreach { e => lanes(e.stream).add(e); waiting += 1 }
      if (failure == null) send(force = true, Some(deferred))
    } catch { case NonFatal(e) => fail(e) }
    deferred.toSeq
  }

  /** Sends everything queued and waits until every record landed or the task must fail. */
  def flush(): Unit = {
    handleCompleted()
    send(force = true)
    while (failure == null && (waiting > 0 || inFlightCalls > 0 || relisting.nonEmpty)) {
      awaitProgress()
      handleCompleted()
      send(force = true)
    }
    throwIfFailed()
  }

  /** Abandons the calls in flight (the task failed or was cancelled); the shared client stays open. */
  override def close(): Unit = {
    inFlight.foreach(_.cancel(true))
    inFlight.clear()
  }

  private def overBuffer: Boolean =
    waiting >= bufferRecords || lanes.waitingBytes >= bufferBytes

  private def throwIfFailed(): Unit = if (failure != null) throw failure

  private def fail(t: Throwable): Unit = if (failure == null) failure = t

  /**
   * Starts calls while the limits allow. Without `force` only full calls leave (the task is still producing
   * rows); with it, any ready record does (flushing, or the buffer is full).
   */
  private def send(force: Boolean, deferred: Option[mutable.ArrayBuffer[DeferredCall]] = None): Unit = {
    val now = System.nanoTime()
    lanes.promoteDue(now)
    var more = true
    while (more && failure == null && inFlightCalls < settings.maxInFlightRequests) {
      val size = limiter.nextCallSize(inFlightRecords)
      more = size > 0 && lanes.pick(size, force).exists { i =>
        val batch = lanes(i).take(size, settings.limits(i).maxRequestBytes)
        if (batch.nonEmpty) start(i, batch, deferred)
        batch.nonEmpty
      }
    }
  }

  /** Starts a call, or with `deferred` adds it there, to be made later (the writer's lock let go). */
  private def start(stream: Int, batch: Seq[PutEntry], deferred: Option[mutable.ArrayBuffer[DeferredCall]]): Unit = {
    val ref = streams(stream)
    val request = PutRecordsRequest.builder().records(batch.map { e =>
      val b = PutRecordsRequestEntry.builder().partitionKey(e.partitionKey).data(SdkBytes.fromByteArrayUnsafe(e.data))
      if (e.explicitHashKey != null) b.explicitHashKey(e.explicitHashKey)
      b.build()
    }.asJava)
    ref.arn.fold(request.streamName(ref.name))(request.streamARN)
    waiting -= batch.size
    inFlightCalls += 1
    inFlightRecords += batch.size
    counters.putRecordsCalls += 1
    val future = deferred match {
      case Some(calls) =>
        val call = new DeferredCall(client, request.build())
        calls += call
        call.result
      case None =>
        try client.putRecords(request.build())
        catch { case e: RuntimeException => CompletableFuture.failedFuture[PutRecordsResponse](e) }
    }
    inFlight += future
    future.whenComplete { (response: PutRecordsResponse, error: Throwable) =>
      completed.add(Completion(stream, batch, future, response, error))
    }
  }

  /**
   * Waits until a call completes, a shard listing ends, or the next retry or listing is due (at most a second, then
   * the caller looks again).
   */
  private def awaitProgress(): Unit = {
    val now = System.nanoTime()
    val due = (lanes.nextDueNanos ++ relisting.iterator.map(_._3)).reduceOption(_ min _)
    completed.await(math.min(MaxWaitNanos, due.map(_ - now).getOrElse(MaxWaitNanos)))
  }

  private def handleCompleted(): Unit = {
    completed.drain().foreach(handle)
    // Asking again is cheap until a listing has ended or is due: MisplacedRecords keeps one per stream.
    if (relisting.nonEmpty && failure == null) {
      val again = relisting.toList
      relisting.clear()
      again.foreach { case (e, shardId, _) => landed(e, shardId) }
    }
  }

  /**
   * A record that was sent has landed in `shardId` (with `aggregation=kpl`: perhaps not the shard it was packed for):
   * counts it and frees its ordering key, after queueing what is to be sent again in place of its misplaced copies;
   * or, while the shard listing does not tell what that is, keeps it (and its key) in `relisting`.
   */
  private def landed(e: PutEntry, shardId: String): Unit = {
    val again =
      if (e.packedFor == null || shardId == null || shardId == e.packedFor) Relocation.Nothing
      else
        try landedElsewhere(e, shardId)
        catch { case NonFatal(t) => fail(t); Relocation.Nothing }
    val pending = lanes(e.stream)
    // Packing again may complete aggregates of other streams (the largest held leaves): each to its lane.
    again.more.foreach(m => lanes(m.stream).add(m))
    waiting += again.more.size
    if (again.later) relisting += ((e, shardId, again.lookAgainNanos))
    else {
      // Records sent again count as written when their new copies land.
      counters.recordsWritten += e.userRecords - again.resentRecords
      counters.resentRecords += again.resentRecords
      pending.addFirst(again.first) // of e's stream
      waiting += again.first.size
      pending.landed(e)
    }
  }

  private def handle(c: Completion): Unit = {
    inFlight -= c.future
    inFlightCalls -= 1
    inFlightRecords -= c.batch.size
    val ref = streams(c.stream)
    val pending = lanes(c.stream)
    settings.retry.answered(Option(c.error))
    if (c.error != null) {
      val cause = Failure.unwrap(c.error)
      Failure.of(cause) match {
        case f if f.retryable =>
          val throttled = f == Failure.Throttled
          if (throttled) limiter.onCall(throttled = true)
          lastCallError = Some(cause)
          c.batch.foreach(e => retryLater(pending, e, Failure.code(cause), throttled, f))
        case _ => fail(Failure.toUserError(cause, "PutRecords", ref.toString))
      }
    } else {
      val results = c.response.records().asScala
      if (results.size != c.batch.size) {
        fail(KinesisErrors.serviceError("PutRecords", ref.toString,
            new IllegalStateException(
              s"the response has ${results.size} results for ${c.batch.size} records")))
        return
      }
      var throttled = false
      c.batch.iterator.zip(results.iterator).foreach { case (e, r) =>
        r.errorCode() match {
          case null =>
            counters.bytesWritten += e.bytes
            landed(e, r.shardId())
          case code if RetryableCodes.contains(code) =>
            val isThrottle = ThrottleCodes.contains(code)
            throttled ||= isThrottle
            retryLater(pending, e, code, isThrottle, Failure.Transient)
          case code => fail(KinesisErrors.recordRejected(e.position, ref.toString, code, r.errorMessage()))
        }
      }
      limiter.onCall(throttled)
    }
  }

  private def retryLater(
      pending: PendingEntries,
      e: PutEntry,
      code: String,
      throttled: Boolean,
      failure: Failure): Unit = {
    errorCodes(code) = errorCodes.getOrElse(code, 0) + 1
    if (throttled) counters.throttledRecords += 1
    val now = System.nanoTime()
    e.failures += 1
    if (e.failures == 1) e.firstFailureNanos = now
    if (settings.retry.exhausted(failure, e.failures, now - e.firstFailureNanos)) {
      val stream = streams(e.stream).toString
      fail(lastCallError match {
        case Some(last) if failure == Failure.Unreachable =>
          settings.retry.giveUp(s"PutRecords on stream '$stream'", e.failures, now - e.firstFailureNanos, last)(
            exhaustedError(e, stream))
        case _ => exhaustedError(e, stream)
      })
    } else {
      counters.retriedRecords += 1
      e.notBeforeNanos = now + TimeUnit.MILLISECONDS.toNanos(settings.retry.delayMillis(failure, e.failures))
      pending.retry(e)
      waiting += 1
    }
  }

  private def exhaustedError(e: PutEntry, stream: String): Throwable =
    KinesisErrors.putRetriesExhausted(e.position, stream, e.failures, errorCodes.map { case (k, n) => s"$k ($n)" },
      lastCallError)

  /** The AIMD window, for tests and logs. */
  private[writer] def window: Int = limiter.window
}

/**
 * A PutRecords call the sender took (its records count as in flight) that leaves when [[make]] is called, on a
 * thread that holds no writer's lock. [[result]] completes with the call's outcome; cancelling it (the writer was
 * aborted) before [[make]] keeps the call from leaving, and after it cancels the call.
 */
private[writer] final class DeferredCall(client: KinesisAsyncClient, request: PutRecordsRequest) {
  val result = new CompletableFuture[PutRecordsResponse]()

  def make(): Unit =
    if (!result.isDone) {
      val call =
        try client.putRecords(request)
        catch { case NonFatal(e) => CompletableFuture.failedFuture[PutRecordsResponse](e) }
      call.whenComplete { (response: PutRecordsResponse, error: Throwable) =>
        if (error != null) result.completeExceptionally(error) else result.complete(response)
      }
      result.whenComplete((_: PutRecordsResponse, _: Throwable) => if (result.isCancelled) call.cancel(true))
    }
}

private[sparkkinesis] object PutRecordsSender {
  private val MaxWaitNanos = TimeUnit.SECONDS.toNanos(1)

  /** Per-record error codes worth another try; any other code fails the task. */
  val RetryableCodes: Set[String] = Set("ProvisionedThroughputExceededException", "InternalFailure",
    "KMSThrottlingException", "ServiceUnavailable")
  val ThrottleCodes: Set[String] = Set("ProvisionedThroughputExceededException", "KMSThrottlingException")

  private final case class Completion(
      stream: Int,
      batch: Seq[PutEntry],
      future: CompletableFuture[PutRecordsResponse],
      response: PutRecordsResponse,
      error: Throwable)
}
