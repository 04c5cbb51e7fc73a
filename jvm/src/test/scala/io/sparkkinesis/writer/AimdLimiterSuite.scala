package io.sparkkinesis.writer

import org.scalatest.funsuite.AnyFunSuite

class AimdLimiterSuite extends AnyFunSuite {

  test("starts wide open, halves on throttling down to a floor, and grows back by a tenth of a call") {
    val l = new AimdLimiter(maxRecordsPerRequest = 500, maxInFlightRequests = 4)
    assert(l.window == 2000 && l.nextCallSize(0) == 500 && l.nextCallSize(1500) == 500)
    assert(l.nextCallSize(1800) == 200 && l.nextCallSize(2000) == 0)
    l.onCall(throttled = true)
    assert(l.window == 1000)
    (1 to 10).foreach(_ => l.onCall(throttled = true))
    assert(l.window == l.minWindow && l.minWindow == 50)
    assert(l.nextCallSize(0) == 50 && l.nextCallSize(50) == 0)
    l.onCall(throttled = false)
    assert(l.window == 100)
    (1 to 100).foreach(_ => l.onCall(throttled = false))
    assert(l.window == 2000)
  }

  test("with nothing in flight a call can always leave") {
    val l = new AimdLimiter(maxRecordsPerRequest = 5, maxInFlightRequests = 1)
    (1 to 5).foreach(_ => l.onCall(throttled = true))
    assert(l.window == 1 && l.nextCallSize(0) == 1)
  }
}
