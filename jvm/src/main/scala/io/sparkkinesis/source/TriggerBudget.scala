package io.sparkkinesis.source

/** How a per-trigger budget (`maxRecordsPerTrigger`, `maxBytesPerTrigger`) is shared by the shards of a round. */
private[sparkkinesis] object TriggerBudget {

  /** `budget` split equally over `n` shards (see the weighted form). */
  def split(budget: Option[Long], n: Int, round: Long): IndexedSeq[Long] =
    split(budget, IndexedSeq.fill(n)(1L), round)

  /**
   * `budget` split over shards in proportion to `weights` (what each has waiting), so that the parts add up to
   * exactly the budget: each gets the floor of its proportional part, and the remainder goes one by one to shards
   * chosen in turn from `round` to round. No budget: no limit for any shard. Weights below 1 count as 1, so every
   * shard can always read a little and show what it has.
   */
  def split(budget: Option[Long], weights: IndexedSeq[Long], round: Long): IndexedSeq[Long] = {
    val n = weights.size
    budget match {
      case None => IndexedSeq.fill(n)(Long.MaxValue)
      case Some(_) if n == 0 => IndexedSeq.empty
      case Some(total) =>
        val w = weights.map(x => BigInt(math.max(1L, x)))
        val sum = w.sum
        val base = w.map(x => (BigInt(total) * x / sum).toLong)
        val extra = total - base.sum
        val offset = (round % n).toInt
        // The remainder is below n: one more for `extra` shards, taken in turn.
        base.indices.map(i => base(i) + (if (((i - offset + n) % n) < extra) 1L else 0L))
    }
  }
}
