package io.sparkkinesis

/**
 * The Scala 2.13 side of the standard-library differences the Spark 3.5 / Scala 2.12 build needs bridged (see
 * `scala-2.12/.../compat/package.scala`). On 2.13 every name is the standard library's own.
 */
package object compat {
  type ArrayDeque[A] = scala.collection.mutable.ArrayDeque[A]
  val ArrayDeque: scala.collection.mutable.ArrayDeque.type = scala.collection.mutable.ArrayDeque

  /** `import io.sparkkinesis.compat.CollectionConverters._` gives `asScala` and `asJava` on both Scala versions. */
  val CollectionConverters: scala.jdk.CollectionConverters.type = scala.jdk.CollectionConverters

  /** The 2.13 methods 2.12 lacks: nothing to add here (`import io.sparkkinesis.compat.ScalaCompat._` is empty). */
  object ScalaCompat
}
