package io.sparkkinesis.source

import java.nio.charset.StandardCharsets

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{FileSystem, Path}
import org.apache.spark.internal.Logging

import io.sparkkinesis.aws.ShardDescription
import io.sparkkinesis.errors.KinesisErrors
import io.sparkkinesis.offsets.{AwslabsOffsetJson, KinesisSourceOffset, ShardKey, ShardPosition, StartPosition}

/**
 * Goes on from a checkpoint of the awslabs connector. Its entry in Spark's offset log for batch N says where batch N
 * started in each shard; where the batch ended, its tasks wrote beside the log, one file per shard in
 * `<source checkpoint>/shard-source/N/`. Read here, an entry stands for the end of its batch: its positions with
 * those files laid over them. So a committed batch N is followed by what came after it, and a batch Spark runs again
 * (logged, not committed) reads what that batch's finished tasks had read, and nothing twice.
 *
 *  - A committed batch whose files are missing (kept in DynamoDB, or deleted) cannot be continued exactly: that
 *    fails with [KINESIS_FOREIGN_CHECKPOINT] and the recipe.
 *  - A closed shard their entry leaves out was read to its end by them only if lineage shows it: a shard their
 *    entry names descends from it (they go on into a shard's children only after its end). Then it is `Ended` here,
 *    so it is not read again. Otherwise it came after their last batch (split, then merged, before the move): it is
 *    read from its trim horizon, after its parents, like any shard the listing shows new.
 *  - LATEST (a shard they have read nothing from since the query started) becomes the time of the oldest entry
 *    of the log: no record of it was read, and none that arrived since is skipped (one that had arrived before a
 *    batch ran would have been read by it).
 */
private[sparkkinesis] final class AwslabsCheckpoint(sourceCheckpoint: String, hadoopConf: Configuration)
  extends Logging {
  private val source = new Path(sourceCheckpoint)
  private def root: Path = Option(source.getParent).flatMap(p => Option(p.getParent)).getOrElse(source)

  /** The offset at the end of the batch whose entry `json` is, with the shards `listed` now. */
  def endOf(json: String, listed: Map[ShardKey, ShardDescription]): KinesisSourceOffset = {
    val log = s"the offset log ${new Path(root, "offsets")}"
    val entry = AwslabsOffsetJson.readEntry(json, log)
    val fs = source.getFileSystem(hadoopConf)
    val batch = new Path(new Path(source, "shard-source"), entry.batchId.toString)
    val committed = fs.exists(new Path(new Path(root, "commits"), entry.batchId.toString))
    val ends = if (fs.exists(batch)) shardFiles(fs, batch)
    else if (committed) throw KinesisErrors.foreignCheckpointUnreadable(root.toString, entry.batchId, batch.toString)
    else Map.empty[String, AwslabsOffsetJson.Position]
    lazy val firstLogged = {
      val log = new Path(root, "offsets")
      val times = if (fs.exists(log))
        fs.listStatus(log).toSeq.filter(_.getPath.getName.forall(_.isDigit)).map(_.getModificationTime)
      else Nil
      (times :+ System.currentTimeMillis()).min
    }
    val positions = (entry.shards ++ ends).map { case (shard, p) =>
      ShardKey(entry.stream, shard) -> AwslabsOffsetJson.toShardPosition(p, firstLogged)
    }
    val readToEnd = listed.collect {
      case (k, d) if k.stream == entry.stream && d.isClosed && !positions.contains(k) =>
        k -> (if (AwslabsCheckpoint.hasDescendantIn(k, positions.keySet, listed)) ShardPosition.Ended
              else ShardPosition.NotStarted(StartPosition.TrimHorizon))
    }
    logInfo(s"Going on from the awslabs connector's batch ${entry.batchId} of stream '${entry.stream}' " +
      s"(${if (committed) "committed" else "to be run again"}; ${ends.size} shard files)")
    KinesisSourceOffset(positions ++ readToEnd)
  }

  private def shardFiles(fs: FileSystem, batch: Path): Map[String, AwslabsOffsetJson.Position] =
    fs.listStatus(batch).toSeq.filter(s => s.isFile && !s.getPath.getName.startsWith(".")).map { status =>
      val in = fs.open(status.getPath)
      val text =
        try new String(in.readAllBytes(), StandardCharsets.UTF_8)
        finally in.close()
      AwslabsOffsetJson.readShardFile(text, s"the awslabs shard file ${status.getPath}")
    }.toMap
}

private[sparkkinesis] object AwslabsCheckpoint {

  /** Whether a shard of `named` descends from `shard` (a child, a child's child, ...) by the parents `listed` gives. */
  def hasDescendantIn(shard: ShardKey, named: Set[ShardKey], listed: Map[ShardKey, ShardDescription]): Boolean = {
    val children = listed.toSeq.flatMap { case (k, d) => d.parents.map(p => ShardKey(k.stream, p) -> k) }
      .groupBy(_._1).map { case (p, cs) => p -> cs.map(_._2) }
    var seen = Set(shard)
    var frontier = children.getOrElse(shard, Nil)
    while (frontier.nonEmpty) {
      if (frontier.exists(named.contains)) return true
      seen ++= frontier
      frontier = frontier.flatMap(children.getOrElse(_, Nil)).filterNot(seen.contains).distinct
    }
    false
  }
}
