package io.sparkkinesis.testing

import org.apache.spark.sql.streaming.StreamingQuery
import org.scalatest.Assertions

/** Waiting on a running streaming query for a condition, for the suites that run queries. */
trait QueryWaits extends Assertions {

  /**
   * Waits until `done`, failing with the query's error or `what` after `seconds` (by default sized for a machine
   * three times slower than a quiet one, as CI's lanes side by side make it: it only lengthens a failing run).
   */
  protected def await(query: StreamingQuery, what: => String, seconds: Int = 600)(done: => Boolean): Unit = {
    val deadline = System.nanoTime() + seconds * 1000L * 1000 * 1000
    while (!done) {
      query.exception.foreach(e => fail(e))
      assert(System.nanoTime() < deadline, s"$what: not within $seconds s")
      Thread.sleep(20)
    }
  }
}
