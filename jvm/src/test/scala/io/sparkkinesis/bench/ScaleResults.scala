package io.sparkkinesis.bench

import java.io.File
import java.nio.charset.StandardCharsets
import java.nio.file.Files

/**
 * [[ScaleBench]]'s results of one server: `<dir>/<server>.json` (the commit, and a row per run) and
 * `<dir>/<server>.csv`, both rewritten after every run so that a long benchmark cut short keeps what it measured.
 */
final class ScaleResults(dir: File, server: String, commit: String) {
  private var rows = Vector.empty[Seq[(String, Any)]]

  val jsonFile = new File(dir, s"$server.json")
  val csvFile = new File(dir, s"$server.csv")

  def add(row: Seq[(String, Any)]): Unit = {
    rows :+= row
    dir.mkdirs()
    val runs = rows.map(r => r.map { case (k, v) => s"${quote(k)}: ${value(v)}" }.mkString("    {", ", ", "}"))
    val json = Seq(s"${quote("server")}: ${quote(server)}", s"${quote("commit")}: ${quote(commit)}",
      runs.mkString(s"${quote("runs")}: [\n", ",\n", "\n  ]")).mkString("{\n  ", ",\n  ", "\n}\n")
    Files.write(jsonFile.toPath, json.getBytes(StandardCharsets.UTF_8))
    val columns = rows.flatMap(_.map(_._1)).distinct
    val csv = (columns.mkString(",") +: rows.map { r =>
      val m = r.toMap
      columns.map(c => m.get(c).map(v => csvCell(v.toString)).getOrElse("")).mkString(",")
    }).mkString("", "\n", "\n")
    Files.write(csvFile.toPath, csv.getBytes(StandardCharsets.UTF_8))
  }

  private def value(v: Any): String = v match {
    case d: Double if d.isNaN || d.isInfinite => "null"
    case n @ (_: Int | _: Long | _: Double) => n.toString
    case other => quote(other.toString)
  }

  private def quote(s: String): String =
    "\"" + s.flatMap {
      case '"' => "\\\""
      case '\\' => "\\\\"
      case c if c < ' ' => f"\\u${c.toInt}%04x"
      case c => c.toString
    } + "\""

  private def csvCell(s: String): String =
    if (s.exists(",\"\n".contains(_))) "\"" + s.replace("\"", "\"\"") + "\"" else s
}
