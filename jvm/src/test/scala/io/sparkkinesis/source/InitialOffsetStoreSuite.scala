package io.sparkkinesis.source

import java.nio.charset.StandardCharsets
import java.nio.file.Files

import org.apache.hadoop.conf.Configuration
import org.scalatest.funsuite.AnyFunSuite

import io.sparkkinesis.errors.KinesisException
import io.sparkkinesis.offsets.{KinesisSourceOffset, ShardKey, ShardPosition}

/** The query's first offset, kept in its checkpoint: written once, read back as written, never guessed. */
class InitialOffsetStoreSuite extends AnyFunSuite {
  private val offset = KinesisSourceOffset(Map(ShardKey("orders", "shardId-000000000000") -> ShardPosition.Ended))

  test("the offset is written once and read back on every later start, without calling the creator again") {
    val dir = Files.createTempDirectory("initial-offset").toString
    val store = new InitialOffsetStore(dir, new Configuration())
    assert(store.getOrCreate(offset) == offset)
    assert(new InitialOffsetStore(dir, new Configuration()).getOrCreate(fail("must not create again")) == offset)
  }

  test("a malformed initial offset file fails with [KINESIS_INVALID_OFFSET] naming the file, never starting over") {
    val dir = Files.createTempDirectory("initial-offset")
    val file = dir.resolve("kinesis-initial-offset.json")
    Files.write(file, """{"version":1,"streams":[]}""".getBytes(StandardCharsets.UTF_8))
    val e = intercept[KinesisException] {
      new InitialOffsetStore(dir.toString, new Configuration()).getOrCreate(fail("must not create a new offset"))
    }
    assert(e.condition == "KINESIS_INVALID_OFFSET")
    assert(e.getMessage.contains("kinesis-initial-offset.json") && e.getMessage.contains("'streams'"), e.getMessage)
    assert(new String(Files.readAllBytes(file), StandardCharsets.UTF_8) == """{"version":1,"streams":[]}""")
  }

  test("an initial offset file changed after it was written (its checksum no longer matches) fails, named") {
    val dir = Files.createTempDirectory("initial-offset")
    new InitialOffsetStore(dir.toString, new Configuration()).getOrCreate(offset)
    val file = dir.resolve("kinesis-initial-offset.json")
    assert(Files.exists(dir.resolve(".kinesis-initial-offset.json.crc")), "the premise: Hadoop wrote a checksum")
    Files.write(file,
      new String(Files.readAllBytes(file), StandardCharsets.UTF_8).replace("true", "tru")
        .getBytes(StandardCharsets.UTF_8))
    val e = intercept[KinesisException] {
      new InitialOffsetStore(dir.toString, new Configuration()).getOrCreate(fail("must not create a new offset"))
    }
    assert(e.condition == "KINESIS_INVALID_OFFSET")
    assert(e.getMessage.contains("kinesis-initial-offset.json") && e.getMessage.contains("checksum"), e.getMessage)
  }
}
