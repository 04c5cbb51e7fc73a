package io.sparkkinesis.source

import java.nio.charset.StandardCharsets

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{FileSystem, Path}

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
    val in = fs.open(path)
    try OffsetJson.read(new String(in.readAllBytes(), StandardCharsets.UTF_8), s"the initial offset file $path")
    finally in.close()
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
