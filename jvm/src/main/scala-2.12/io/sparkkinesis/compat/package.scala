package io.sparkkinesis

import scala.collection.mutable

/**
 * What the connector uses of Scala 2.13's standard library, for Scala 2.12 (the Spark 3.5 / Scala 2.12 build).
 * Common code imports these names from here; the 2.13 folder maps them to the standard library.
 */
package object compat {

  /** `import io.sparkkinesis.compat.CollectionConverters._` gives `asScala` and `asJava` on both Scala versions. */
  val CollectionConverters: scala.collection.JavaConverters.type = scala.collection.JavaConverters

  /** The 2.13 methods the connector calls that 2.12 lacks. */
  object ScalaCompat {
    implicit final class StringParsing(private val s: String) extends AnyVal {
      def toIntOption: Option[Int] =
        try Some(s.toInt)
        catch { case _: NumberFormatException => None }
      def toLongOption: Option[Long] =
        try Some(s.toLong)
        catch { case _: NumberFormatException => None }
    }

    implicit final class MinMaxOption[A](private val xs: TraversableOnce[A]) extends AnyVal {
      def minOption(implicit ord: Ordering[A]): Option[A] = xs.reduceLeftOption(ord.min)
      def maxOption(implicit ord: Ordering[A]): Option[A] = xs.reduceLeftOption(ord.max)
    }

    implicit final class DistinctBy[A](private val xs: Seq[A]) extends AnyVal {
      def distinctBy[K](key: A => K): Seq[A] = {
        val seen = mutable.HashSet.empty[K]
        xs.filter(x => seen.add(key(x)))
      }
    }
  }
}
