package io.sparkkinesis.writer

import scala.collection.mutable

import io.sparkkinesis.aws.StreamRef
import io.sparkkinesis.errors.{KinesisErrors, KinesisOptionException}

/**
 * The streams one writer sends to, numbered in the order they first appear: the `streamName` option, and the
 * names or ARNs found in the input's stream column, named `column` (parsed once per distinct value).
 */
private[writer] final class SinkStreams(default: Option[StreamRef], region: String, column: String) {
  private val refs = mutable.ArrayBuffer.empty[StreamRef]
  private val byText = mutable.HashMap.empty[String, Int]
  private val defaultIndex: Int = default.map(register).getOrElse(-1)

  def apply(index: Int): StreamRef = refs(index)
  def count: Int = refs.size

  /** The index of the row's stream: its stream column's value, else the option. */
  def indexOf(columnValue: String, position: => String): Int =
    if (columnValue == null) {
      if (defaultIndex < 0)
        throw KinesisErrors.invalidSinkRow(position, s"has a null $column and option 'streamName' is not set",
          "Give every row a stream, or set the 'streamName' option as the fallback.")
      defaultIndex
    } else byText.getOrElse(columnValue, {
        val ref =
          try StreamRef.parse(columnValue)
          catch {
            case e: KinesisOptionException =>
              throw KinesisErrors.invalidSinkRow(position, s"has an invalid $column: ${e.getMessage}",
                "Fix the value.")
          }
        ref.arnRegion.filter(_ != region).foreach { r =>
          throw KinesisErrors.streamInOtherRegion(position, ref.toString, r, region)
        }
        val i = refs.indexWhere(_ == ref) match {
          case -1 => register(ref)
          case known => known
        }
        byText(columnValue) = i
        i
      })

  private def register(ref: StreamRef): Int = { refs += ref; refs.size - 1 }
}
