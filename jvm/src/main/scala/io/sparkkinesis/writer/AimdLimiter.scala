package io.sparkkinesis.writer

/**
 * How many records one writer may have in flight: a window that grows by a tenth of a full request after
 * every call that nothing throttled (additive increase) and halves after every call that was throttled
 * (multiplicative decrease), between `minWindow` and `maxWindow`. A throttled shard thus sees fewer and
 * smaller calls until it keeps up, and the window opens again as soon as calls succeed.
 */
private[writer] final class AimdLimiter(maxRecordsPerRequest: Int, maxInFlightRequests: Int) {
  val maxWindow: Int = maxRecordsPerRequest * maxInFlightRequests
  val minWindow: Int = math.max(1, maxRecordsPerRequest / 10)
  private val increase = math.max(1, maxRecordsPerRequest / 10)
  private var current = maxWindow

  def window: Int = current

  /**
   * How many records the next call may carry with `inFlight` records already sent: 0 when it must wait.
   * With nothing in flight a call may always leave.
   */
  def nextCallSize(inFlight: Int): Int =
    if (inFlight == 0) math.min(maxRecordsPerRequest, current)
    else math.max(0, math.min(maxRecordsPerRequest, current - inFlight))

  def onCall(throttled: Boolean): Unit =
    current =
      if (throttled) math.max(minWindow, current / 2)
      else math.min(maxWindow, current + increase)
}
