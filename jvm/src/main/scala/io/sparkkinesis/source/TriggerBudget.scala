package io.sparkkinesis.source

/** How a per-trigger budget (`maxRecordsPerTrigger`, `maxBytesPerTrigger`) is shared by the shards of a round. */
private[sparkkinesis] object TriggerBudget {

  /**
   * `budget` split over `n` shards so that the parts add up to exactly the budget: each gets the floor, and the
   * remainder goes one by one to shards chosen in turn from `round` to round. No budget: no limit for any shard.
   */
  def split(budget: Option[Long], n: Int, round: Long): IndexedSeq[Long] = budget match {
    case None => IndexedSeq.fill(n)(Long.MaxValue)
    case Some(total) =>
      val base = total / n
      val extra = total % n
      val offset = (round % n).toInt
      (0 until n).map(i => base + (if (((i - offset + n) % n) < extra) 1L else 0L))
  }
}
