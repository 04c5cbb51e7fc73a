package io.sparkkinesis.bench

import io.sparkkinesis.offsets.{KinesisSourceOffset, OffsetJson, RecordPosition, ShardKey, ShardPosition, StartPosition}
import io.sparkkinesis.source.ShardGrouping

/**
 * The driver's planning steps alone, without Spark, at 1,000 to 20,000 shards (docs/performance.md, "Scale"): how
 * the time of each grows with the shard count shows which are linear and which are not. Each step is timed as the
 * best of `repeats` runs after a warm-up.
 *
 *   bin/sbt 'connector/Test/runMain io.sparkkinesis.bench.PlanningBench'
 */
object PlanningBench {
  private val Sizes = Seq(1000, 2000, 5000, 10000, 20000)
  private val Repeats = 3

  private def best(body: => Unit): Double = {
    body
    (1 to Repeats).map { _ =>
      val t = System.nanoTime()
      body
      (System.nanoTime() - t) / 1e6
    }.min
  }

  def main(args: Array[String]): Unit = {
    val sizes = args.headOption.map(_.split(',').toSeq.map(_.toInt)).getOrElse(Sizes)
    println(
      "shards,grouping_ms,pinning_firsts_search_ms,pinning_firsts_map_ms,offset_json_write_ms,offset_json_read_ms")
    sizes.foreach { n =>
      val keys = (0 until n).map(i => ShardKey("s", f"shardId-$i%012d"))
      val first = (i: Int) => (BigInt("49000000000000000000000000000000000000000000") + i).toString
      val from = KinesisSourceOffset(
        keys.map(k => k -> (ShardPosition.NotStarted(StartPosition.TrimHorizon): ShardPosition)).toMap)
      val to = KinesisSourceOffset(keys.zipWithIndex.map { case (k, i) =>
        k -> (ShardPosition.After(RecordPosition(first(i), 0L, lastInAggregate = true)): ShardPosition)
      }.toMap)
      val reports = keys.zipWithIndex.map { case (k, i) => (k, Some(first(i))) }
      val grouping = best(ShardGrouping.group[ShardKey](keys, 1, _ => Some("executor_1"), _ => 100L))
      // As the stream passes them today: a search through the round's reports per shard.
      val search = best(to.pinningFirsts(from, k => reports.find(_._1 == k).flatMap(_._2)))
      val map = best(to.pinningFirstsOf(from, reports.collect { case (k, Some(s)) => k -> s }.toMap))
      val pinned = to.pinningFirstsOf(from, reports.collect { case (k, Some(s)) => k -> s }.toMap)
      val json = pinned.json()
      val write = best(OffsetJson.write(pinned))
      val read = best(OffsetJson.read(json))
      println(f"$n,$grouping%.1f,$search%.1f,$map%.1f,$write%.1f,$read%.1f")
    }
  }
}
