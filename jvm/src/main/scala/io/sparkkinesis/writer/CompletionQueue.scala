package io.sparkkinesis.writer

import java.util.concurrent.TimeUnit
import java.util.concurrent.locks.ReentrantLock

import scala.collection.mutable

/**
 * Where the async client's threads hand finished calls to the task's thread. The client's threads only
 * [[add]]; the task's thread waits ([[await]]) and takes them ([[drain]]) and decides everything else.
 */
private[writer] final class CompletionQueue[T] {
  private val lock = new ReentrantLock()
  private val arrived = lock.newCondition()
  private val completed = new java.util.ArrayDeque[T]()
  private var signalled = false

  /** From any thread: one finished call. */
  def add(item: T): Unit = {
    lock.lock()
    try {
      completed.add(item)
      arrived.signalAll()
    } finally lock.unlock()
  }

  /** From any thread: ends the current or next [[await]] without a finished call (something else is ready). */
  def signal(): Unit = {
    lock.lock()
    try {
      signalled = true
      arrived.signalAll()
    } finally lock.unlock()
  }

  /** Waits up to `nanos` for a finished call or a [[signal]], unless one is already there. */
  def await(nanos: Long): Unit = {
    lock.lock()
    try {
      if (completed.isEmpty && !signalled && nanos > 0) arrived.await(nanos, TimeUnit.NANOSECONDS)
      signalled = false
    } finally lock.unlock()
  }

  /** Every finished call so far, oldest first. */
  def drain(): Seq[T] = {
    val out = mutable.ArrayBuffer.empty[T]
    lock.lock()
    try while (!completed.isEmpty) out += completed.poll()
    finally lock.unlock()
    out.toSeq
  }
}
