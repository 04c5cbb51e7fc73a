package io.sparkkinesis.source

import io.sparkkinesis.offsets.ShardPosition
import io.sparkkinesis.prefetch.ShardReport

/**
 * Trigger.AvailableNow: the query reads what had arrived by `millis` (when Spark prepared the trigger), then stops.
 * Rounds cut each shard at its first record that arrived later.
 */
private[sparkkinesis] final case class AvailableNowCutoff(millis: Long) {

  /**
   * Whether everything that had arrived by the cutoff is planned for a shard: its latest report reached the
   * planned position `planned` and either met a later record or found the shard caught up with nothing buffered.
   */
  def finished(planned: ShardPosition, report: Option[ShardReport]): Boolean =
    report.exists(r => r.end == planned && (r.pastCutoff || (r.caughtUp && r.bufferedRecords == 0)))
}
