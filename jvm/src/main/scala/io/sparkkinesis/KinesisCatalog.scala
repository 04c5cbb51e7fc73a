package io.sparkkinesis

import java.util

import scala.annotation.nowarn

import io.sparkkinesis.compat.CollectionConverters._

import org.apache.spark.SparkEnv
import org.apache.spark.internal.Logging
import org.apache.spark.sql.catalyst.analysis.{
  NoSuchNamespaceException,
  NoSuchTableException,
  TableAlreadyExistsException
}
import org.apache.spark.sql.connector.catalog.{Column, Identifier, Table, TableCatalog, TableChange}
import org.apache.spark.sql.connector.expressions.Transform
import org.apache.spark.sql.types.{StructField, StructType}
import org.apache.spark.sql.util.CaseInsensitiveStringMap
import software.amazon.awssdk.services.kinesis.model.ResourceInUseException

import io.sparkkinesis.aws.{AwsConnection, StreamAdmin, StreamFacts, StreamRef}
import io.sparkkinesis.config.{CatalogOptions, Dialect, StreamProperties, TableOptions}
import io.sparkkinesis.errors.{Condition, KinesisErrors, KinesisException}
import io.sparkkinesis.reader.KinesisSchema

/**
 * The streams of one account and region as the tables of a catalog: `spark.sql.catalog.kinesis=
 * io.sparkkinesis.KinesisCatalog`, with the connection's options (and defaults for every read and write) as the
 * catalog's options, `spark.sql.catalog.kinesis.region=eu-west-1` ([[CatalogOptions]]). A table is named after its
 * stream, or its ARN (`kinesis.orders`, ``kinesis.`arn:aws:kinesis:...:stream/orders` ``); it reads and writes as the
 * format does. `SHOW TABLES IN kinesis` lists the streams, `DESCRIBE TABLE EXTENDED` shows a stream's facts,
 * `CREATE TABLE` creates a stream ([[StreamProperties]]), `ALTER TABLE ... SET TBLPROPERTIES` and `DROP TABLE` change
 * or delete one; each only where the catalog's options allow it.
 */
class KinesisCatalog extends TableCatalog with Logging {

  @volatile private var catalogName: String = "kinesis"
  @volatile private var options: CatalogOptions = CatalogOptions.parse(Map.empty)

  override def initialize(name: String, catalogOptions: CaseInsensitiveStringMap): Unit = {
    catalogName = name
    val settings = catalogOptions.asCaseSensitiveMap().asScala.toMap
    options = CatalogOptions.parse(settings)
    warnUnredacted(settings.keys.toSeq)
  }

  /**
   * A warning for each secret option of the catalog (`roleExternalId`, ...) whose setting Spark's
   * `spark.redaction.regex` does not match: the Environment tab and the event log show its value (docs/sql.md,
   * "Secrets"). Named by the setting, never by its value.
   */
  private def warnUnredacted(keys: Seq[String]): Unit = Option(SparkEnv.get).foreach { env =>
    val pattern = env.conf.get("spark.redaction.regex", KinesisCatalog.SparkRedactionRegex)
    val regex = scala.util.Try(pattern.r).getOrElse(KinesisCatalog.SparkRedactionRegex.r)
    keys.filter(TableOptions.isKnownSecret(_, Dialect.Kinesis)).map(k => s"spark.sql.catalog.$catalogName.$k")
      .filter(setting => regex.findFirstIn(setting).isEmpty)
      .foreach { setting =>
        logWarning(s"Setting '$setting' holds a secret, but spark.redaction.regex ('$pattern') does not match its " +
          "name, so the Spark UI's Environment tab and the event log show its value. Add its option's name to " +
          "spark.redaction.regex when the application starts (configure_spark_with_kinesis does so; docs/sql.md, " +
          "\"Secrets\").")
      }
  }

  override def name(): String = catalogName

  /** The connection, resolved at first use, after `initialize` (the region may come from the environment). */
  private lazy val aws: AwsConnection = AwsConnection.fromOptions(options.connection, Nil)

  /** The stream a table names: tables sit right under the catalog, named by stream name or ARN. */
  private def streamOf(ident: Identifier): StreamRef = {
    if (ident.namespace().nonEmpty) throw new NoSuchTableException(ident)
    StreamRef.parse(ident.name())
  }

  override def listTables(namespace: Array[String]): Array[Identifier] = {
    if (namespace.nonEmpty) throw new NoSuchNamespaceException(namespace)
    StreamAdmin.list(aws).map(n => Identifier.of(Array.empty[String], n)).toArray
  }

  override def loadTable(ident: Identifier): Table = {
    val stream = streamOf(ident)
    tableOf(ident, stream, describe(ident, stream))
  }

  private def describe(ident: Identifier, stream: StreamRef): StreamFacts =
    try StreamAdmin.describe(aws, stream)
    catch {
      case e: KinesisException if e.is(Condition.StreamNotFound) => throw new NoSuchTableException(ident)
    }

  private def tableOf(ident: Identifier, stream: StreamRef, facts: StreamFacts): Table =
    new KinesisTable(KinesisSchema.Databricks.schema, Dialect.Kinesis, None, options.forStream(stream.toString),
      facts.properties ++ Map(TableCatalog.PROP_PROVIDER -> "kinesis", TableCatalog.PROP_LOCATION -> facts.arn),
      s"$catalogName.${ident.name()}")

  override def createTable(
      ident: Identifier,
      columns: Array[Column],
      partitions: Array[Transform],
      properties: util.Map[String, String]): Table =
    create(ident, StructType(columns.map(c => StructField(c.name(), c.dataType(), c.nullable()))), partitions,
      properties)

  // Spark 3.5 still asks every catalog for this form; Spark 4 calls the one above.
  @nowarn("cat=deprecation")
  override def createTable(
      ident: Identifier,
      schema: StructType,
      partitions: Array[Transform],
      properties: util.Map[String, String]): Table = create(ident, schema, partitions, properties)

  private def create(
      ident: Identifier,
      schema: StructType,
      partitions: Array[Transform],
      properties: util.Map[String, String]): Table = {
    val stream = streamOf(ident)
    if (schema.nonEmpty && !KinesisSchema.Databricks.matches(schema))
      throw KinesisErrors.userSchemaNotAllowed(Dialect.Kinesis.format, KinesisSchema.Databricks.schema.fieldNames.toSeq)
    if (partitions.nonEmpty)
      throw KinesisErrors.invalidTableProperty("PARTITIONED BY", "is given",
        "a stream is partitioned by its partition keys; leave PARTITIONED BY out.")
    val shape = StreamProperties.shape(properties.asScala.toMap)
    if (!options.allowCreateStream)
      throw KinesisErrors.catalogChangeNotAllowed("CREATE TABLE", stream.toString, catalogName,
        s"Creating a table of a Kinesis catalog creates a stream, which is billed from its creation; set " +
          s"spark.sql.catalog.$catalogName.allowCreateStream=true to allow it.")
    val shards = (shape.shards, shape.onDemand) match {
      case (_, Some(true)) => None
      case (Some(n), _) => Some(n)
      case (None, _) => throw KinesisErrors.invalidTableProperty(StreamProperties.ShardCount, "is missing",
          s"a new stream needs '${StreamProperties.ShardCount}' (provisioned) or '${StreamProperties.StreamMode}' = " +
            s"'${StreamProperties.OnDemand}', as in TBLPROPERTIES ('${StreamProperties.ShardCount}' = '4').")
    }
    val facts =
      try StreamAdmin.create(aws, stream.name, shards)
      catch {
        case e: KinesisException if e.getCause.isInstanceOf[ResourceInUseException] =>
          throw new TableAlreadyExistsException(ident)
      }
    tableOf(ident, stream, facts)
  }

  override def alterTable(ident: Identifier, changes: TableChange*): Table = {
    val stream = streamOf(ident)
    val facts = describe(ident, stream)
    val set = changes.map {
      case s: TableChange.SetProperty => s.property() -> s.value()
      case other => throw KinesisErrors.invalidTableProperty(other.getClass.getSimpleName,
          "is not a change a Kinesis catalog can make",
          s"ALTER TABLE ... SET TBLPROPERTIES ('${StreamProperties.ShardCount}' = '8') " +
            s"or ('${StreamProperties.StreamMode}' = '${StreamProperties.OnDemand}'); a table's columns are the source's.")
    }.toMap
    val shape = StreamProperties.shape(set)
    if (!options.allowAlterStream)
      throw KinesisErrors.catalogChangeNotAllowed("ALTER TABLE", stream.toString, catalogName,
        s"Set spark.sql.catalog.$catalogName.allowAlterStream=true to let ALTER TABLE change shard counts and " +
          "capacity modes.")
    val moded = shape.onDemand.filter(_ != (facts.mode == StreamProperties.OnDemand))
      .map(onDemand => StreamAdmin.updateMode(aws, stream, facts.arn, onDemand)).getOrElse(facts)
    val resharded = shape.shards.filter(_ != moded.openShards)
      .map(n => StreamAdmin.updateShardCount(aws, stream, n)).getOrElse(moded)
    tableOf(ident, stream, resharded)
  }

  override def dropTable(ident: Identifier): Boolean = {
    val stream = streamOf(ident)
    if (!options.allowDropStream)
      throw KinesisErrors.catalogChangeNotAllowed("DROP TABLE", stream.toString, catalogName,
        s"Dropping a table of a Kinesis catalog deletes its stream and every record in it; set " +
          s"spark.sql.catalog.$catalogName.allowDropStream=true to allow it.")
    try {
      StreamAdmin.delete(aws, stream)
      true
    } catch {
      case e: KinesisException if e.is(Condition.StreamNotFound) => false
    }
  }

  override def renameTable(oldIdent: Identifier, newIdent: Identifier): Unit =
    throw KinesisErrors.catalogChangeNotAllowed("ALTER TABLE ... RENAME TO", streamOf(oldIdent).toString,
      catalogName, "Kinesis cannot rename a stream: create the new one and copy the records with a query.")
}

private object KinesisCatalog {

  /** Spark's default `spark.redaction.regex`. */
  val SparkRedactionRegex = "(?i)secret|password|token|access[.]?key"
}
