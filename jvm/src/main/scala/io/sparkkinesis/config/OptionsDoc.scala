package io.sparkkinesis.config

import java.nio.charset.StandardCharsets
import java.nio.file.{Files, Paths}

/**
 * Generates `docs/options.md` and the Python constants and checks (`python/spark_kinesis/options.py`) from the
 * registry and the stream patterns of [[StreamNamePatterns]].
 * `make docs` runs [[OptionsDoc.main]]; a test fails when a checked-in file differs from what the registry
 * generates.
 */
private[sparkkinesis] object OptionsDoc {

  def markdown: String = {
    val sb = new StringBuilder
    sb ++= "# Options\n\n"
    sb ++= "<!-- Generated from io.sparkkinesis.config.KinesisOptions by `make docs`; do not edit by hand. -->\n\n"
    sb ++= "Option names are case-insensitive. An unknown option, or one that belongs to the other side " +
      "(a sink option on a read), fails when the query is defined, with a suggestion for near misses.\n"
    KinesisOptions.all.groupBy(_.group).toSeq.sortBy { case (g, specs) => KinesisOptions.all.indexOf(specs.head) }
      .foreach { case (group, specs) =>
        sb ++= s"\n## $group\n\n| Option | Applies to | Type | Default | Since | Description |\n|---|---|---|---|---|---|\n"
        specs.foreach { s =>
          val kind = s.kind match {
            case OptionKind.Choice(values) => values.map(v => s"`$v`").mkString(" \\| ")
            case k => k.typeName
          }
          val default = if (s.defaultText.startsWith("(")) s.defaultText else s"`${s.defaultText}`"
          val secret = if (s.secret) " Secret: never shown in logs, plans or errors." else ""
          sb ++= s"| `${s.name}` | ${s.scope.label} | $kind | $default | ${s.since} | ${s.doc.replace("|", "\\|")}$secret |\n"
        }
      }
    sb ++= foreignMarkdown
    sb.result()
  }

  /** The section on other connectors' names ([[ForeignOptions]]) and the defaults of a dialect. */
  private def foreignMarkdown: String = {
    val sb = new StringBuilder
    sb ++= "\n## Other connectors' names\n\n"
    sb ++= "Programs written for another Kinesis connector run with their option names: under `format(\"kinesis\")` " +
      "those of Databricks' source and of qubole kinesis-sql, under `format(\"aws-kinesis\")` the awslabs " +
      "connector's `kinesis.*` names (this connector's own names work under both). Each is read as one of this " +
      "connector's options, or has no effect here (the driver's log says why, once), or is refused with what to use " +
      "instead. [migrating.md](migrating.md) has a guide per program.\n\n"
    sb ++= "| Name | Connector | Format | Applies to | Here |\n|---|---|---|---|---|\n"
    ForeignOptions.all.foreach { f =>
      val here = f.handling match {
        case ForeignOption.Alias(target, note, _) =>
          s"`${target.name}`" + (if (note.isEmpty) "" else s": $note")
        case ForeignOption.Ignored(why) => s"no effect: $why"
        case ForeignOption.Refused(instead) => s"refused: $instead"
      }
      sb ++= s"| `${f.name}` | ${f.origin} | `${f.dialect.format}` | ${f.scope.label} | ${here.replace("|", "\\|")} |\n"
    }
    ForeignOptions.ignoredPrefixes.foreach { case (d, prefix, why) =>
      sb ++= s"| `$prefix*` | awslabs | `${d.format}` | source and sink | no effect: $why |\n"
    }
    sb ++= "\nDefaults that differ by format:\n\n"
    KinesisOptions.dialectDefaults.toSeq.sortBy(_._1.format).foreach { case (d, defaults) =>
      defaults.toSeq.sorted.foreach { case (key, value) =>
        val spec = KinesisOptions.all.find(_.key == key).get
        sb ++= s"- under `${d.format}`, `${spec.name}` defaults to `$value` (`${spec.defaultText}` under `kinesis`)\n"
      }
    }
    sb.result()
  }

  /** Options the Python helpers take as named arguments, typed there by a `Literal` of their choices. */
  private val pythonLiterals: Seq[OptionSpec[_]] = Seq(KinesisOptions.InitialPosition)

  /** The name of the `Literal` type of a choice option's values in Python: `initialPosition` -> `InitialPositionValue`. */
  def pythonLiteralName(s: OptionSpec[_]): String = s.name.capitalize + "Value"

  /**
   * The Python module with one constant per option and what Python validates keyword arguments with: each
   * option's type, scope, default, range and description (what the connector tells the user to give), the
   * `Literal` types of the choices the helpers take as arguments, and the patterns of a stream name and ARN.
   */
  def python: String = {
    def constant(name: String): String = name.replaceAll("([a-z0-9])([A-Z])", "$1_$2").toUpperCase
    def str(v: String): String = "\"" + v.replace("\\", "\\\\").replace("\"", "\\\"") + "\""
    def tuple(values: Seq[String]): String = values.map(str).mkString("(", ", ", if (values.size == 1) ",)" else ")")
    def info(s: OptionSpec[_]): String = {
      val (choices, min, max) = s.kind match {
        case OptionKind.Choice(values) => (tuple(values), "None", "None")
        case OptionKind.Integer(lo, hi) => ("()", lo.toString, hi.toString)
        case OptionKind.LongNumber(lo, hi) => ("()", lo.toString, hi.toString)
        case _ => ("()", "None", "None")
      }
      val default = s.default.map(d => str(s.kind.asInstanceOf[OptionKind[Any]].render(d))).getOrElse("None")
      s"    ${str(s.name)}: OptionInfo(\n        ${str(s.name)}, ${str(s.kind.typeName)}, ${str(s.scope.toString.toLowerCase)}, " +
        s"$default, $choices, $min, $max, ${if (s.secret) "True" else "False"},\n        ${str(s.kind.describe)}),\n"
    }
    val literals = pythonLiterals.map { s =>
      val values = s.kind match {
        case OptionKind.Choice(vs) => vs
        case other => throw new IllegalStateException(s"${s.name} is ${other.typeName}, not a choice")
      }
      (pythonLiteralName(s),
        s"${pythonLiteralName(s)}: TypeAlias = Literal[${values.map(str).mkString(", ")}]\n" +
          "\"\"\"" + s"The values of the ``${s.name}`` option (matched case-insensitively at run time)." + "\"\"\"\n")
    }
    val sb = new StringBuilder
    sb ++= "# Generated from io.sparkkinesis.config.KinesisOptions by `make docs`; do not edit by hand.\n"
    sb ++= "\"\"\"Every option of the connector: a constant per name, and what Python checks before the JVM is touched.\n\n"
    sb ++= "Example::\n\n    from spark_kinesis import KinesisOptions, kinesis_stream\n\n"
    sb ++= "    df = kinesis_stream(spark, \"orders\", **{KinesisOptions.MAX_RECORDS_PER_TRIGGER: 10000})\n\"\"\"\n\n"
    sb ++= "from __future__ import annotations\n\nfrom typing import Dict, Final, Literal, Optional, TypeAlias\n\n"
    sb ++= "from spark_kinesis._option_info import OptionInfo\n\n"
    sb ++= (Seq("KinesisOptions", "OPTIONS", "FOREIGN_OPTIONS") ++ literals.map(_._1)).map(str).mkString("__all__ = [",
      ", ", "]\n\n")
    literals.foreach { case (_, text) => sb ++= "\n" ++= text }
    sb ++= "\n# What each stream in `streamName` must match in full: a name or a stream ARN (io.sparkkinesis.config.StreamNamePatterns).\n"
    sb ++= s"STREAM_NAME_PATTERN: Final = ${str(StreamNamePatterns.Name)}\n"
    sb ++= s"STREAM_ARN_PATTERN: Final = ${str(StreamNamePatterns.Arn)}\n\n\n"
    sb ++= "class KinesisOptions:\n    \"\"\"Option names, as the connector spells them (option names are case-insensitive).\"\"\"\n\n"
    KinesisOptions.all.foreach(s => sb ++= s"    ${constant(s.name)}: Final = ${str(s.name)}\n")
    sb ++= "\n\n# name, type, scope, default, choices, minimum, maximum, secret, and what a value must be.\n"
    sb ++= "OPTIONS: Dict[str, OptionInfo] = {\n"
    KinesisOptions.all.foreach(s => sb ++= info(s))
    sb ++= "}\n"
    sb ++= "\n# Other connectors' names taken under format(\"kinesis\") (io.sparkkinesis.config.ForeignOptions), each with the\n"
    sb ++= "# option it sets here, or None when it has no effect or is refused: passed on for the connector to judge.\n"
    sb ++= "FOREIGN_OPTIONS: Dict[str, Optional[str]] = {\n"
    ForeignOptions.all.filter(f => f.dialect == Dialect.Kinesis && !KinesisOptions.all.exists(_.key == f.key))
      .foreach { f =>
        val target = f.handling match {
          case ForeignOption.Alias(t, _, _) => str(t.name)
          case _ => "None"
        }
        sb ++= s"    ${str(f.name)}: $target,\n"
      }
    sb ++= "}\n"
    sb.result()
  }

  def main(args: Array[String]): Unit = {
    val docs = Paths.get(args.headOption.getOrElse("docs/options.md"))
    Files.write(docs, markdown.getBytes(StandardCharsets.UTF_8))
    val py = Paths.get(args.drop(1).headOption.getOrElse("python/spark_kinesis/options.py"))
    Files.write(py, python.getBytes(StandardCharsets.UTF_8))
    println(s"wrote $docs and $py")
  }
}
