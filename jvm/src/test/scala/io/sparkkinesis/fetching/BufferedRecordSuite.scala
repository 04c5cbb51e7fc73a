package io.sparkkinesis.fetching

import java.time.Instant

import org.scalatest.funsuite.AnyFunSuite
import software.amazon.awssdk.core.SdkBytes
import software.amazon.awssdk.services.kinesis.model.Record

/** What buffered records cost the heap, measured, against the estimate `fetchBufferSize` is counted in. */
class BufferedRecordSuite extends AnyFunSuite {

  private def usedHeap(): Long = {
    val runtime = Runtime.getRuntime
    (1 to 4).foreach { _ => System.gc(); Thread.sleep(50) }
    runtime.totalMemory() - runtime.freeMemory()
  }

  test("200,000 buffered records of 100 bytes take at most 1.5 times their heapBytes (payload alone is far below)") {
    val n = 200000
    val random = new java.util.Random(7)
    val before = usedHeap()
    val kept = new Array[BufferedRecord](n)
    var i = 0
    while (i < n) {
      val data = new Array[Byte](100)
      random.nextBytes(data)
      // As GetRecords gives them: a 56-digit sequence number, a partition key and the data, per record.
      val record = Record.builder().sequenceNumber(f"4968049541683000588564514794980680047769905658966153$i%04d")
        .partitionKey(s"customer-${i % 1000}").data(SdkBytes.fromByteArray(data))
        .approximateArrivalTimestamp(Instant.ofEpochMilli(1000L + i)).build()
      val buffered = BufferedRecord.fromKinesis(record, SubRecordFilter.KeepAll).head
      buffered.position.sequence // reading and cutting compare positions, which keeps their numbers
      kept(i) = buffered
      i += 1
    }
    val measured = usedHeap() - before
    val estimated = kept.iterator.map(_.heapBytes).sum
    val payload = kept.iterator.map(_.size).sum
    info(s"heap measured $measured bytes, heapBytes $estimated, payload $payload")
    assert(measured <= estimated * 3 / 2, s"measured $measured bytes, estimated $estimated")
    // The premise: counting data and keys alone (the old accounting) undercounts the heap several times over.
    assert(payload * 2 < measured, s"payload $payload, measured $measured")
    assert(kept.forall(_ != null))
  }
}
