package io.sparkkinesis.source

import java.net.URI
import java.nio.file.Files

import org.apache.spark.sql.Row
import org.apache.spark.sql.streaming.Trigger
import org.apache.spark.sql.types.VariantType
import org.scalatest.funsuite.AnyFunSuite
import software.amazon.awssdk.auth.credentials.{AwsBasicCredentials, StaticCredentialsProvider}
import software.amazon.awssdk.core.SdkBytes
import software.amazon.awssdk.regions.Region
import software.amazon.awssdk.services.dynamodb.DynamoDbClient
import software.amazon.awssdk.services.dynamodb.model._

import io.sparkkinesis.compat.CollectionConverters._
import io.sparkkinesis.errors.KinesisOptionException
import io.sparkkinesis.testing.{Integration, MotoServer, SharedSparkSession}

/**
 * `imageColumnType=variant` (Spark 4.0 and later): `keys`, `newImage` and `oldImage` of `format("dynamodb-streams")`
 * as VARIANT values of the item's attributes, against moto's DynamoDB Streams. One item holds every DynamoDB type;
 * numbers keep their exact value and kind (a whole number a BIGINT, a fraction a DECIMAL as written, one past
 * DECIMAL(38) a DOUBLE).
 */
@Integration
class DynamoDbVariantSuite extends AnyFunSuite with MotoServer with SharedSparkSession {
  private val (accessKey, secretKey) = ("local-test-key", "local-test-secret")

  private lazy val dynamo: DynamoDbClient = DynamoDbClient.builder().endpointOverride(URI.create(moto))
    .region(Region.US_EAST_1)
    .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create(accessKey, secretKey))).build()

  private def connection: Map[String, String] = Map("endpointUrl" -> moto, "region" -> "us-east-1",
    "awsAccessKeyId" -> accessKey, "awsSecretKey" -> secretKey, "minFetchPeriod" -> "50ms")

  private def s(v: String) = AttributeValue.builder().s(v).build()
  private def n(v: String) = AttributeValue.builder().n(v).build()
  private def bytes(b: Int*) = SdkBytes.fromByteArray(b.map(_.toByte).toArray)

  /** An item with an attribute of every DynamoDB type; `dec` varies between versions of it. */
  private def item(dec: String): java.util.Map[String, AttributeValue] = Map(
    "pk" -> s("a"),
    "text" -> s("héllo"),
    "small" -> n("42"),
    "dec" -> n(dec),
    "big" -> n("1E+100"),
    "bin" -> AttributeValue.builder().b(bytes(1, 2, 3)).build(),
    "flag" -> AttributeValue.builder().bool(true).build(),
    "nothing" -> AttributeValue.builder().nul(true).build(),
    "map" -> AttributeValue.builder().m(Map("inner" -> n("7")).asJava).build(),
    "list" -> AttributeValue.builder().l(s("x"), n("2")).build(),
    "strings" -> AttributeValue.builder().ss("p", "q").build(),
    "numbers" -> AttributeValue.builder().ns("1", "2.5").build(),
    "blobs" -> AttributeValue.builder().bs(bytes(9), bytes(8, 8)).build()
  ).asJava

  test("imageColumnType=variant: keys and images are VARIANT objects of the item's values, numbers exact") {
    val table = s"variant-${System.nanoTime() % 1000000}"
    dynamo.createTable(CreateTableRequest.builder().tableName(table).billingMode(BillingMode.PAY_PER_REQUEST)
        .keySchema(KeySchemaElement.builder().attributeName("pk").keyType(KeyType.HASH).build())
        .attributeDefinitions(AttributeDefinition.builder().attributeName("pk").attributeType(ScalarAttributeType.S)
            .build())
        .streamSpecification(StreamSpecification.builder().streamEnabled(true)
            .streamViewType(StreamViewType.NEW_AND_OLD_IMAGES).build()).build())
    dynamo.putItem(PutItemRequest.builder().tableName(table).item(item("12.50")).build())
    dynamo.putItem(PutItemRequest.builder().tableName(table).item(item("13.75")).build())
    dynamo.deleteItem(DeleteItemRequest.builder().tableName(table).key(Map("pk" -> s("a")).asJava).build())

    val df = spark.readStream.format("dynamodb-streams")
      .options(connection ++ Map("tableName" -> table, "initialPosition" -> "trim_horizon",
        "imageColumnType" -> "variant")).load()
    assert(Seq("keys", "newImage", "oldImage").map(df.schema(_).dataType) == Seq.fill(3)(VariantType), df.schema)
    val q = df.writeStream.format("memory").queryName("variant_changes")
      .option("checkpointLocation", Files.createTempDirectory("dynamodb-variant").toString)
      .trigger(Trigger.AvailableNow()).start()
    try assert(q.awaitTermination(180000L), "the AvailableNow read did not end within 3 minutes")
    finally q.stop()
    q.exception.foreach(e => fail(e))

    val changes = spark.sql(
      """SELECT eventName, variant_get(keys, '$.pk', 'string') AS pk,
        |  variant_get(newImage, '$.dec', 'decimal(4,2)') AS newDec, variant_get(oldImage, '$.dec', 'decimal(4,2)') AS oldDec,
        |  newImage IS NULL AS noNew, oldImage IS NULL AS noOld
        |FROM variant_changes ORDER BY CAST(sequenceNumber AS DECIMAL(38,0))""".stripMargin).collect().toSeq
    assert(
      changes == Seq(
        Row("INSERT", "a", BigDecimal("12.50").bigDecimal, null, false, true),
        Row("MODIFY", "a", BigDecimal("13.75").bigDecimal, BigDecimal("12.50").bigDecimal, false, false),
        Row("REMOVE", "a", null, BigDecimal("13.75").bigDecimal, true, false)), changes)

    val inserted = spark.sql(
      """SELECT variant_get(newImage, '$.text', 'string'), schema_of_variant(variant_get(newImage, '$.small')),
        |  variant_get(newImage, '$.small', 'bigint'), schema_of_variant(variant_get(newImage, '$.dec')),
        |  schema_of_variant(variant_get(newImage, '$.big')), variant_get(newImage, '$.big', 'double'),
        |  variant_get(newImage, '$.bin', 'binary'), variant_get(newImage, '$.flag', 'boolean'),
        |  is_variant_null(variant_get(newImage, '$.nothing')), variant_get(newImage, '$.map.inner', 'int'),
        |  variant_get(newImage, '$.list[0]', 'string'), variant_get(newImage, '$.list[1]', 'int'),
        |  variant_get(newImage, '$.strings', 'array<string>'), variant_get(newImage, '$.numbers', 'array<string>'),
        |  variant_get(newImage, '$.blobs', 'array<binary>')
        |FROM variant_changes WHERE eventName = 'INSERT'""".stripMargin).collect().toSeq
    assert(inserted.size == 1)
    val r = inserted.head
    assert(r.getString(0) == "héllo")
    assert((r.getString(1), r.getLong(2)) == (("BIGINT", 42L)))
    // DynamoDB keeps a number without its trailing zeros: 12.50 comes back as 12.5, a decimal (not a double).
    assert(r.getString(3) == "DECIMAL(3,1)", "a fraction is an exact decimal")
    assert((r.getString(4), r.getDouble(5)) == (("DOUBLE", 1e100)), "past DECIMAL(38): a double")
    assert(r.getAs[Array[Byte]](6).toSeq == Seq[Byte](1, 2, 3))
    assert(r.getBoolean(7) && r.getBoolean(8))
    assert((r.getInt(9), r.getString(10), r.getInt(11)) == ((7, "x", 2)))
    assert(r.getSeq[String](12).sorted == Seq("p", "q"))
    assert(r.getSeq[String](13).map(BigDecimal(_)).sorted == Seq(BigDecimal(1), BigDecimal("2.5")))
    assert(r.getSeq[Array[Byte]](14).map(_.toSeq).sortBy(_.size) == Seq(Seq[Byte](9), Seq[Byte](8, 8)))
  }

  test("imageColumnType is refused by name on a Kinesis read") {
    val e = intercept[KinesisOptionException](spark.readStream.format("kinesis")
        .options(connection ++ Map("streamName" -> "orders", "imageColumnType" -> "variant")).load())
    assert(
      e.getMessage.contains("[KINESIS_CONFLICTING_OPTIONS]") && e.getMessage.contains("imageColumnType") &&
        e.getMessage.contains("dynamodb-streams"), e.getMessage)
  }
}
