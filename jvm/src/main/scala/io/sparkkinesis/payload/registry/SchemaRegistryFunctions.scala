package io.sparkkinesis.payload.registry

import org.apache.spark.sql.catalyst.FunctionIdentifier
import org.apache.spark.sql.catalyst.expressions.{Expression, ExpressionInfo}
import org.apache.spark.sql.catalyst.util.MapData
import org.apache.spark.sql.types.{MapType, NullType, StringType}

import io.sparkkinesis.config.KinesisOptions
import io.sparkkinesis.errors.KinesisErrors

/**
 * How the schema registry functions are made: from their SQL arguments (the builders the session extension
 * registers) or from the Scala and Python API ([[io.sparkkinesis.functions]]). Either way the options are parsed and
 * the schemas found here, on the driver, when the query is defined.
 */
private[sparkkinesis] object SchemaRegistryFunctions {

  type Builder = Seq[Expression] => Expression

  /** What `spark.sql.extensions=io.sparkkinesis.KinesisSparkExtensions` registers, for `injectFunction`. */
  def all: Seq[(FunctionIdentifier, ExpressionInfo, Builder)] = Seq(
    (FunctionIdentifier(FromGlueSchemaRegistry.Name),
      info(classOf[FromGlueSchemaRegistry], FromGlueSchemaRegistry.Name,
        "_FUNC_(data, options) - Decodes Glue Schema Registry (or, with framing=none, plain) Avro payloads into a " +
          "struct; options is a map such as map('schemaName', 'orders', 'registryName', 'shop'). " +
          "See docs/schema-registry.md."), decodeFromSql),
    (FunctionIdentifier(ToGlueSchemaRegistry.Name),
      info(classOf[ToGlueSchemaRegistry], ToGlueSchemaRegistry.Name,
        "_FUNC_(value, schema, options) - Encodes a value (a struct) as a Glue Schema Registry Avro payload, with the " +
          "Avro schema given (or NULL for the registered schema named in options). See docs/schema-registry.md."),
      encodeFromSql))

  def decode(data: Expression, options: Map[String, String]): FromGlueSchemaRegistry = {
    val settings = RegistrySettings.parse(options)
    val reader = RegistrySchemas.reader(settings)
    val valueType = reader.format.decodedType(reader.definition, settings, settings.schemaText)
    if (settings.permissive && valueType.fieldNames.exists(_.equalsIgnoreCase(settings.errorField)))
      throw KinesisErrors.conflictingOptions(s"The decoded struct already has a field '${settings.errorField}'; set " +
        s"'${KinesisOptions.ErrorField.name}' to another name for the error field of mode=permissive.")
    FromGlueSchemaRegistry(data, settings, reader.definition, reader.format)
  }

  def encode(value: Expression, schema: Option[String], options: Map[String, String]): ToGlueSchemaRegistry = {
    val withSchema = ParsedMap.withSchema(options, schema)
    val settings = RegistrySettings.parse(withSchema)
    val writer = RegistrySchemas.writer(settings)
    writer.format.valueType(writer.definition, settings, settings.schemaText) // the schema is one the format can use
    ToGlueSchemaRegistry(value, settings, writer.definition, writer.format, writer.id)
  }

  private def decodeFromSql(args: Seq[Expression]): Expression = args match {
    case Seq(data, options) => decode(data, ParsedMap(options, FromGlueSchemaRegistry.Name))
    case _ => throw KinesisErrors.invalidOptionValue("options", s"${args.size} arguments",
        s"called as ${FromGlueSchemaRegistry.Name}(data, map('schemaName', '<name>', ...))")
  }

  private def encodeFromSql(args: Seq[Expression]): Expression = args match {
    case Seq(value, options) => encode(value, None, ParsedMap(options, ToGlueSchemaRegistry.Name))
    case Seq(value, schema, options) =>
      encode(value, ParsedMap.text(schema, ToGlueSchemaRegistry.Name), ParsedMap(options, ToGlueSchemaRegistry.Name))
    case _ => throw KinesisErrors.invalidOptionValue("options", s"${args.size} arguments",
        s"called as ${ToGlueSchemaRegistry.Name}(value, '<avro schema>' or NULL, map('schemaName', '<name>', ...))")
  }

  private def info(cls: Class[_], name: String, usage: String): ExpressionInfo =
    new ExpressionInfo(cls.getName, null, name, usage, "", "", "", "", "", "", "scala_udf")

  /** A function's constant arguments, as SQL gives them. */
  private object ParsedMap {
    def apply(e: Expression, function: String): Map[String, String] = e.dataType match {
      case MapType(StringType, StringType, _) if e.foldable =>
        val m = e.eval().asInstanceOf[MapData]
        if (m == null) Map.empty
        else {
          val keys = m.keyArray()
          val values = m.valueArray()
          (0 until m.numElements()).map { i =>
            keys.getUTF8String(i).toString -> Option(values.getUTF8String(i)).map(_.toString).orNull
          }.filter(_._2 != null).toMap
        }
      case _ => throw KinesisErrors.invalidOptionValue("options", "not a constant map of strings",
          s"a constant map of strings, as in $function(..., map('schemaName', 'orders', 'registryName', 'shop'))")
    }

    def text(e: Expression, function: String): Option[String] = e.dataType match {
      case NullType => None
      case StringType if e.foldable => Option(e.eval()).map(_.toString)
      case _ => throw KinesisErrors.invalidOptionValue("schema", "not a constant string",
          s"an Avro schema in JSON, or NULL for the schema 'schemaName' names, as $function's second argument")
    }

    /** `options` with a schema given as an argument, which is the option `schemaDefinition` given another way. */
    def withSchema(options: Map[String, String], schema: Option[String]): Map[String, String] = schema match {
      case None => options
      case Some(s) =>
        options.keys.find(_.equalsIgnoreCase(KinesisOptions.SchemaDefinition.name)).foreach { k =>
          throw KinesisErrors.conflictingOptions(s"The schema is given twice, as an argument and as option '$k'; " +
            "keep one.")
        }
        options + (KinesisOptions.SchemaDefinition.name -> s)
    }
  }
}
