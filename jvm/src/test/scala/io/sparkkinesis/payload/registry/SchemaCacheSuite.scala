package io.sparkkinesis.payload.registry

import java.util.UUID
import java.util.concurrent.{CountDownLatch, Executors, TimeUnit}
import java.util.concurrent.atomic.{AtomicInteger, AtomicLong}

import org.scalatest.funsuite.AnyFunSuite

import io.sparkkinesis.aws.{AwsConnection, CredentialsConfig, SchemaVersion}

class SchemaCacheSuite extends AnyFunSuite {
  private val connection = AwsConnection("us-east-1", Some("http://127.0.0.1:1"), CredentialsConfig.DefaultChain, false)
  private val hour = TimeUnit.HOURS.toNanos(1)

  /** A registry that counts its calls, fails while `down`, and answers each id with a definition naming it. */
  private final class Registry {
    val calls = new AtomicInteger()
    @volatile var down = false
    def fetch(c: AwsConnection, id: UUID): SchemaVersion = {
      calls.incrementAndGet()
      if (down) throw new java.io.IOException("registry unreachable")
      SchemaVersion(id, s"""{"type": "string", "doc": "$id"}""", "AVRO", 1, "AVAILABLE")
    }
  }

  test("threads asking for one version at once wait for one fetch") {
    val registry = new Registry
    val cache = new SchemaCache(registry.fetch)
    val id = UUID.randomUUID()
    val pool = Executors.newFixedThreadPool(8)
    val start = new CountDownLatch(1)
    try {
      val answers = (1 to 8).map(_ => pool.submit(() => { start.await(); cache(connection, id, 10, hour) }))
      start.countDown()
      assert(answers.map(_.get(30, TimeUnit.SECONDS).id).toSet == Set(id))
    } finally pool.shutdownNow()
    assert(registry.calls.get == 1 && cache.fetches == 1)
  }

  test("an entry older than the TTL is fetched again; while the registry is down, the old one is used on") {
    val registry = new Registry
    val now = new AtomicLong(0)
    val cache = new SchemaCache(registry.fetch, () => now.get)
    val id = UUID.randomUUID()
    cache(connection, id, 10, hour)
    now.addAndGet(hour - 1)
    cache(connection, id, 10, hour)
    assert(registry.calls.get == 1)
    now.addAndGet(1)
    registry.down = true
    assert(cache(connection, id, 10, hour).definition.contains(id.toString))
    assert(registry.calls.get == 2)
    val unknown = UUID.randomUUID()
    intercept[java.io.IOException](cache(connection, unknown, 10, hour))
  }

  test("at most `capacity` versions are kept, the least recently used leaving first") {
    val registry = new Registry
    val cache = new SchemaCache(registry.fetch)
    val ids = (1 to 3).map(_ => UUID.randomUUID())
    ids.foreach(cache(connection, _, 2, hour)) // the first one leaves
    cache(connection, ids(1), 2, hour)
    assert(registry.calls.get == 3)
    cache(connection, ids.head, 2, hour) // fetched again; ids(2), used least recently, leaves
    assert(registry.calls.get == 4)
    cache(connection, ids(1), 2, hour)
    assert(registry.calls.get == 4)
    cache(connection, ids(2), 2, hour)
    assert(registry.calls.get == 5)
  }
}
