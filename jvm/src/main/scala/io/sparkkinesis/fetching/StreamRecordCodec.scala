package io.sparkkinesis.fetching

import java.io.{ByteArrayInputStream, ByteArrayOutputStream, DataInputStream, DataOutputStream}
import java.nio.charset.StandardCharsets.UTF_8
import java.util.Base64

import io.sparkkinesis.compat.CollectionConverters._

import software.amazon.awssdk.core.SdkBytes
import software.amazon.awssdk.services.dynamodb.model.{AttributeValue, Record => StreamRecord}
import software.amazon.awssdk.services.kinesis.model.Record

/**
 * A DynamoDB Streams record carried through the engine as a Kinesis record, so that buffers, ranges, offsets and
 * budgets stay the engine's own: the sequence number and creation time are the record's, the partition key is its
 * `Keys` in DynamoDB JSON, and the data holds the rest in a small binary form of this codec (a version byte, then
 * the fields). `reader.KinesisSchema.DynamoDbStreams` makes the columns of it. The first byte is never the KPL
 * aggregate magic's, so the record is never taken for an aggregate.
 */
private[sparkkinesis] object StreamRecordCodec {
  private val Version: Byte = 1

  /** What the columns of a DynamoDB Streams record hold besides its sequence number, keys and time. */
  final case class Fields(
      eventId: String,
      eventName: String,
      sizeBytes: Long,
      streamViewType: String,
      identityType: Option[String],
      identityPrincipal: Option[String],
      newImage: Option[String],
      oldImage: Option[String])

  def toKinesis(r: StreamRecord): Record = {
    val s = r.dynamodb()
    val identity = Option(r.userIdentity())
    val fields = Fields(r.eventID(), r.eventNameAsString(), Option(s.sizeBytes()).map(_.longValue()).getOrElse(0L),
      s.streamViewTypeAsString(), identity.flatMap(i => Option(i.`type`())),
      identity.flatMap(i => Option(i.principalId())), image(s.newImage()), image(s.oldImage()))
    Record.builder()
      .sequenceNumber(s.sequenceNumber())
      .partitionKey(image(s.keys()).getOrElse("{}"))
      .approximateArrivalTimestamp(s.approximateCreationDateTime())
      .data(SdkBytes.fromByteArrayUnsafe(encode(fields)))
      .build()
  }

  def encode(f: Fields): Array[Byte] = {
    val bytes = new ByteArrayOutputStream(64 + f.newImage.fold(0)(_.length) + f.oldImage.fold(0)(_.length))
    val out = new DataOutputStream(bytes)
    def text(s: Option[String]): Unit = s match {
      case Some(v) =>
        val b = v.getBytes(UTF_8)
        out.writeInt(b.length)
        out.write(b)
      case None => out.writeInt(-1)
    }
    out.writeByte(Version)
    text(Option(f.eventId))
    text(Option(f.eventName))
    out.writeLong(f.sizeBytes)
    text(Option(f.streamViewType))
    text(f.identityType)
    text(f.identityPrincipal)
    text(f.newImage)
    text(f.oldImage)
    out.flush()
    bytes.toByteArray
  }

  def decode(data: Array[Byte]): Fields = {
    val in = new DataInputStream(new ByteArrayInputStream(data))
    def text(): Option[String] = in.readInt() match {
      case -1 => None
      case n =>
        val b = new Array[Byte](n)
        in.readFully(b)
        Some(new String(b, UTF_8))
    }
    val version = in.readByte()
    require(version == Version, s"not a DynamoDB Streams record of this connector (version byte $version)")
    val eventId = text().orNull
    val eventName = text().orNull
    val size = in.readLong()
    Fields(eventId, eventName, size, text().orNull, text(), text(), text(), text())
  }

  /** An item (keys or image) in DynamoDB's typed JSON, the form `from_dynamodb_json` reads; None when absent. */
  def image(item: java.util.Map[String, AttributeValue]): Option[String] =
    if (item == null || item.isInstanceOf[software.amazon.awssdk.core.util.SdkAutoConstructMap[_, _]]) None
    else {
      val sb = new java.lang.StringBuilder
      writeItem(sb, item)
      Some(sb.toString)
    }

  private def writeItem(sb: java.lang.StringBuilder, item: java.util.Map[String, AttributeValue]): Unit = {
    sb.append('{')
    var first = true
    item.asScala.foreach { case (name, value) =>
      if (!first) sb.append(',')
      first = false
      quote(sb, name)
      sb.append(':')
      write(sb, value)
    }
    sb.append('}')
  }

  private def write(sb: java.lang.StringBuilder, v: AttributeValue): Unit = {
    def typed(tag: String)(body: => Unit): Unit = {
      sb.append("{\"").append(tag).append("\":")
      body
      sb.append('}')
    }
    def list[T](items: java.util.List[T])(each: T => Unit): Unit = {
      sb.append('[')
      var first = true
      items.asScala.foreach { i =>
        if (!first) sb.append(',')
        first = false
        each(i)
      }
      sb.append(']')
    }
    val b64 = Base64.getEncoder
    v.`type`() match {
      case AttributeValue.Type.S => typed("S")(quote(sb, v.s()))
      case AttributeValue.Type.N => typed("N")(quote(sb, v.n()))
      case AttributeValue.Type.B => typed("B")(quote(sb, b64.encodeToString(v.b().asByteArrayUnsafe())))
      case AttributeValue.Type.BOOL => typed("BOOL")(sb.append(v.bool().booleanValue()))
      case AttributeValue.Type.NUL => typed("NULL")(sb.append(true))
      case AttributeValue.Type.SS => typed("SS")(list(v.ss())(quote(sb, _)))
      case AttributeValue.Type.NS => typed("NS")(list(v.ns())(quote(sb, _)))
      case AttributeValue.Type.BS =>
        typed("BS")(list(v.bs())(b => quote(sb, b64.encodeToString(b.asByteArrayUnsafe()))))
      case AttributeValue.Type.M => typed("M")(writeItem(sb, v.m()))
      case AttributeValue.Type.L => typed("L")(list(v.l())(write(sb, _)))
      case _ => typed("NULL")(sb.append(true))
    }
  }

  private def quote(sb: java.lang.StringBuilder, s: String): Unit = {
    sb.append('"')
    var i = 0
    while (i < s.length) {
      val c = s.charAt(i)
      c match {
        case '"' => sb.append("\\\"")
        case '\\' => sb.append("\\\\")
        case '\n' => sb.append("\\n")
        case '\r' => sb.append("\\r")
        case '\t' => sb.append("\\t")
        case _ if c < 0x20 => sb.append("\\u").append(String.format("%04x", Int.box(c.toInt)))
        case _ => sb.append(c)
      }
      i += 1
    }
    sb.append('"')
  }
}
