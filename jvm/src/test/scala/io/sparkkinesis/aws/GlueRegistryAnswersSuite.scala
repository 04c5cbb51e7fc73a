package io.sparkkinesis.aws

import java.util.UUID

import com.fasterxml.jackson.databind.ObjectMapper
import org.scalatest.funsuite.AnyFunSuite

/**
 * The registry client reads each answer by the field names of its own operation, as the AWS SDK's service model for
 * Glue names them (CreateSchemaResponse: SchemaVersionId, SchemaVersionStatus; RegisterSchemaVersionResponse:
 * SchemaVersionId, VersionNumber, Status).
 */
class GlueRegistryAnswersSuite extends AnyFunSuite {
  private val json = new ObjectMapper()
  private val id = UUID.randomUUID()

  test("CreateSchema's answer: a PENDING first version is read as PENDING, so that the wait for AVAILABLE runs") {
    val answer = json.readTree(s"""{"RegistryName": "shop", "SchemaName": "orders", "DataFormat": "AVRO",
      "SchemaStatus": "AVAILABLE", "LatestSchemaVersion": 1, "NextSchemaVersion": 2,
      "SchemaVersionId": "$id", "SchemaVersionStatus": "PENDING"}""")
    val v = GlueRegistryClient.createdVersion(answer, "\"string\"", "AVRO")
    assert(v.id == id && v.status == "PENDING" && v.versionNumber == 1)
    val failed = json.readTree(s"""{"SchemaVersionId": "$id", "SchemaVersionStatus": "FAILURE"}""")
    assert(GlueRegistryClient.createdVersion(failed, "\"string\"", "AVRO").status == "FAILURE")
  }

  test("RegisterSchemaVersion's answer: its version number and status") {
    val answer = json.readTree(s"""{"SchemaVersionId": "$id", "VersionNumber": 3, "Status": "PENDING"}""")
    val v = GlueRegistryClient.registeredVersion(answer, "\"string\"", "AVRO")
    assert(v.id == id && v.versionNumber == 3 && v.status == "PENDING")
  }

  test("an answer without a status counts as PENDING: the version is looked up before it is used") {
    val answer = json.readTree(s"""{"SchemaVersionId": "$id"}""")
    assert(GlueRegistryClient.createdVersion(answer, "\"string\"", "AVRO").status == "PENDING")
    assert(GlueRegistryClient.registeredVersion(answer, "\"string\"", "AVRO").status == "PENDING")
  }
}
