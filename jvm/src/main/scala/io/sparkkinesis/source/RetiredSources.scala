package io.sparkkinesis.source

/**
 * The driver's record of the queries of this application that stopped (or failed), by source id: the most recent
 * [[RetiredSources.Kept]]. Every prefetch task carries it, and the executor drops those queries' buffers before it
 * reads, so a query restarted in the same application never finds `fetchBufferSize` taken by one that is gone.
 */
private[sparkkinesis] object RetiredSources {
  val Kept = 64
  private var ids = Vector.empty[String]

  def retire(sourceId: String): Unit = synchronized {
    ids = (ids.filterNot(_ == sourceId) :+ sourceId).takeRight(Kept)
  }

  def recent: Seq[String] = synchronized(ids)
}
