package io.sparkkinesis.source

import java.nio.charset.StandardCharsets

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{ChecksumException, FileSystem, Path}

import io.sparkkinesis.errors.KinesisErrors
import io.sparkkinesis.offsets.{KinesisSourceOffset, OffsetJson}

/**
 * Keeps the query's first offset in the source's checkpoint folder, written once before the first batch. A
 * restart (even one before anything was committed) reads it back instead of resolving `latest` again, so a
 * crash cannot move where the query starts.
 */
private[sparkkinesis] final class InitialOffsetStore(checkpointLocation: String, hadoopConf: Configuration) {
  private val path = new Path(checkpointLocation, "kinesis-initial-offset.json")

  def getOrCreate(create: => KinesisSourceOffset): KinesisSourceOffset = {
    val fs = path.getFileSystem(hadoopConf)
    if (fs.exists(path)) read(fs)
    else {
      val offset = create
      write(fs, offset)
      offset
    }
  }

  private def read(fs: FileSystem): KinesisSourceOffset = {
    val where = s"the initial offset file $path"
    val in = fs.open(path)
    val text =
      try new String(in.readAllBytes(), StandardCharsets.UTF_8)
      catch {
        case e: ChecksumException =>
          throw KinesisErrors.badOffset(where, "(not shown)",
            s"its content no longer matches the checksum written with it, so it was changed afterwards (${e.getMessage})",
            OffsetJson.Example)
      } finally in.close()
    OffsetJson.read(text, where)
  }

  private def write(fs: FileSystem, offset: KinesisSourceOffset): Unit = {
    fs.mkdirs(path.getParent)
    val tmp = new Path(path.getParent, s".${path.getName}.${java.util.UUID.randomUUID()}.tmp")
    val out = fs.create(tmp, true)
    try out.write(offset.json().getBytes(StandardCharsets.UTF_8))
    finally out.close()
    if (!fs.rename(tmp, path)) {
      fs.delete(tmp, false)
      if (!fs.exists(path)) throw new java.io.IOException(s"could not write $path")
    }
  }
}
