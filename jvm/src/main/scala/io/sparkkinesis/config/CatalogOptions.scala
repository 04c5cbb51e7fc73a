package io.sparkkinesis.config

import java.util.Locale

import io.sparkkinesis.errors.KinesisErrors

/**
 * A Kinesis catalog's options (`spark.sql.catalog.<name>.<option>`): its own ([[Scope.Catalog]]: whether statements
 * may create, change or delete streams) and every other one, which its tables take as their options: the connection's
 * (`region`, `endpointUrl`, credentials, `roleArn`, ...) and defaults for every read or write of its streams
 * (`initialPosition`, `aggregation`, ...). Those are checked here as a read's and a write's would be, so a misspelt
 * catalog option fails when the catalog is first used, naming it; `connection` is the read's parse, which says how
 * to reach the service. `streamName` is not one: a catalog's tables are its streams.
 */
private[sparkkinesis] final case class CatalogOptions(
    allowCreateStream: Boolean,
    allowAlterStream: Boolean,
    allowDropStream: Boolean,
    tableOptions: Map[String, String],
    connection: ParsedOptions) {

  /** The options of the table of one stream: the catalog's, naming the stream. */
  def forStream(stream: String): Map[String, String] = tableOptions + (KinesisOptions.StreamName.name -> stream)
}

private[sparkkinesis] object CatalogOptions {

  private val own: Set[String] = KinesisOptions.all.filter(_.scope == Scope.Catalog).map(_.key).toSet

  def parse(options: Map[String, String]): CatalogOptions = {
    val (mine, tables) = options.partition { case (k, _) => own.contains(k.toLowerCase(Locale.ROOT)) }
    tables.keys.find(_.equalsIgnoreCase(KinesisOptions.StreamName.name)).foreach { k =>
      throw KinesisErrors.conflictingOptions(s"Option '$k' is not a catalog option: each table of a Kinesis catalog " +
        "is the stream it is named after (SELECT ... FROM <catalog>.<stream>); remove it from the catalog's options.")
    }
    def asSide(scope: Scope) = ParsedOptions(TableOptions.forScope(tables, scope, Dialect.Kinesis), scope)
    val asRead = asSide(Scope.Source)
    asSide(Scope.Sink) // checked only: a write of the catalog's tables parses its own
    val parsed = ParsedOptions(mine, Scope.Catalog)
    CatalogOptions(parsed.getOrDefault(KinesisOptions.AllowCreateStream),
      parsed.getOrDefault(KinesisOptions.AllowAlterStream),
      parsed.getOrDefault(KinesisOptions.AllowDropStream), tables, asRead)
  }
}
