package io.sparkkinesis.source

import io.sparkkinesis.offsets.ShardPosition
import io.sparkkinesis.reader.ShardCut

/**
 * Trigger.AvailableNow: the query reads what had arrived by `millis` (when Spark prepared the trigger), then stops.
 * Rounds cut each shard at its first record that arrived later. Arrival times are the service's clock and the start
 * is the driver's: a record stamped after the start by a clock that runs ahead is left to the next run, never lost.
 */
private[sparkkinesis] final case class AvailableNowCutoff(millis: Long) {

  /**
   * Whether everything that had arrived by the cutoff is planned for a shard: its latest report reached the
   * planned position `planned` and either met a later record, or found an open shard caught up with nothing
   * buffered. A closed shard (`closed`: so listed, or its reader met its end) is not finished until its end is
   * planned as `Ended`: that is what makes its children readable, and they may hold records from before the cutoff.
   */
  def finished(planned: ShardPosition, report: Option[ShardCut], closed: Boolean): Boolean =
    report.exists { r =>
      r.end == planned && (r.pastCutoff || (r.caughtUp && r.bufferedRecords == 0 && !closed && !r.shardEnded))
    }
}
