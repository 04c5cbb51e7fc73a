package io.sparkkinesis.source

import java.io.File
import java.net.{URI, URLClassLoader}
import java.nio.file.Files
import java.util.concurrent.atomic.AtomicInteger

import org.apache.spark.sql.{DataFrame, Row}
import org.apache.spark.sql.streaming.{StreamingQuery, Trigger}
import org.scalatest.funsuite.AnyFunSuite
import software.amazon.awssdk.auth.credentials.{AwsBasicCredentials, StaticCredentialsProvider}
import software.amazon.awssdk.regions.Region
import software.amazon.awssdk.services.dynamodb.DynamoDbClient
import software.amazon.awssdk.services.dynamodb.model._

import io.sparkkinesis.compat.CollectionConverters._
import io.sparkkinesis.errors.KinesisException
import io.sparkkinesis.functions.from_dynamodb_json
import io.sparkkinesis.testing.{Integration, MotoServer, SharedSparkSession}

/**
 * Issue 53, first slice: `format("dynamodb-streams")` on the Kinesis engine, against moto's DynamoDB and DynamoDB
 * Streams (one table per test, NEW_AND_OLD_IMAGES): every change once and in order per key, the columns, AvailableNow
 * and processing-time triggers, a restart from the checkpoint, the starting positions, a batch read, a table of the
 * session catalog (`CREATE TABLE ... USING \`dynamodb-streams\``), the error for a
 * table without a stream, and the assembled jar's cut DynamoDB Streams client (project/DynamoDbStreamsCut.scala).
 * moto keeps one open shard per stream and writes no `userIdentity`, so shard rotation and TTL deletes are not here.
 */
@Integration
class DynamoDbStreamsSuite extends AnyFunSuite with MotoServer with SharedSparkSession {
  import DynamoDbStreamsSuite._

  private val tables = new AtomicInteger()

  // CREATE TABLE keeps its folder out of the working tree.
  override protected def sparkConf: Map[String, String] =
    Map("spark.sql.warehouse.dir" -> Files.createTempDirectory("dynamodb-warehouse").toString)

  private lazy val dynamo: DynamoDbClient = DynamoDbClient.builder().endpointOverride(URI.create(moto))
    .region(Region.US_EAST_1)
    .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create(AccessKey, SecretKey))).build()

  private def connection: Map[String, String] = Map("endpointUrl" -> moto, "region" -> "us-east-1",
    "awsAccessKeyId" -> AccessKey, "awsSecretKey" -> SecretKey, "minFetchPeriod" -> "50ms",
    "idleFetchPeriod" -> "200ms")

  /** A new table of its own for the test, with a stream of both images unless `stream` is false. */
  private def freshTable(prefix: String, stream: Boolean = true): String = {
    val name = s"$prefix-${tables.incrementAndGet()}-${System.nanoTime() % 100000}"
    val b = CreateTableRequest.builder().tableName(name).billingMode(BillingMode.PAY_PER_REQUEST)
      .keySchema(KeySchemaElement.builder().attributeName("pk").keyType(KeyType.HASH).build())
      .attributeDefinitions(
        AttributeDefinition.builder().attributeName("pk").attributeType(ScalarAttributeType.S).build())
    if (stream)
      b.streamSpecification(StreamSpecification.builder().streamEnabled(true)
          .streamViewType(StreamViewType.NEW_AND_OLD_IMAGES).build())
    dynamo.createTable(b.build())
    name
  }

  private def s(v: String) = AttributeValue.builder().s(v).build()
  private def n(v: Int) = AttributeValue.builder().n(v.toString).build()

  /** For each key, an insert (v=0), `updates` modifications (v=1..updates) and a delete: what the stream must show. */
  private def changes(table: String, keys: Seq[String], updates: Int): Unit = {
    for (k <- keys) dynamo.putItem(PutItemRequest.builder().tableName(table).item(Map("pk" -> s(k), "v" -> n(0)).asJava)
        .build())
    for (u <- 1 to updates; k <- keys)
      dynamo.putItem(PutItemRequest.builder().tableName(table).item(Map("pk" -> s(k), "v" -> n(u)).asJava).build())
    for (k <- keys)
      dynamo.deleteItem(DeleteItemRequest.builder().tableName(table).key(Map("pk" -> s(k)).asJava).build())
  }

  private def reader(options: Map[String, String]): DataFrame =
    spark.readStream.format("dynamodb-streams").options(connection ++ options).load()

  private def availableNow(df: DataFrame, name: String, checkpoint: File): Unit = {
    val q = df.writeStream.format("memory").queryName(name).option("checkpointLocation", checkpoint.getPath)
      .trigger(Trigger.AvailableNow()).start()
    try assert(q.awaitTermination(180000L), "the AvailableNow read did not end within 3 minutes")
    finally q.stop()
    q.exception.foreach(e => fail(e))
  }

  /** Waits (polling, up to 2 minutes) until `condition` holds. */
  private def waitUntil(what: String)(condition: => Boolean): Unit = {
    val deadline = System.nanoTime() + 120L * 1000000000L
    while (!condition) {
      if (System.nanoTime() > deadline) fail(s"timed out waiting until $what")
      Thread.sleep(100)
    }
  }

  private def rows(name: String): Seq[Row] = {
    import org.apache.spark.sql.functions.col
    spark.table(name).select(from_dynamodb_json(col("keys"), "pk STRING").getField("pk"), col("eventName"),
      from_dynamodb_json(col("newImage"), "v INT").getField("v"),
      from_dynamodb_json(col("oldImage"), "v INT").getField("v"), col("sequenceNumber")).collect().toSeq
  }

  /** Per key, the changes in sequence-number order: (eventName, new v, old v). */
  private def byKey(rows: Seq[Row]): Map[String, Seq[(String, Any, Any)]] =
    rows.groupBy(_.getString(0)).map { case (k, rs) =>
      k -> rs.sortBy(r => BigInt(r.getString(4))).map(r => (r.getString(1), r.get(2), r.get(3)))
    }

  private def expected(updates: Int): Seq[(String, Any, Any)] =
    Seq(("INSERT", 0, null)) ++ (1 to updates).map(u => ("MODIFY", u, u - 1)) :+ (("REMOVE", null, updates))

  test("AvailableNow reads every change once, in order per key, with the stream record's columns") {
    val table = freshTable("every-change")
    val keys = (0 until 8).map(i => s"k$i")
    changes(table, keys, updates = 3)
    val df = reader(Map("tableName" -> table, "initialPosition" -> "trim_horizon"))
    assert(df.schema.fieldNames.toSeq == Seq("eventID", "eventName", "approximateCreationDateTime", "sequenceNumber",
      "sizeBytes", "streamViewType", "shardId", "userIdentity", "keys", "newImage", "oldImage"))
    availableNow(df, "ddb_every_change", Files.createTempDirectory("ddb-every").toFile)
    val got = rows("ddb_every_change")
    assert(got.size == keys.size * 5, got.mkString("\n"))
    assert(got.map(_.getString(4)).distinct.size == got.size, "a change was read twice")
    val perKey = byKey(got)
    assert(perKey.keySet == keys.toSet)
    keys.foreach(k => assert(perKey(k) == expected(3), k))
    val one = spark.sql("SELECT * FROM ddb_every_change WHERE eventName = 'MODIFY' LIMIT 1").head()
    assert(one.getAs[String]("streamViewType") == "NEW_AND_OLD_IMAGES")
    assert(one.getAs[String]("eventID").nonEmpty && one.getAs[String]("shardId").startsWith("shardId-"))
    assert(one.getAs[Long]("sizeBytes") > 0 && one.getAs[java.sql.Timestamp]("approximateCreationDateTime") != null)
    assert(one.getAs[String]("keys").startsWith("{\"pk\":{\"S\":\"k"), one)
    // moto writes no userIdentity (only TTL deletes have one).
    assert(one.isNullAt(one.fieldIndex("userIdentity")))
  }

  test("a processing-time query reads changes as they come; a restart reads only what came after") {
    val table = freshTable("processing-time")
    val checkpoint = Files.createTempDirectory("ddb-restart").toFile
    val q: StreamingQuery = reader(Map("tableName" -> table, "initialPosition" -> "trim_horizon"))
      .writeStream.format("memory").queryName("ddb_live").option("checkpointLocation", checkpoint.getPath)
      .trigger(Trigger.ProcessingTime("200 milliseconds")).start()
    try {
      changes(table, Seq("a", "b"), updates = 1)
      waitUntil("the first changes are read") { q.exception.foreach(e => fail(e)); rows("ddb_live").size >= 6 }
      changes(table, Seq("c"), updates = 2)
      waitUntil("the later changes are read") { q.exception.foreach(e => fail(e)); rows("ddb_live").size >= 10 }
    } finally q.stop()
    val live = byKey(rows("ddb_live"))
    assert(live == Map("a" -> expected(1), "b" -> expected(1), "c" -> expected(2)))
    // Restarted from the same checkpoint: only the changes made while the query was stopped.
    // (A memory sink cannot restart from a checkpoint: the restart writes Parquet files, read back as a batch.)
    changes(table, Seq("d"), updates = 0)
    val out = Files.createTempDirectory("ddb-restarted").toFile
    val restarted = reader(Map("tableName" -> table, "initialPosition" -> "trim_horizon")).writeStream
      .format("parquet").option("path", out.getPath).option("checkpointLocation", checkpoint.getPath)
      .trigger(Trigger.AvailableNow()).start()
    try assert(restarted.awaitTermination(180000L), "the restarted AvailableNow read did not end within 3 minutes")
    finally restarted.stop()
    restarted.exception.foreach(e => fail(e))
    // Its files, not its sink log (which numbers batches from the checkpoint's, not from 0).
    spark.read.parquet(s"${out.getPath}/part-*").createOrReplaceTempView("ddb_restarted")
    assert(byKey(rows("ddb_restarted")) == Map("d" -> expected(0)))
  }

  test("initialPosition latest starts at the tip; trim_horizon and a batch read take the whole stream") {
    val table = freshTable("positions")
    changes(table, Seq("old"), updates = 0)
    // `latest` is pinned as the query's start time, and DynamoDB Streams, which has no AT_TIMESTAMP iterator, is
    // read from that time's second (the service rounds creation times down to seconds): start in a later second.
    val written = System.currentTimeMillis()
    waitUntil("a second after the old changes begins")(System.currentTimeMillis() / 1000 > written / 1000)
    val q = reader(Map("tableName" -> table, "initialPosition" -> "latest"))
      .writeStream.format("memory").queryName("ddb_latest")
      .option("checkpointLocation", Files.createTempDirectory("ddb-latest").toString)
      .trigger(Trigger.ProcessingTime("200 milliseconds")).start()
    try {
      waitUntil("the query has planned its first batch") { q.exception.foreach(e => fail(e)); q.lastProgress != null }
      changes(table, Seq("new"), updates = 0)
      waitUntil("the new changes are read") { q.exception.foreach(e => fail(e)); rows("ddb_latest").size >= 2 }
    } finally q.stop()
    assert(byKey(rows("ddb_latest")) == Map("new" -> expected(0)))
    val batch = spark.read.format("dynamodb-streams").options(connection + ("tableName" -> table)).load()
    batch.createOrReplaceTempView("ddb_batch")
    assert(byKey(rows("ddb_batch")) == Map("old" -> expected(0), "new" -> expected(0)))
  }

  test("a stream named by its ARN is read as by its table") {
    val table = freshTable("by-arn")
    changes(table, Seq("x"), updates = 1)
    val arn = dynamo.describeTable(DescribeTableRequest.builder().tableName(table).build()).table().latestStreamArn()
    val batch = spark.read.format("dynamodb-streams").options(connection + ("dynamoDbStreamArn" -> arn)).load()
    batch.createOrReplaceTempView("ddb_by_arn")
    assert(byKey(rows("ddb_by_arn")) == Map("x" -> expected(1)))
  }

  test("CREATE TABLE ... USING `dynamodb-streams` reads the table's stream with SELECT and readStream.table") {
    val table = freshTable("sql-table")
    changes(table, Seq("q"), updates = 1)
    val options = (connection ++ Map("tableName" -> table, "initialPosition" -> "trim_horizon"))
      .map { case (k, v) => s"$k '$v'" }.mkString(", ")
    spark.sql(s"CREATE TABLE ddb_sql USING `dynamodb-streams` OPTIONS ($options)")
    try {
      spark.table("ddb_sql").createOrReplaceTempView("ddb_sql_batch")
      assert(byKey(rows("ddb_sql_batch")) == Map("q" -> expected(1)))
      availableNow(spark.readStream.table("ddb_sql"), "ddb_sql_stream", Files.createTempDirectory("ddb-sql").toFile)
      assert(byKey(rows("ddb_sql_stream")) == Map("q" -> expected(1)))
    } finally spark.sql("DROP TABLE IF EXISTS ddb_sql")
  }

  test("a table without a stream, or no table, fails with [KINESIS_DYNAMODB_STREAM_NOT_ENABLED] saying how to enable") {
    val table = freshTable("no-stream", stream = false)
    for (name <- Seq(table, "no-such-table")) {
      val e = intercept[KinesisException](reader(Map("tableName" -> name)))
      assert(e.condition == "KINESIS_DYNAMODB_STREAM_NOT_ENABLED", e.getMessage)
      assert(
        e.getMessage.contains(s"aws dynamodb update-table --table-name $name --stream-specification " +
          "StreamEnabled=true,StreamViewType=NEW_AND_OLD_IMAGES"), e.getMessage)
    }
  }

  test("the assembled jar's DynamoDB Streams client, cut to what it reaches, lists, describes and reads") {
    val jar = new File(Option(System.getProperty("spark-kinesis.test.assemblyJar")).getOrElse(fail("no assemblyJar")))
    assume(jar.isFile, s"$jar is missing: build the jars first (make jar; make test does)")
    val table = freshTable("assembled")
    changes(table, Seq("j"), updates = 1)
    // The jar alone, with the logging API Spark gives it (no unrelocated SDK class can be found).
    val slf4j = System.getProperty("spark-kinesis.test.sparkClasspath", "").split(File.pathSeparator)
      .filter(p => new File(p).getName.startsWith("slf4j-api")).map(p => new File(p).toURI.toURL)
    val loader = new URLClassLoader(jar.toURI.toURL +: slf4j, ClassLoader.getPlatformClassLoader)
    try {
      val shaded = new Shaded(loader)
      val credentials = shaded.static("auth.credentials.StaticCredentialsProvider", "create",
        shaded.static("auth.credentials.AwsBasicCredentials", "create", AccessKey, SecretKey))
      val builder = shaded.static("services.dynamodb.streams.DynamoDbStreamsClient", "builder")
      shaded.call(builder, "region", shaded.static("regions.Region", "of", "us-east-1"))
      shaded.call(builder, "endpointOverride", URI.create(moto))
      shaded.call(builder, "credentialsProvider", credentials)
      val client = shaded.call(builder, "build")
      try {
        val streams = shaded.call(shaded.call(client, "listStreams"), "streams").asInstanceOf[java.util.List[AnyRef]]
        val arn = streams.asScala.map(shaded.call(_, "streamArn").asInstanceOf[String]).find(_.contains(s"/$table/"))
          .getOrElse(fail(s"ListStreams did not list $table"))
        def request(kind: String, fields: (String, String)*): AnyRef = {
          val b = shaded.static(s"services.dynamodb.model.$kind", "builder")
          fields.foreach { case (f, v) => shaded.call(b, f, v) }
          shaded.call(b, "build")
        }
        val description = shaded.call(shaded.call(client, "describeStream",
            request("DescribeStreamRequest",
              "streamArn" -> arn)), "streamDescription")
        val shard = shaded.call(shaded.call(description, "shards").asInstanceOf[java.util.List[AnyRef]].get(0),
          "shardId").asInstanceOf[String]
        val iterator = shaded.call(shaded.call(client, "getShardIterator",
            request("GetShardIteratorRequest",
              "streamArn" -> arn, "shardId" -> shard, "shardIteratorType" -> "TRIM_HORIZON")), "shardIterator")
        val records = shaded.call(shaded.call(client, "getRecords",
            request("GetRecordsRequest",
              "shardIterator" -> iterator.asInstanceOf[String])), "records").asInstanceOf[java.util.List[AnyRef]]
        assert(records.asScala.map(r => shaded.call(r, "eventNameAsString")) == Seq("INSERT", "MODIFY", "REMOVE"))
        val image = shaded.call(shaded.call(records.get(1), "dynamodb"), "newImage").asInstanceOf[java.util.Map[_, _]]
        assert(image.keySet().asScala == Set("pk", "v"))
      } finally shaded.call(client, "close")
    } finally loader.close()
  }
}

object DynamoDbStreamsSuite {
  private val AccessKey = "local-test-key"
  private val SecretKey = "local-test-secret"

  /** Calls into the assembly's relocated AWS SDK by reflection (its classes are not on the tests' class path). */
  private final class Shaded(loader: ClassLoader) {
    private val prefix = "io.sparkkinesis.shaded.software.amazon.awssdk."

    def static(cls: String, method: String, args: AnyRef*): AnyRef =
      invoke(loader.loadClass(prefix + cls), null, method, args)

    def call(target: AnyRef, method: String, args: AnyRef*): AnyRef = invoke(target.getClass, target, method, args)

    private def invoke(cls: Class[_], target: AnyRef, name: String, args: Seq[AnyRef]): AnyRef = {
      val m = cls.getMethods.find { m =>
        m.getName == name && m.getParameterCount == args.size &&
        m.getParameterTypes.zip(args).forall { case (p, a) => p.isInstance(a) }
      }.getOrElse(throw new NoSuchMethodException(s"${cls.getName}.$name(${args.map(_.getClass.getName)})"))
      m.setAccessible(true)
      m.invoke(target, args: _*)
    }
  }
}
