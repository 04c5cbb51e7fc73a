package io.sparkkinesis.payload.registry

import java.util.UUID

import org.scalatest.funsuite.AnyFunSuite

import io.sparkkinesis.aws.SchemaVersion
import io.sparkkinesis.errors.KinesisOptionException
import io.sparkkinesis.testing.ErrorText.assertMentions

/** A version registered for encoding is used once the registry has made it AVAILABLE (moto makes it so at once). */
class RegistrySchemasSuite extends AnyFunSuite {
  private val id = UUID.randomUUID()
  private def version(status: String) = SchemaVersion(id, "\"string\"", "AVRO", 2, status)

  /** A registry whose answers about `id` are `statuses`, one per look; counts the looks and the pauses. */
  private final class Registry(statuses: String*) {
    private val next = statuses.iterator
    var looks = 0
    var pauses = 0
    def refetch(asked: UUID): SchemaVersion = { assert(asked == id); looks += 1; version(next.next()) }
    def sleep(millis: Long): Unit = { assert(millis == 1000); pauses += 1 }
  }

  test("a PENDING version is looked at again, a second apart, until it is AVAILABLE") {
    val registry = new Registry("PENDING", "PENDING", "AVAILABLE")
    assert(RegistrySchemas.available(version("PENDING"), "s", registry.refetch, registry.sleep).status == "AVAILABLE")
    assert(registry.looks == 3 && registry.pauses == 3)
    val none = new Registry()
    assert(RegistrySchemas.available(version("AVAILABLE"), "s", none.refetch, none.sleep).id == id)
    assert(none.looks == 0)
  }

  test("a version the registry found incompatible, or one still PENDING after the checks, fails naming it") {
    val failed = new Registry("FAILURE")
    assertMentions(
      intercept[KinesisOptionException](
        RegistrySchemas.available(version("PENDING"), "Schema 'orders'", failed.refetch, failed.sleep)),
      "[KINESIS_INVALID_SCHEMA]", "Schema 'orders'", id.toString, "FAILURE", "incompatible", "update-schema")
    val stuck = new Registry(Seq.fill(RegistrySchemas.AvailableChecks)("PENDING"): _*)
    assertMentions(intercept[KinesisOptionException](
        RegistrySchemas.available(version("PENDING"), "Schema 'orders'", stuck.refetch, stuck.sleep)),
      "is PENDING")
    assert(stuck.looks == RegistrySchemas.AvailableChecks)
  }
}
