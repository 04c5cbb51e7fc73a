package io.sparkkinesis.source

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path

import io.sparkkinesis.aws.ShardDescription
import io.sparkkinesis.offsets.{AwslabsOffsetJson, KinesisSourceOffset, OffsetJson, ShardKey}

/**
 * Reads the entries of a query's offset log (`sourceCheckpoint` is the source's folder, `<checkpoint>/sources/<n>`):
 * this connector's, or one the awslabs connector wrote, read as the end of its batch ([[AwslabsCheckpoint]]) so that
 * a query moved to this connector goes on where that one stopped. Spark reads the start offset again on every
 * trigger of a restarted query: the same text gets the same value, read once.
 */
private[sparkkinesis] final class LoggedOffsets(sourceCheckpoint: String, hadoopConf: => Configuration) {
  private var last: Option[(String, KinesisSourceOffset)] = None

  /** The offset `json` is; `listed`, the shards listed now, is asked only for an awslabs entry. */
  def read(json: String, listed: => Map[ShardKey, ShardDescription]): KinesisSourceOffset = last match {
    case Some((text, offset)) if text == json => offset
    case _ =>
      val offset =
        if (AwslabsOffsetJson.isTheirs(json)) new AwslabsCheckpoint(sourceCheckpoint, hadoopConf).endOf(json, listed)
        else OffsetJson.read(json, describe)
      last = Some((json, offset))
      offset
  }

  /** The query's offset log, for errors: `<checkpoint>/offsets`. */
  def describe: String =
    Option(new Path(sourceCheckpoint).getParent).flatMap(p => Option(p.getParent))
      .map(root => s"the offset log ${new Path(root, "offsets")}").getOrElse("the offset log")
}
