package io.sparkkinesis.source

import io.sparkkinesis.testing.QueryWaits

/** What the real-time suites share: waiting on a running query for a condition, and records under ten keys. */
trait RealTimeQueries extends QueryWaits {

  /** Records `r<from>` to `r<until - 1>`, keyed `k0` to `k9` in turn. */
  protected def records(from: Int, until: Int): Seq[(String, String)] =
    (from until until).map(i => s"k${i % 10}" -> s"r$i")
}
