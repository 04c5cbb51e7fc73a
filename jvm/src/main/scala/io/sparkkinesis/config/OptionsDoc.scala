package io.sparkkinesis.config

import java.nio.charset.StandardCharsets
import java.nio.file.{Files, Paths}

/**
 * Generates `docs/options.md` from the registry. `make docs` runs [[OptionsDoc.main]]; a test fails when the
 * checked-in file differs from what the registry generates.
 */
object OptionsDoc {

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
    sb.result()
  }

  def main(args: Array[String]): Unit = {
    val target = Paths.get(args.headOption.getOrElse("docs/options.md"))
    Files.write(target, markdown.getBytes(StandardCharsets.UTF_8))
    println(s"wrote $target")
  }
}
