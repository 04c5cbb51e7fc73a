package io.sparkkinesis.config

import java.util.Locale

import scala.util.Try

import io.sparkkinesis.errors.KinesisErrors

/**
 * The table properties that shape a stream of a Kinesis catalog: `CREATE TABLE <catalog>.<stream> TBLPROPERTIES
 * ('shardCount' = '4')` or `('streamMode' = 'on_demand')`, and the same names in `ALTER TABLE ... SET TBLPROPERTIES`.
 * Nothing else can be set: a catalog keeps no options of its own per stream (they are the catalog's, or a query's).
 */
private[sparkkinesis] object StreamProperties {
  val ShardCount = "shardCount"
  val StreamMode = "streamMode"
  val Provisioned = "provisioned"
  val OnDemand = "on_demand"

  /** What one statement asks of a stream: a shard count, a capacity mode, or both. */
  final case class Shape(shards: Option[Int], onDemand: Option[Boolean])

  /** The most shards one call may ask for (UpdateShardCount doubles or halves at most; CreateStream has no less). */
  private val MaxShards = 10000

  private val Example = s"TBLPROPERTIES ('$ShardCount' = '4') or ('$StreamMode' = '$OnDemand')"

  /** Properties Spark adds to every table it creates, which are not the stream's. */
  private val SparkOwned = KinesisOptions.catalogOwnedKeys

  /** The shape `properties` ask for, refusing any other property (options included) with what can be set. */
  def shape(properties: Map[String, String]): Shape = {
    val asked = properties.filterNot { case (k, _) => SparkOwned.contains(k.toLowerCase(Locale.ROOT)) }
    asked.keys.toSeq.sorted.find(k => !k.equalsIgnoreCase(ShardCount) && !k.equalsIgnoreCase(StreamMode)).foreach { k =>
      val problem = if (k.toLowerCase(Locale.ROOT).startsWith(TableOptions.Prefix))
        "is an option, which a Kinesis catalog does not keep per stream"
      else "is not one a Kinesis catalog can set on a stream"
      throw KinesisErrors.invalidTableProperty(k, problem,
        s"only '$ShardCount' and '$StreamMode' can be set, as in $Example. Set connection options and read or write " +
          "defaults as the catalog's options (spark.sql.catalog.<name>.<option>), or per query.")
    }
    def value(name: String) = asked.collectFirst { case (k, v) if k.equalsIgnoreCase(name) => v.trim }
    val shards = value(ShardCount).map { v =>
      Try(v.toInt).toOption.filter(n => n >= 1 && n <= MaxShards).getOrElse(throw KinesisErrors.invalidTableProperty(
          ShardCount, s"has the value '$v'", s"a whole number of shards from 1 to $MaxShards, as in $Example."))
    }
    val mode = value(StreamMode).map(_.toLowerCase(Locale.ROOT).replace('-', '_')).map {
      case Provisioned => false
      case OnDemand => true
      case other => throw KinesisErrors.invalidTableProperty(StreamMode, s"has the value '$other'",
          s"'$Provisioned' (with '$ShardCount') or '$OnDemand', as in $Example.")
    }
    if (mode.contains(true) && shards.isDefined)
      throw KinesisErrors.invalidTableProperty(ShardCount, s"is set with '$StreamMode' = '$OnDemand'",
        "an on-demand stream scales by itself; give one of the two.")
    Shape(shards, mode)
  }
}
