package io.sparkkinesis.sql

import java.nio.file.Files
import java.util.concurrent.TimeUnit

import io.sparkkinesis.compat.CollectionConverters._

import org.apache.spark.sql.AnalysisException
import org.apache.spark.sql.streaming.Trigger
import org.scalatest.funsuite.AnyFunSuite
import software.amazon.awssdk.services.kinesis.model.{DescribeStreamSummaryRequest, ResourceNotFoundException}

import io.sparkkinesis.aws.StreamAdmin
import io.sparkkinesis.errors.KinesisOptionException
import io.sparkkinesis.source.FanOutSourceSuite.Rows
import io.sparkkinesis.testing.ErrorText.assertMentions
import io.sparkkinesis.testing.{
  CapturedLogs,
  Integration,
  LocalKinesisServer,
  LocalKinesisServers,
  Resharding,
  SharedSparkSession,
  TestStreams
}
import io.sparkkinesis.testing.TestStreams.{put, readAll, syncClient}

/**
 * A Kinesis catalog (`spark.sql.catalog.<name>=io.sparkkinesis.KinesisCatalog`) on both local servers: its listing,
 * reads and writes of `<catalog>.<stream>` as the DataFrame API reads and writes, a stream's facts, the creation of
 * streams and the guarded ALTER and DROP, and the secrets kept out of what SQL shows.
 */
@Integration
class KinesisCatalogSuite extends AnyFunSuite with LocalKinesisServers with SharedSparkSession {

  private val secret = "local-test-secret"

  /** Registers catalog `name` on `server` (catalogs are set up at their first use, so a running session takes them). */
  private def catalog(name: String, server: LocalKinesisServer, extra: Map[String, String] = Map.empty): String = {
    spark.conf.set(s"spark.sql.catalog.$name", "io.sparkkinesis.KinesisCatalog")
    (TestStreams.connectionOptions(server) ++ extra).foreach { case (k, v) =>
      spark.conf.set(s"spark.sql.catalog.$name.$k", v)
    }
    name
  }

  private def shardCount(server: LocalKinesisServer, stream: String): Int =
    syncClient(server).describeStreamSummary(DescribeStreamSummaryRequest.builder().streamName(stream).build())
      .streamDescriptionSummary().openShardCount()

  private def exists(server: LocalKinesisServer, stream: String): Boolean =
    try { shardCount(server, stream); true }
    catch { case _: ResourceNotFoundException => false }

  /** The connector's error that `body` failed with, itself or as the cause of Spark's. */
  private def connectorError(body: => Any): KinesisOptionException = {
    val thrown = intercept[Exception](body)
    Iterator.iterate[Throwable](thrown)(_.getCause).takeWhile(_ != null).collectFirst {
      case e: KinesisOptionException => e
    }.getOrElse(fail("not the connector's error", thrown))
  }

  test("SHOW TABLES lists the account's streams, page after page, on both servers") {
    for (server <- Seq(kinesalite, kinesisMock)) {
      val prefix = s"sqlcat-list-${System.nanoTime()}"
      val made = (0 until 3).map(i => s"$prefix-$i")
      made.foreach(TestStreams.createStream(server, _, 1))
      val name = catalog(s"list_${server.kind.replace("-", "_")}", server)
      val shown = spark.sql(s"SHOW TABLES IN $name LIKE '$prefix*'").collect().map(_.getAs[String]("tableName"))
      assert(shown.sorted.toSeq == made, s"${server.kind}: SHOW TABLES showed ${shown.toSeq}")
      // Pages of two streams: every stream once, as in one page.
      val paged = StreamAdmin.list(TestStreams.connection(server), pageSize = 2)
      assert(made.forall(paged.contains) && paged.distinct == paged, s"${server.kind}: paged listing $paged")
      assert(paged.sorted == StreamAdmin.list(TestStreams.connection(server), pageSize = 1000).sorted)
    }
  }

  test("SELECT and INSERT INTO a catalog's stream read and write as the DataFrame API does") {
    val server = kinesalite
    val name = catalog("rw", server)
    val stream = TestStreams.freshStream(server, "sqlcat-rw", 2)
    put(server, stream, (0 until 300).map(i => s"k${i % 7}" -> s"r$i"))
    val read = spark.sql(s"SELECT CAST(data AS STRING) AS d, partitionKey FROM $name.`$stream`").collect()
      .map(r => (r.getString(0), r.getString(1)))
    assert(read.sorted.toSeq == (0 until 300).map(i => (s"r$i", s"k${i % 7}")).sorted)
    val api = spark.read.format("kinesis").options(TestStreams.options(server, stream)).load()
    val viaApi =
      api.selectExpr("CAST(data AS STRING)", "partitionKey").collect().map(r => (r.getString(0), r.getString(1)))
    assert(read.sorted.toSeq == viaApi.sorted.toSeq)
    assert(spark.table(s"$name.`$stream`").dtypes.toSeq == api.dtypes.toSeq, "the table's columns are format kinesis's")

    // A query's own options are laid over the catalog's: in SQL with WITH (...) after the table (Spark 4; Spark 3.5's
    // SQL has no such clause), and with the DataFrame API's read options on every line.
    val withOptions = (key: String, value: String) =>
      if (spark.version.startsWith("3.")) spark.read.option(key, value).table(s"$name.`$stream`").collect()
      else spark.sql(s"SELECT * FROM $name.`$stream` WITH ('$key' = '$value')").collect()
    val latest = connectorError(withOptions("initialPosition", "latest"))
    assertMentions(latest, "initialPosition", "latest")
    val invalid = connectorError(withOptions("maxRecordsPerFetch", "many"))
    assertMentions(invalid, "[KINESIS_INVALID_OPTION_VALUE]", "many")
    if (spark.version.startsWith("3."))
      intercept[org.apache.spark.sql.catalyst.parser.ParseException](
        spark.sql(s"SELECT * FROM $name.`$stream` WITH ('initialPosition' = 'latest')"))

    spark.sql(s"INSERT INTO $name.`$stream` SELECT CONCAT('w', CAST(id AS STRING)) AS data, " +
      "CAST(id % 5 AS STRING) AS partitionKey FROM range(150)")
    val written = readAll(server, stream).filter(_.text.startsWith("w"))
    assert(written.map(r => (r.text, r.partitionKey)).sorted == (0 until 150).map(i => (s"w$i", (i % 5).toString)).sorted)
  }

  test("readStream.table on a stream named by its ARN reads every record once, each key in order over a split") {
    val server = kinesisMock
    val name = catalog("arns", server, Map("initialPosition" -> "trim_horizon", "shardDiscoveryInterval" -> "1s"))
    val stream = TestStreams.freshStream(server, "sqlcat-arn", 2)
    val arn =
      StreamAdmin.describe(TestStreams.connection(server), io.sparkkinesis.aws.StreamRef(stream, None, None)).arn
    put(server, stream, Resharding.records(0, 120))
    TestStreams.split(server, stream, Resharding.openShards(server, stream).head)
    put(server, stream, Resharding.records(120, 240))
    val rows = new Rows()
    val query = spark.readStream.table(s"$name.`$arn`").selectExpr("CAST(data AS STRING)", "partitionKey", "shardId")
      .writeStream.foreachBatch(rows).option("checkpointLocation", Files.createTempDirectory("sqlcat-arn").toString)
      .trigger(Trigger.AvailableNow()).start()
    try assert(query.awaitTermination(TimeUnit.MINUTES.toMillis(3)), "the AvailableNow read did not end in 3 minutes")
    finally query.stop()
    query.exception.foreach(e => fail(e))
    val found = Resharding.problems(rows.rows.asScala.toSeq, 0 until 240, Resharding.parents(server, stream),
      childrenLater = false)
    assert(found.isEmpty, found.mkString("; "))
  }

  test("DESCRIBE TABLE EXTENDED shows the stream's facts, and no statement shows the catalog's secret key") {
    val server = kinesisMock
    val name = catalog("facts", server)
    val stream = TestStreams.freshStream(server, "sqlcat-facts", 3)
    val described = spark.sql(s"DESCRIBE TABLE EXTENDED $name.`$stream`").collect()
      .map(r => r.getString(0) -> r.getString(1)).toMap
    assert(described.get("data").contains("binary"), s"the source's columns: $described")
    val properties = described.getOrElse("Table Properties", "")
    val arn =
      StreamAdmin.describe(TestStreams.connection(server), io.sparkkinesis.aws.StreamRef(stream, None, None)).arn
    assert(described.get("Location").contains(arn), described.toString)
    for (fact <- Seq(s"streamArn=$arn", "shardCount=3", "streamMode=provisioned", "retentionHours=24",
        "streamStatus=ACTIVE", "maxRecordSizeKiB=", "consumerCount=0"))
      assert(properties.contains(fact), s"'$fact' is not among $properties")
    for (statement <- Seq(s"DESCRIBE TABLE EXTENDED $name.`$stream`", s"SHOW TBLPROPERTIES $name.`$stream`",
        s"SHOW CREATE TABLE $name.`$stream`", s"EXPLAIN EXTENDED SELECT * FROM $name.`$stream`")) {
      val shown = spark.sql(statement).collect().map(_.mkString(" | ")).mkString("\n")
      assert(shown.contains(stream), s"$statement does not show the stream:\n$shown")
      assert(!shown.contains(secret), s"$statement shows the secret key:\n$shown")
    }
  }

  test("read_kinesis and the schema registry functions come with the jar: no spark.sql.extensions in this session") {
    assert(!spark.conf.getOption("spark.sql.extensions").exists(_.contains("Kinesis")), "the session names them")
    val server = kinesalite
    val stream = TestStreams.freshStream(server, "sqlcat-jar-alone", 2)
    put(server, stream, (0 until 120).map(i => s"k${i % 9}" -> s"r$i"))
    val o = TestStreams.connectionOptions(server)
    val counted = spark.sql(s"SELECT count(*) FROM read_kinesis(streamName => '$stream', region => '${o("region")}', " +
      s"initialPosition => 'trim_horizon', endpointUrl => '${o("endpointUrl")}', cborEnabled => ${o("cborEnabled")}, " +
      s"awsAccessKeyId => '${o("awsAccessKeyId")}', awsSecretKey => '${o("awsSecretKey")}')").head().getLong(0)
    assert(counted == 120L)
    val functions = spark.sql("SHOW FUNCTIONS LIKE '*_glue_schema_registry'").collect().map(_.getString(0)).toSeq
    assert(functions.sorted == Seq("from_glue_schema_registry", "to_glue_schema_registry"), functions)
  }

  test("a catalog warns, by setting name, about a secret setting that spark.redaction.regex does not match") {
    // This session has Spark's default pattern, which matches awsSecretKey but not roleExternalId.
    val secret = "ExTeRnAl-49-warn-do-not-log"
    val name = catalog("unredacted", kinesalite,
      Map("roleArn" -> "arn:aws:iam::123456789012:role/reader",
        "roleExternalId" -> secret, "stsEndpointUrl" -> "http://127.0.0.1:9"))
    val logs = new CapturedLogs(classOf[io.sparkkinesis.KinesisCatalog].getName)
    try {
      // The catalog is set up at its first use; USE sets it up without calling AWS.
      try spark.sql(s"USE $name")
      finally spark.sql("USE spark_catalog")
      val warned = logs.warnings.filter(_.contains("spark.redaction.regex"))
      assert(warned.exists(_.contains(s"spark.sql.catalog.$name.roleExternalId")), logs.warnings)
      assert(!warned.exists(_.contains("awsSecretKey")), warned)
      assert(!logs.warnings.exists(_.contains(secret)), "a warning shows the secret")
    } finally logs.close()
  }

  test("a missing stream is Spark's table-not-found, naming it; bad catalog options and properties name themselves") {
    val name = catalog("missing", kinesalite)
    val e = intercept[AnalysisException](spark.sql(s"SELECT * FROM $name.`sqlcat-never-created`").collect())
    assertMentions(e, "TABLE_OR_VIEW_NOT_FOUND", "sqlcat-never-created")
    catalog("misspelt", kinesalite, Map("initialPositon" -> "latest"))
    val unknown = intercept[KinesisOptionException](spark.sql("SHOW TABLES IN misspelt").collect())
    assertMentions(unknown, "[KINESIS_UNKNOWN_OPTION]", "initialPositon")
    val property = intercept[KinesisOptionException](
      spark.sql(s"CREATE TABLE $name.`sqlcat-bad-${System.nanoTime()}` TBLPROPERTIES ('shardCount' = 'four')"))
    assertMentions(property, "[KINESIS_INVALID_TABLE_PROPERTY]", "four")
  }

  test("CREATE, ALTER and DROP TABLE create, change or delete a stream only where the catalog allows each") {
    val server = kinesisMock
    val guarded = catalog("guarded", server)
    val open = catalog("open", server,
      Map("allowCreateStream" -> "true", "allowAlterStream" -> "true", "allowDropStream" -> "true"))
    val stream = s"sqlcat-create-${System.nanoTime()}"
    val created = intercept[KinesisOptionException](
      spark.sql(s"CREATE TABLE $guarded.`$stream` TBLPROPERTIES ('shardCount' = '2')"))
    assertMentions(created, "[KINESIS_CATALOG_CHANGE_NOT_ALLOWED]",
      s"spark.sql.catalog.$guarded.allowCreateStream=true")
    assert(!exists(server, stream))
    spark.sql(s"CREATE TABLE $open.`$stream` TBLPROPERTIES ('shardCount' = '2')")
    assert(shardCount(server, stream) == 2)
    val twice =
      intercept[AnalysisException](spark.sql(s"CREATE TABLE $open.`$stream` TBLPROPERTIES ('shardCount' = '3')"))
    assertMentions(twice, "already exists")
    // A table that exists is no change: IF NOT EXISTS skips it on a catalog that may not create streams, too.
    spark.sql(s"CREATE TABLE IF NOT EXISTS $guarded.`$stream` TBLPROPERTIES ('shardCount' = '3')")
    assert(shardCount(server, stream) == 2)
    val onDemand = s"sqlcat-ondemand-${System.nanoTime()}"
    spark.sql(s"CREATE TABLE $open.`$onDemand` TBLPROPERTIES ('streamMode' = 'on_demand')")
    assert(spark.sql(s"SHOW TBLPROPERTIES $guarded.`$onDemand` ('streamMode')").head().getString(1) == "on_demand")

    // Spark 3.5 wraps what a catalog's alterTable throws in an error of its own ("Unsupported table change: ...").
    val refused = connectorError(spark.sql(s"ALTER TABLE $guarded.`$stream` SET TBLPROPERTIES ('shardCount' = '4')"))
    assertMentions(refused, "[KINESIS_CATALOG_CHANGE_NOT_ALLOWED]", s"spark.sql.catalog.$guarded.allowAlterStream=true")
    assert(shardCount(server, stream) == 2)
    spark.sql(s"ALTER TABLE $open.`$stream` SET TBLPROPERTIES ('shardCount' = '4')")
    assert(shardCount(server, stream) == 4)

    val kept = intercept[KinesisOptionException](spark.sql(s"DROP TABLE $guarded.`$stream`"))
    assertMentions(kept, "[KINESIS_CATALOG_CHANGE_NOT_ALLOWED]", s"spark.sql.catalog.$guarded.allowDropStream=true")
    assert(exists(server, stream))
    spark.sql(s"DROP TABLE $open.`$stream`")
    val deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60)
    while (exists(server, stream)) {
      assert(System.nanoTime() < deadline, s"$stream still exists a minute after DROP TABLE")
      Thread.sleep(100)
    }
    spark.sql(s"DROP TABLE IF EXISTS $open.`$stream`")
  }
}
