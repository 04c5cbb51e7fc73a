package io.sparkkinesis.compat

import java.math.{BigDecimal => JBigDecimal}
import java.util.{ArrayList => JArrayList, Base64}

import com.fasterxml.jackson.databind.{JsonNode, ObjectMapper}
import org.apache.spark.sql.types.{DataType, VariantType}
import org.apache.spark.types.variant.VariantBuilder
import org.apache.spark.unsafe.types.VariantVal

import io.sparkkinesis.compat.CollectionConverters._

/**
 * VARIANT values, which Spark has from 4.0 on: a DynamoDB item in DynamoDB's typed JSON (`{"id": {"S": "a1"},
 * "total": {"N": "12.50"}}`) as a VARIANT object of its attributes' values (`{"id": "a1", "total": 12.50}`), for
 * `imageColumnType=variant` (docs/dynamodb-streams.md). S is a string; N a long when it is whole and fits one, else a
 * decimal as written when it fits DECIMAL(38), else a double (as Spark's `parse_json` takes numbers); B binary; BOOL
 * a boolean; NULL null; M an object; L an array; SS, NS and BS arrays of their members.
 */
private[sparkkinesis] object Variants {

  /** Whether this Spark has the VARIANT type. */
  val supported: Boolean = true

  def dataType: DataType = VariantType

  private val mapper = new ObjectMapper()

  /** The item in `json` as a VARIANT value (Catalyst's internal form). */
  def ofDynamoDbItem(json: String): VariantVal = {
    val builder = new VariantBuilder(false)
    attributes(builder, mapper.readTree(json))
    val variant = builder.result()
    new VariantVal(variant.getValue, variant.getMetadata)
  }

  private def attributes(b: VariantBuilder, item: JsonNode): Unit = {
    val start = b.getWritePos
    val fields = new JArrayList[VariantBuilder.FieldEntry]()
    item.properties().asScala.foreach { entry =>
      fields.add(new VariantBuilder.FieldEntry(entry.getKey, b.addKey(entry.getKey), b.getWritePos - start))
      typed(b, entry.getValue)
    }
    b.finishWritingObject(start, fields)
  }

  /** One typed value, `{"<type>": value}`. */
  private def typed(b: VariantBuilder, t: JsonNode): Unit = {
    val entry = t.properties().iterator().next()
    val v = entry.getValue
    entry.getKey match {
      case "S" => b.appendString(v.asText)
      case "N" => number(b, v.asText)
      case "B" => b.appendBinary(Base64.getDecoder.decode(v.asText))
      case "BOOL" => b.appendBoolean(v.asBoolean)
      case "NULL" => b.appendNull()
      case "M" => attributes(b, v)
      case "L" => array(b, v)(typed(b, _))
      case "SS" => array(b, v)(s => b.appendString(s.asText))
      case "NS" => array(b, v)(n => number(b, n.asText))
      case "BS" => array(b, v)(s => b.appendBinary(Base64.getDecoder.decode(s.asText)))
      case other => throw new IllegalArgumentException(s"not a DynamoDB attribute type: $other")
    }
  }

  private def array(b: VariantBuilder, items: JsonNode)(each: JsonNode => Unit): Unit = {
    val start = b.getWritePos
    val offsets = new JArrayList[Integer]()
    items.elements().asScala.foreach { item =>
      offsets.add(b.getWritePos - start)
      each(item)
    }
    b.finishWritingArray(start, offsets)
  }

  private def number(b: VariantBuilder, text: String): Unit = {
    val n = new JBigDecimal(text)
    val whole = if (n.scale <= 0) n.setScale(0) else n
    if (whole.scale == 0 && whole.unscaledValue.bitLength < 64) b.appendLong(whole.longValueExact())
    else if (whole.precision <= MaxDecimalDigits && whole.scale <= MaxDecimalDigits) b.appendDecimal(whole)
    else b.appendDouble(n.doubleValue)
  }

  private val MaxDecimalDigits = 38
}
