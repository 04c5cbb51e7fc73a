package io.sparkkinesis.runtime

import java.util.concurrent.ThreadFactory
import java.util.concurrent.atomic.AtomicInteger

/**
 * Threads for the connector's JVM-wide timers and pools: daemons (they never keep a JVM alive) named after what
 * they do, so that a thread dump tells them apart; numbered (`name-1`, `name-2`, ...) for a pool of several.
 */
private[sparkkinesis] object DaemonThreads {

  def factory(name: String, numbered: Boolean = false): ThreadFactory = new ThreadFactory {
    private val count = new AtomicInteger()
    override def newThread(r: Runnable): Thread = {
      val t = new Thread(r, if (numbered) s"$name-${count.incrementAndGet()}" else name)
      t.setDaemon(true)
      t
    }
  }
}
