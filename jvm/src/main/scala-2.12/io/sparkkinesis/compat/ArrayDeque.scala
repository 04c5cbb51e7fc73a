package io.sparkkinesis.compat

/**
 * The part of 2.13's `mutable.ArrayDeque` the connector uses, on a `java.util.ArrayDeque` (Scala 2.12; the 2.13 folder's
 * package object names the standard library's).
 */
final class ArrayDeque[A] private () extends Iterable[A] {
  private val items = new java.util.ArrayDeque[A]()

  override def iterator: Iterator[A] = {
    val it = items.iterator()
    new Iterator[A] {
      override def hasNext: Boolean = it.hasNext
      override def next(): A = it.next()
    }
  }
  override def size: Int = items.size
  override def isEmpty: Boolean = items.isEmpty
  override def head: A =
    if (items.isEmpty) throw new NoSuchElementException("head of empty deque") else items.peekFirst
  override def headOption: Option[A] = if (items.isEmpty) None else Some(items.peekFirst)
  override def lastOption: Option[A] = if (items.isEmpty) None else Some(items.peekLast)

  def append(a: A): this.type = { items.addLast(a); this }
  def +=(a: A): this.type = append(a)
  def prepend(a: A): this.type = { items.addFirst(a); this }
  def removeHead(): A =
    if (items.isEmpty) throw new NoSuchElementException("removeHead of empty deque") else items.pollFirst
  def clear(): Unit = items.clear()
}

object ArrayDeque {
  def empty[A]: ArrayDeque[A] = new ArrayDeque[A]()
}
