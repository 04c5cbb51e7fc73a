package io.sparkkinesis.aws

import java.util.concurrent.ThreadLocalRandom

/**
 * Exponential backoff with jitter: the pause before retry `attempt` (0 for the first) is a random time in
 * [ceiling / 2, ceiling], where ceiling = min(cap, base * 2^attempt).
 */
private[sparkkinesis] final case class Backoff(baseMillis: Long = 100, capMillis: Long = 10000) {
  def delayMillis(attempt: Int): Long = {
    val ceiling = math.min(capMillis, baseMillis * (1L << math.min(attempt, 20)))
    ThreadLocalRandom.current().nextLong(ceiling / 2, ceiling + 1)
  }
}
