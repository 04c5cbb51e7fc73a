package io.sparkkinesis.sink

import scala.util.Random

import org.scalatest.funsuite.AnyFunSuite

class PutRecordsBatcherSuite extends AnyFunSuite {
  private val Mi = 1024L * 1024
  private val limits = PutLimits(maxRecordsPerRequest = 500, maxRequestBytes = 5 * Mi, maxRecordBytes = Mi)

  private def batches(entries: Seq[PutEntry], l: PutLimits = limits): Seq[Seq[PutEntry]] = {
    val b = new PutRecordsBatcher(l)
    entries.flatMap(b.add) ++ b.flush().toSeq
  }

  test("random mixes of sizes never break a limit, keep input order and lose nothing") {
    val rnd = new Random(42)
    (1 to 20).foreach { round =>
      val entries = (0 until rnd.nextInt(3000) + 1).map { i =>
        val key = "k" * (1 + rnd.nextInt(256))
        val size = if (rnd.nextInt(10) == 0) Mi - key.length - rnd.nextInt(10) else rnd.nextInt(20000).toLong
        PutEntry(key, Array.emptyByteArray, size + key.length, i)
      }
      val out = batches(entries)
      assert(out.flatten.map(_.position) == entries.map(_.position), s"round $round")
      out.foreach { batch =>
        assert(batch.nonEmpty)
        assert(batch.size <= 500)
        assert(batch.map(_.bytes).sum <= 5 * Mi)
      }
    }
  }

  test("a batch closes at exactly 500 entries") {
    val out = batches((0 until 1001).map(i => PutEntry("k", Array[Byte](1), 2, i)))
    assert(out.map(_.size) == Seq(500, 500, 1))
  }

  test("a batch closes before the byte limit would be passed") {
    val five = (0 until 6).map(i => PutEntry("k", Array.emptyByteArray, Mi, i))
    assert(batches(five).map(_.size) == Seq(5, 1))
  }

  test("smaller configured limits are honoured") {
    val out = batches((0 until 10).map(i => PutEntry("k", Array.emptyByteArray, 100, i)), PutLimits(3, 250, 100))
    assert(out.map(_.size) == Seq(2, 2, 2, 2, 2))
  }
}
