package io.sparkkinesis.fetching

import java.nio.charset.StandardCharsets
import java.security.MessageDigest
import java.time.Instant

import org.scalatest.funsuite.AnyFunSuite
import software.amazon.awssdk.core.SdkBytes
import software.amazon.awssdk.services.kinesis.model.Record

import io.sparkkinesis.kpl.{HashKeyRange, KplAggregator, UserRecord}

/** Issue 52: user records of KPL aggregates outside their shard's hash key range are dropped, as the KCL drops them. */
class SubRecordFilterSuite extends AnyFunSuite {
  private val Max = BigInt(2).pow(128) - 1
  private val Half = Max / 2

  private def md5(key: String): BigInt =
    BigInt(1, MessageDigest.getInstance("MD5").digest(key.getBytes(StandardCharsets.UTF_8)))

  private def record(data: Array[Byte], key: String = "outer"): Record =
    Record.builder().sequenceNumber("49680495416830005885645147949800").partitionKey(key)
      .data(SdkBytes.fromByteArray(data)).approximateArrivalTimestamp(Instant.ofEpochMilli(1000L)).build()

  private def aggregate(users: Seq[UserRecord]): Array[Byte] = {
    val agg = new KplAggregator(1024 * 1024)
    users.foreach(u => assert(agg.add(u).isEmpty))
    val out = agg.flush().get
    assert(out.count == users.size)
    out.bytes
  }

  private def user(key: String, ehk: Option[String] = None) = UserRecord(key, ehk, key.getBytes(StandardCharsets.UTF_8))

  test("a range holds the keys whose MD5 (as a 128-bit unsigned number) or explicit hash key lies in it, bounds too") {
    val keys = (0 until 2000).map(i => s"key-$i")
    val ranges = Seq((BigInt(0), Half), (Half + 1, Max), (BigInt(0), Max), (md5("key-7"), md5("key-7")),
      (BigInt(1) << 127, (BigInt(1) << 127) + (BigInt(1) << 64)))
    for ((low, high) <- ranges) {
      val range = HashKeyRange(low, high)
      keys.foreach { k =>
        val h = md5(k)
        assert(range.holds(k, None) == (h >= low && h <= high), s"$k ($h) in [$low, $high]")
      }
      Seq(low, high, low - 1, high + 1, (low + high) / 2).filter(h => h >= 0 && h <= Max).foreach { h =>
        assert(range.holds("any", Some(h.toString)) == (h >= low && h <= high), s"explicit $h in [$low, $high]")
      }
      assert(!range.holds("any", Some("not a number")) && !range.holds("any", Some((Max + 1).toString)))
    }
    // Half of the keys in each half, about: the unsigned reading (a signed one puts the upper half below zero).
    val lower = keys.count(k => HashKeyRange(0, Half).holds(k, None))
    assert(lower > 800 && lower < 1200, s"$lower of 2000 keys in the lower half")
  }

  test("an aggregate keeps the user records in its shard's range, each at its own index; the rest are counted") {
    val keys = (0 until 40).map(i => s"k$i")
    val inLower = keys.filter(k => md5(k) <= Half)
    assert(inLower.nonEmpty && inLower.size < keys.size)
    val explicitUpper = user("pinned", Some((Half + 5).toString))
    val users = keys.map(user(_)) :+ explicitUpper
    val filter = new SubRecordFilter(() => Some(HashKeyRange(0, Half)))
    val read = BufferedRecord.fromKinesis(record(aggregate(users)), filter)
    assert(read.map(_.partitionKey) == inLower)
    assert(read.map(_.position.subSequence) == users.indices.filter(i =>
      users(i).partitionKey != "pinned" &&
        md5(users(i).partitionKey) <= Half).map(_.toLong))
    assert(read.forall(!_.position.lastInAggregate), "the aggregate's last record (dropped) is the only last one")
    assert(filter.dropped == users.size - inLower.size)
    // The other child keeps the rest, the pinned record among them; every record has exactly one home.
    val other = new SubRecordFilter(() => Some(HashKeyRange(Half + 1, Max)))
    val rest = BufferedRecord.fromKinesis(record(aggregate(users)), other)
    assert((rest.map(_.partitionKey) ++ read.map(_.partitionKey)).sorted == users.map(_.partitionKey).sorted)
    assert(rest.last.position.lastInAggregate && rest.last.partitionKey == "pinned")
  }

  test("plain records are never dropped, nor anything when the filter is off or the shard's range is unknown") {
    val outside = new SubRecordFilter(() => Some(HashKeyRange(0, 0)))
    assert(BufferedRecord.fromKinesis(record("plain".getBytes(StandardCharsets.UTF_8)), outside).size == 1)
    assert(outside.dropped == 0)
    val users = (0 until 10).map(i => user(s"k$i"))
    assert(BufferedRecord.fromKinesis(record(aggregate(users)), SubRecordFilter.KeepAll).size == 10)
    assert(BufferedRecord.fromKinesis(record(aggregate(users)), new SubRecordFilter(() => None)).size == 10)
    var looked = 0
    val lazyRange = new SubRecordFilter(() => { looked += 1; Some(HashKeyRange(0, Max)) })
    BufferedRecord.fromKinesis(record("plain".getBytes(StandardCharsets.UTF_8)), lazyRange)
    assert(looked == 0, "a plain record needs no range")
    (1 to 3).foreach(_ => BufferedRecord.fromKinesis(record(aggregate(users)), lazyRange))
    assert(looked == 1, "the range is looked up once")
  }
}
