package io.sparkkinesis.kpl

import java.nio.charset.StandardCharsets.UTF_8
import java.security.MessageDigest
import java.util.Base64

import io.sparkkinesis.compat.CollectionConverters._
import scala.util.Random

import com.fasterxml.jackson.databind.{JsonNode, ObjectMapper}
import org.scalatest.funsuite.AnyFunSuite

class KplSuite extends AnyFunSuite {
  private val Mi = 1024L * 1024

  // ---- helpers: an independent, minimal protobuf encoder for hand-made inputs ----

  private def varint(value: Long): Array[Byte] = {
    val out = Array.newBuilder[Byte]
    var v = value
    while ((v & ~0x7FL) != 0) { out += ((v & 0x7F) | 0x80).toByte; v >>>= 7 }
    out += v.toByte
    out.result()
  }
  private def tag(field: Int, wireType: Int): Array[Byte] = varint((field.toLong << 3) | wireType)
  private def vfield(field: Int, v: Long): Array[Byte] = tag(field, 0) ++ varint(v)
  private def lfield(field: Int, payload: Array[Byte]): Array[Byte] = tag(field, 2) ++ varint(payload.length) ++ payload
  private def sfield(field: Int, s: String): Array[Byte] = lfield(field, s.getBytes(UTF_8))
  private def md5(b: Array[Byte]): Array[Byte] = MessageDigest.getInstance("MD5").digest(b)
  private def frame(body: Array[Byte]): Array[Byte] = Kpl.magic ++ body ++ md5(body)

  private def bytes(s: String): Array[Byte] = s.getBytes(UTF_8)
  private def bytes(rnd: scala.util.Random, n: Int): Array[Byte] = { val b = new Array[Byte](n); rnd.nextBytes(b); b }

  /** Runs `records` through an aggregator and returns everything it hands back, in order. */
  private def aggregateAll(records: Seq[UserRecord], max: Long): Seq[Aggregate] = {
    val agg = new KplAggregator(max)
    records.flatMap(agg.add) ++ agg.flush().toSeq
  }

  private def aggregateOne(records: Seq[UserRecord]): Aggregate = {
    val out = aggregateAll(records, Mi)
    assert(out.size == 1)
    out.head
  }

  /** What a reader gets from one Kinesis record: its user records, or the record itself when not an aggregate. */
  private def read(a: Aggregate): IndexedSeq[UserRecord] =
    Kpl.deaggregate(a.bytes, a.partitionKey).getOrElse(IndexedSeq(UserRecord(a.partitionKey, a.explicitHashKey,
          a.bytes)))

  private def plainSize(r: UserRecord): Long = r.partitionKey.getBytes(UTF_8).length.toLong + r.data.length

  private val keyPool: IndexedSeq[String] =
    (0 until 300).map(i => s"key-$i") ++ Seq("", "clé", "ключ", "鍵", "🔑-emoji", "k" * 256, "ü" * 256)

  private def randomRecord(rnd: Random, keys: IndexedSeq[String]): UserRecord = {
    val size = rnd.nextInt(20) match {
      case 0 => 0
      case 1 => 127 + rnd.nextInt(3) // around the one/two byte varint boundary
      case 2 => 16383 + rnd.nextInt(3) // around the two/three byte boundary
      case 3 => rnd.nextInt(300000)
      case _ => rnd.nextInt(2000)
    }
    val ehk = if (rnd.nextInt(3) == 0) Some(BigInt(128, rnd).toString) else None
    UserRecord(keys(rnd.nextInt(keys.size)), ehk, bytes(rnd, size))
  }

  // ---- round trips and limits ----

  test("random records survive aggregation and de-aggregation in order") {
    val rnd = new Random(7)
    (1 to 40).foreach { round =>
      val keys = keyPool.take(1 + rnd.nextInt(keyPool.size)) // few keys: heavy sharing; many: 2-byte indices
      val max = if (rnd.nextBoolean()) Mi else 1000L + rnd.nextInt(500000)
      val records = (0 until rnd.nextInt(400) + 1).map(_ => randomRecord(rnd, keys)).filter(plainSize(_) <= max)
      val out = aggregateAll(records, max)
      assert(out.flatMap(read) == records, s"round $round")
      out.foreach { a =>
        assert(a.sizeBytes <= max, s"round $round: $a")
        assert(a.count == read(a).size)
        assert(a.partitionKey == read(a).head.partitionKey)
        assert(a.explicitHashKey == read(a).head.explicitHashKey)
      }
    }
  }

  test("drain hands back the records in progress, in order, and empties the aggregator") {
    val rnd = new Random(11)
    (1 to 20).foreach { round =>
      val records = (0 until rnd.nextInt(50) + 1).map(_ => randomRecord(rnd, keyPool.take(5)))
      val aggregator = new KplAggregator(Mi)
      val done = records.flatMap(aggregator.add)
      assert(done.flatMap(read) ++ aggregator.drain() == records, s"round $round")
      assert(aggregator.pendingRecords == 0 && aggregator.flush().isEmpty)
    }
    val small = new KplAggregator(60)
    val plain = UserRecord("k", None, bytes("x" * 50)) // too big for the framing: held to be sent unwrapped
    assert(small.add(plain).isEmpty && small.drain() == Seq(plain) && small.flush().isEmpty)
  }

  test("sizes are predicted exactly, no aggregate could have taken the next record, oversized records are handled") {
    val rnd = new Random(11)
    (1 to 20).foreach { round =>
      val max = 500L + rnd.nextInt(100000)
      val agg = new KplAggregator(max)
      (0 until 500).foreach { _ =>
        val r = randomRecord(rnd, keyPool.take(1 + rnd.nextInt(20)))
        val held = agg.pendingBytes
        val ifAdded = agg.sizeIfAdded(r)
        val alone = new KplAggregator(max).sizeIfAdded(r)
        if (plainSize(r) > max) {
          intercept[IllegalArgumentException](agg.add(r))
          assert(agg.pendingBytes == held)
        } else {
          val result = agg.add(r)
          result match {
            case Some(done) =>
              assert(done.sizeBytes == held, s"round $round: the size reported before flushing is exact")
              assert(ifAdded > max || (done.count == 1 && !Kpl.isAggregated(done.bytes)))
            case None =>
              assert(held == 0 || ifAdded <= max)
          }
          val expected =
            if (result.isEmpty && held > 0) ifAdded // r joined the aggregate in progress
            else if (alone <= max) alone // r started a new aggregate
            else plainSize(r) // r waits to go out unwrapped
          assert(agg.pendingBytes == expected, s"round $round")
          assert(expected <= max)
        }
      }
      val last = agg.pendingBytes
      agg.flush().foreach(a => assert(a.sizeBytes == last))
      assert(agg.pendingRecords == 0 && agg.pendingBytes == 0 && agg.flush().isEmpty)
    }
  }

  test("an aggregate closes exactly at the limit") {
    val r = UserRecord("pk", None, Array.fill[Byte](100)(1))
    val one = new KplAggregator(Mi).sizeIfAdded(r)
    val agg0 = new KplAggregator(Mi)
    agg0.add(r)
    val two = agg0.sizeIfAdded(r)
    val exact = new KplAggregator(two)
    assert(exact.add(r).isEmpty && exact.add(r).isEmpty)
    assert(exact.add(r).map(_.count).contains(2))
    val short = new KplAggregator(two - 1)
    assert(short.add(r).isEmpty)
    assert(short.add(r).map(a => (a.count, a.sizeBytes)).contains((1, one)))
  }

  test("a record too big for the framing is emitted alone, unwrapped; one too big even plain is rejected") {
    val agg = new KplAggregator(100)
    assert(agg.add(UserRecord("a", None, bytes("small"))).isEmpty)
    val big = UserRecord("b", Some("42"), Array.fill[Byte](95)(7)) // 96 bytes plain, more with the framing
    val first = agg.add(big)
    assert(first.map(_.count).contains(1) && first.exists(a => Kpl.isAggregated(a.bytes)))
    assert(agg.pendingRecords == 1 && agg.pendingBytes == 96)
    val tooBig = UserRecord("c", None, Array.fill[Byte](100)(7))
    val e = intercept[IllegalArgumentException](agg.add(tooBig))
    assert(e.getMessage.contains("101 bytes") && e.getMessage.contains("100"))
    assert(agg.pendingRecords == 1, "a rejected record leaves the aggregator as it was")
    val next = agg.add(UserRecord("d", None, bytes("after")))
    assert(next.contains(Aggregate("b", Some("42"), big.data, 1)))
    assert(!Kpl.isAggregated(next.get.bytes))
    assert(agg.flush().map(read).contains(IndexedSeq(UserRecord("d", None, bytes("after")))))
  }

  test("the outer keys are the first record's; key tables are de-duplicated; no hash key table unless needed") {
    val records = Seq(
      UserRecord("x", None, bytes("1")), UserRecord("y", None, bytes("2")), UserRecord("x", None, bytes("3")))
    val a = aggregateOne(records)
    assert(a.partitionKey == "x" && a.explicitHashKey.isEmpty && a.count == 3)
    val expectedBody = sfield(1, "x") ++ sfield(1, "y") ++
      lfield(3, vfield(1, 0) ++ lfield(3, bytes("1"))) ++
      lfield(3, vfield(1, 1) ++ lfield(3, bytes("2"))) ++
      lfield(3, vfield(1, 0) ++ lfield(3, bytes("3")))
    assert(a.bytes.sameElements(frame(expectedBody)))

    val withHashKeys = Seq(UserRecord("x", None, bytes("1")), UserRecord("y", Some("9"), bytes("2")),
      UserRecord("z", Some("9"), bytes("3")))
    val b = aggregateOne(withHashKeys)
    assert(b.partitionKey == "x" && b.explicitHashKey.isEmpty)
    val expectedWithHashKeys = sfield(1, "x") ++ sfield(1, "y") ++ sfield(1, "z") ++ sfield(2, "9") ++
      lfield(3, vfield(1, 0) ++ lfield(3, bytes("1"))) ++
      lfield(3, vfield(1, 1) ++ vfield(2, 0) ++ lfield(3, bytes("2"))) ++
      lfield(3, vfield(1, 2) ++ vfield(2, 0) ++ lfield(3, bytes("3")))
    assert(b.bytes.sameElements(frame(expectedWithHashKeys)))
  }

  test("user records and aggregates compare by content") {
    assert(UserRecord("k", None, bytes("v")) == UserRecord("k", None, bytes("v")))
    assert(UserRecord("k", None, bytes("v")).hashCode == UserRecord("k", None, bytes("v")).hashCode)
    assert(UserRecord("k", None, bytes("v")) != UserRecord("k", None, bytes("w")))
    assert(UserRecord("k", None, bytes("v")) != UserRecord("k", Some("1"), bytes("v")))
    assert(Aggregate("k", None, bytes("v"), 1) == Aggregate("k", None, bytes("v"), 1))
  }

  test("UTF-8 sizes of keys match String.getBytes, including unpaired surrogates") {
    val rnd = new Random(3)
    (1 to 2000).foreach { _ =>
      val s = new String(Array.fill(rnd.nextInt(20))(rnd.nextInt(5) match {
        case 0 => (0xD800 + rnd.nextInt(0x800)).toChar // surrogates, paired by chance or not
        case 1 => rnd.nextInt(0x80).toChar
        case 2 => (0x80 + rnd.nextInt(0x780)).toChar
        case _ => rnd.nextInt(0x10000).toChar
      }))
      assert(Kpl.utf8Length(s) == s.getBytes(UTF_8).length, s.map(_.toInt.toHexString))
    }
  }

  // ---- reading: what is and is not an aggregate ----

  test("data without the magic prefix is not an aggregate") {
    val body = sfield(1, "k") ++ lfield(3, vfield(1, 0) ++ lfield(3, bytes("v")))
    val noMagic = Array[Byte](0, 0, 0, 0) ++ body ++ md5(body)
    assert(!Kpl.isAggregated(noMagic) && Kpl.deaggregate(noMagic, "k").isEmpty)
    Seq(Array.emptyByteArray, bytes("hello"), bytes("{\"json\": true}"), Kpl.magic,
      Kpl.magic ++ md5(Array.emptyByteArray))
      .foreach(b => assert(Kpl.deaggregate(b, "k").isEmpty))
    assert(Kpl.deaggregate(null, "k").isEmpty)
    assert(Kpl.deaggregate(frame(body), "k").contains(IndexedSeq(UserRecord("k", None, bytes("v")))))
  }

  test("a corrupted digest, body or magic byte makes it a plain record") {
    val a = aggregateOne(Seq(UserRecord("k", None, bytes("one")), UserRecord("l", Some("5"), bytes("two"))))
    assert(Kpl.isAggregated(a.bytes))
    a.bytes.indices.foreach { i =>
      val broken = a.bytes.clone()
      broken(i) = (broken(i) ^ 0x10).toByte
      assert(!Kpl.isAggregated(broken) && Kpl.deaggregate(broken, "k").isEmpty, s"byte $i")
    }
  }

  test("every truncation and every extension of a valid aggregate gives None") {
    val records =
      (0 until 20).map(i => UserRecord(s"k${i % 3}", if (i % 2 == 0) Some(i.toString) else None, bytes("v" * i)))
    val a = aggregateOne(records)
    (0 until a.bytes.length).foreach(n => assert(Kpl.deaggregate(a.bytes.take(n), "k").isEmpty, s"length $n"))
    assert(Kpl.deaggregate(a.bytes :+ 0.toByte, "k").isEmpty)
  }

  test("random bytes never throw, with or without valid framing") {
    val rnd = new Random(5)
    (1 to 20000).foreach { i =>
      val body = bytes(rnd, rnd.nextInt(if (i % 10 == 0) 2000 else 60))
      Kpl.deaggregate(body, "k") // arbitrary bytes
      Kpl.deaggregate(Kpl.magic ++ body, "k")
      Kpl.deaggregate(frame(body), "k") // reaches the protobuf reader
    }
  }

  test("mutated valid bodies with a recomputed digest never throw") {
    val rnd = new Random(9)
    val records = (0 until 30).map(_ => randomRecord(rnd, keyPool.take(40))).map(r => r.copy(data = r.data.take(50)))
    val a = aggregateOne(records)
    val body = a.bytes.slice(4, a.bytes.length - 16)
    var parsed = 0
    (1 to 20000).foreach { _ =>
      val m = body.clone()
      (0 to rnd.nextInt(4)).foreach(_ => m(rnd.nextInt(m.length)) = rnd.nextInt(256).toByte)
      val cut = if (rnd.nextInt(4) == 0) m.take(rnd.nextInt(m.length)) else m
      if (Kpl.deaggregate(frame(cut), "k").isDefined) parsed += 1
    }
    assert(parsed > 0, "some mutations still parse, so the fuzzing reached deep into records")
  }

  test("unknown fields of every wire type are skipped, fields may come in any order, tags are ignored") {
    val fixed64 = tag(15, 1) ++ Array.fill[Byte](8)(0x7F)
    val fixed32 = tag(16, 5) ++ Array.fill[Byte](4)(-1)
    val group = tag(17, 3) ++ vfield(1, 5) ++ tag(18, 3) ++ sfield(2, "nested") ++ tag(18, 4) ++ tag(17, 4)
    val unknown = vfield(9, Long.MinValue) ++ fixed64 ++ fixed32 ++ lfield(10, bytes("ignored")) ++ group
    val tagMsg = sfield(1, "tagkey") ++ sfield(2, "tagvalue")
    val record1 = unknown ++ lfield(3, bytes("old")) ++ lfield(4, tagMsg) ++ vfield(2, 1) ++ lfield(3, bytes("one")) ++
      vfield(1, 1)
    val record2 = lfield(3, bytes("two")) ++ unknown ++ vfield(1, 0)
    val body = lfield(3, record1) ++ unknown ++ sfield(2, "h0") ++ sfield(1, "p0") ++ lfield(3, record2) ++
      sfield(2, "h1") ++ unknown ++ sfield(1, "p1")
    assert(Kpl.deaggregate(frame(body), "outer").contains(IndexedSeq(
          UserRecord("p1", Some("h1"), bytes("one")), UserRecord("p0", None, bytes("two")))))
  }

  test("structurally invalid bodies give None") {
    val ok = lfield(3, vfield(1, 0) ++ lfield(3, bytes("v")))
    val cases = Map(
      "no records" -> sfield(1, "k"),
      "partition key index out of range" -> (sfield(1, "k") ++ lfield(3, vfield(1, 1) ++ lfield(3, bytes("v")))),
      "hash key index without a table" -> (sfield(1, "k") ++ lfield(3,
        vfield(1, 0) ++ vfield(2, 0) ++ lfield(3, bytes("v")))),
      "huge index" -> (sfield(1, "k") ++ lfield(3, vfield(1, -1L) ++ lfield(3, bytes("v")))),
      "missing data" -> (sfield(1, "k") ++ lfield(3, vfield(1, 0))),
      "missing partition key index" -> (sfield(1, "k") ++ lfield(3, lfield(3, bytes("v")))),
      "field number 0" -> (sfield(1, "k") ++ ok ++ vfield(0, 1)),
      "wire type 6" -> (sfield(1, "k") ++ ok ++ tag(5, 6)),
      "stray end group" -> (sfield(1, "k") ++ ok ++ tag(5, 4)),
      "unclosed group" -> (sfield(1, "k") ++ ok ++ tag(5, 3) ++ vfield(1, 1)),
      "mismatched end group" -> (sfield(1, "k") ++ ok ++ tag(5, 3) ++ tag(6, 4)),
      "deeply nested groups" -> (sfield(1, "k") ++ ok ++ (1 to 1000).flatMap(_ => tag(5, 3)) ++ (1 to 1000).flatMap(_ =>
        tag(5, 4))),
      "length past the end" -> (sfield(1, "k") ++ ok ++ tag(10, 2) ++ varint(5) ++ bytes("abc")),
      "truncated fixed64" -> (sfield(1, "k") ++ ok ++ tag(10, 1) ++ bytes("abc")),
      "eleven-byte varint" -> (sfield(1, "k") ++ ok ++ tag(10, 0) ++ Array.fill[Byte](10)(-1) ++ Array[Byte](1))
    )
    cases.foreach { case (name, body) => assert(Kpl.deaggregate(frame(body), "k").isEmpty, name) }
    assert(Kpl.deaggregate(frame(sfield(1, "k") ++ ok), "k").isDefined, "the valid base case")
    // A known field with an unexpected wire type is an unknown field: skipped, so required data goes missing.
    assert(Kpl.deaggregate(frame(sfield(1, "k") ++ lfield(3, vfield(1, 0) ++ vfield(3, 7))), "k").isEmpty)
    assert(Kpl.deaggregate(frame(sfield(1, "k") ++ vfield(3, 1) ++ ok), "k").map(_.size).contains(1))
  }

  // ---- golden: fixtures written by aws-kinesis-agg (tests/fixtures/make_kpl_fixtures.py) ----

  private val fixtures = Seq("agg-3-records", "agg-shared-keys", "agg-explicit-hash-keys")

  private def resource(name: String): Array[Byte] = {
    val in = getClass.getResourceAsStream(s"/kpl/$name")
    assert(in != null, s"missing test resource kpl/$name: run tests/fixtures/make_kpl_fixtures.py")
    try in.readAllBytes()
    finally in.close()
  }

  private def optText(n: JsonNode): Option[String] = if (n == null || n.isNull) None else Some(n.asText)

  fixtures.foreach { name =>
    test(
      s"golden: $name from aws-kinesis-agg de-aggregates to what its generator put in, and we write the same bytes") {
      val blob = resource(s"$name.bin")
      val json = new ObjectMapper().readTree(new String(resource(s"$name.json"), UTF_8))
      val expected = json.get("records").elements().asScala.map { r =>
        UserRecord(r.get("partitionKey").asText, optText(r.get("explicitHashKey")),
          Base64.getDecoder.decode(r.get("data").asText))
      }.toIndexedSeq
      assert(expected.nonEmpty)
      assert(Kpl.isAggregated(blob))
      assert(Kpl.deaggregate(blob, json.get("outerPartitionKey").asText).contains(expected))

      val ours = aggregateOne(expected)
      assert(ours.partitionKey == json.get("outerPartitionKey").asText)
      assert(ours.explicitHashKey == optText(json.get("outerExplicitHashKey")))
      assert(ours.count == expected.size)
      assert(ours.bytes.toSeq == blob.toSeq, "byte-for-byte what aws-kinesis-agg wrote")
    }
  }
}
