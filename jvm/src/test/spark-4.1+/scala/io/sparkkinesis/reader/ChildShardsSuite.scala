package io.sparkkinesis.reader

import org.scalatest.funsuite.AnyFunSuite

import io.sparkkinesis.aws.ShardDescription
import io.sparkkinesis.offsets.ShardKey

/**
 * Which children of a shard that ended during a real-time task the task goes on into: those whose every parent it
 * read to the end (or that ended before the batch), not one it reads already, not one whose other parent is another
 * task's. No server: the listing is written here.
 */
class ChildShardsSuite extends AnyFunSuite {
  private def shard(id: Int, parents: Seq[Int] = Nil, closed: Boolean = false): ShardDescription =
    ShardDescription(f"shardId-$id%012d", parents.headOption.map(p => f"shardId-$p%012d"),
      parents.drop(1).headOption.map(p => f"shardId-$p%012d"), BigInt(0), BigInt(1), "0",
      if (closed) Some("9") else None)
  private def key(id: Int): ShardKey = ShardKey("s", f"shardId-$id%012d")

  test("both children of a split are adopted; a closed one is said so") {
    val listed = Seq(shard(0, closed = true), shard(1, Seq(0)), shard(2, Seq(0), closed = true))
    assert(ChildShards.adoptable(key(0), listed, Set(key(0)), Set(key(0))) == Seq(key(1) -> false, key(2) -> true))
  }

  test("a merged child waits while its other parent is not read to its end; adopted once both are") {
    val listed = Seq(shard(0, closed = true), shard(1, closed = true), shard(2, Seq(0, 1)))
    assert(ChildShards.adoptable(key(0), listed, Set(key(0)), Set(key(0), key(1))).isEmpty)
    assert(ChildShards.adoptable(key(0), listed, Set(key(0), key(1)), Set(key(0), key(1))) == Seq(key(2) -> false))
  }

  test("a child the task reads already, or another shard's child, is not adopted again") {
    val listed = Seq(shard(0, closed = true), shard(1, Seq(0)), shard(3, Seq(2)))
    assert(ChildShards.adoptable(key(0), listed, Set(key(0)), Set(key(0), key(1))).isEmpty)
    assert(ChildShards.adoptable(key(0), listed, Set(key(0), key(2)), Set(key(0))) == Seq(key(1) -> false))
  }
}
