import java.io.File
import java.nio.charset.StandardCharsets
import java.security.MessageDigest
import java.util.zip.ZipFile

import scala.collection.JavaConverters._

import sbt._

/**
 * The third-party components an assembly bundles, and the files that say so inside the jar (docs/releasing.md):
 * `META-INF/NOTICE` (each component with its version and license, then the attribution notices the components'
 * own NOTICE files carry), `META-INF/LICENSE` (the project's license) and
 * `META-INF/spark-kinesis/bundled-components.tsv` (the same list, machine-readable: what `bin/sbom` turns into
 * a CycloneDX SBOM and `tests/test_release.py` holds the repository's NOTICE against).
 *
 * The list is every jar on the runtime classpath that the assembly does not exclude (Spark and Scala are provided),
 * read from the update report with the licenses its POMs declare.
 */
object Bundled {

  final case class Component(
      group: String,
      name: String,
      version: String,
      license: String, // an SPDX identifier, or NOASSERTION when the POM's license is not one we recognise
      licenseName: String,
      licenseUrl: String,
      homepage: String,
      sha256: String,
      notices: Seq[String],
      embeddedIn: String = "") {
    def coordinate: String = s"$group:$name"
  }

  /** License names as POMs spell them, to SPDX identifiers. Unknown names become NOASSERTION (the test fails). */
  def spdx(name: String, url: String): String = {
    val n = name.toLowerCase.replaceAll("[^a-z0-9.]+", " ").trim
    val u = url.toLowerCase
    if (n.contains("apache") && n.contains("2.0") || u.contains("apache.org/licenses/license-2.0") ||
        u.contains("aws.amazon.com/apache2.0")) "Apache-2.0"
    else if (n == "mit 0" || n.contains("mit no attribution") || u.contains("spdx.org/licenses/mit-0")) "MIT-0"
    else if (n == "mit" || n == "mit license" || n == "the mit license") "MIT"
    else if (n.contains("bsd") && n.contains("3")) "BSD-3-Clause"
    else if (n.contains("bsd") && n.contains("2")) "BSD-2-Clause"
    else "NOASSERTION"
  }

  def components(jars: Seq[File], report: UpdateReport): Seq[Component] = {
    val modules = report.configurations.flatMap(_.modules).flatMap(m => m.artifacts.map(_._2 -> m)).toMap
    jars.flatMap { jar =>
      modules.get(jar).map { m =>
        val (licenseName, licenseUrl) = m.licenses.headOption.map { case (n, u) => (n, u.getOrElse("")) }
          .getOrElse(("", ""))
        val direct = Component(m.module.organization, m.module.name, m.module.revision,
          spdx(licenseName, licenseUrl), licenseName, licenseUrl, m.homepage.getOrElse(""), sha256(jar),
          notices(jar))
        direct +: embedded(jar, direct)
      }.getOrElse(Nil)
    }.distinct.sortBy(c => (c.group, c.name, c.version, c.embeddedIn))
  }

  private def topLevelMetaInf(zip: ZipFile): List[java.util.zip.ZipEntry] =
    zip.entries().asScala.toList.filter { e =>
      val parts = e.getName.split('/')
      !e.isDirectory && parts.length == 2 && parts(0) == "META-INF"
    }.sortBy(_.getName)

  private def read(zip: ZipFile, e: java.util.zip.ZipEntry): String =
    IO.readStream(zip.getInputStream(e), StandardCharsets.UTF_8).replace("\r\n", "\n").trim

  /**
   * Components a bundled jar itself carries inside: those it names with Maven metadata of another artifact
   * (netty-common's copy of JCTools), and those it carries a `META-INF/<name>-LICENSE` file for (the AWS SDK's
   * Jackson carries FastDoubleParser and Schubfach), with the license told from the file's text.
   */
  private def embedded(jar: File, carrier: Component): Seq[Component] = {
    val zip = new ZipFile(jar)
    try {
      val carriedIn = s"${carrier.coordinate} ${carrier.version}"
      val fromMaven = zip.entries().asScala.toList.map(_.getName).sorted.collect {
        case n @ MavenProperties(g, a) if s"$g:$a" != carrier.coordinate =>
          val props = new java.util.Properties()
          props.load(zip.getInputStream(zip.getEntry(n)))
          val pom = Option(zip.getEntry(n.stripSuffix("pom.properties") + "pom.xml")).map(read(zip, _)).getOrElse("")
          val (name, url) = PomLicense.findFirstMatchIn(pom).map(m => (m.group(1).trim, m.group(2).trim))
            .getOrElse((carrier.licenseName, carrier.licenseUrl))
          Component(g, a, props.getProperty("version", carrier.version), spdx(name, url), name, url, "", "", Nil,
            carriedIn)
      }
      val fromLicenses = topLevelMetaInf(zip).collect {
        case e if e.getName.endsWith("-LICENSE") && !e.getName.contains("ThirdParty") =>
          val what = e.getName.stripPrefix("META-INF/").stripSuffix("-LICENSE")
          val text = read(zip, e)
          Component("", what, s"as bundled in $carriedIn", spdxOfText(text), "", "", "", "", Nil, carriedIn)
      }
      fromMaven ++ fromLicenses
    } finally zip.close()
  }

  private val MavenProperties = "META-INF/maven/([^/]+)/([^/]+)/pom.properties".r
  private val PomLicense = "(?s)<license>\\s*<name>([^<]*)</name>\\s*<url>([^<]*)</url>".r

  /** A license told from its text, for license files that name no identifier. */
  def spdxOfText(text: String): String = {
    val t = text.replaceAll("\\s+", " ")
    if (t.contains("Apache License") && t.contains("Version 2.0")) "Apache-2.0"
    else if (t.contains("Permission is hereby granted, free of charge") &&
             t.contains("The above copyright notice and this permission notice shall be included")) "MIT"
    else if (t.contains("Permission is hereby granted, free of charge")) "MIT-0"
    else if (t.contains("Redistribution and use in source and binary forms") && t.contains("Neither the name"))
      "BSD-3-Clause"
    else if (t.contains("Redistribution and use in source and binary forms")) "BSD-2-Clause"
    else "NOASSERTION"
  }

  private def sha256(f: File): String =
    MessageDigest.getInstance("SHA-256").digest(IO.readBytes(f)).map("%02x".format(_)).mkString

  /** The texts of a jar's top-level META-INF/NOTICE* files. */
  private def notices(jar: File): Seq[String] = {
    val zip = new ZipFile(jar)
    try topLevelMetaInf(zip).filter(_.getName.toUpperCase.startsWith("META-INF/NOTICE")).map(read(zip, _))
      .filter(_.nonEmpty)
    finally zip.close()
  }

  def notice(components: Seq[Component]): String = {
    val sb = new StringBuilder
    sb ++= "spark-kinesis\n"
    sb ++= "Copyright the spark-kinesis contributors.\n\n"
    sb ++= "This product is licensed under the Apache License, Version 2.0 (the LICENSE file next to this one).\n\n"
    sb ++= "Its jars (spark-kinesis-<spark line>_<scala>-<version>.jar, also inside the spark-kinesis Python wheel)\n"
    sb ++= "bundle the third-party components below, relocated under io.sparkkinesis.shaded. Their own license\n"
    sb ++= "and notice files are kept in the jars under META-INF/third-party/<group>/<artifact>/.\n\n"
    sb ++= "Bundled components (group:artifact version, license):\n\n"
    components.filter(_.embeddedIn.isEmpty).foreach { c =>
      val url = if (c.licenseUrl.nonEmpty) s" <${c.licenseUrl}>" else ""
      sb ++= s"  ${c.coordinate} ${c.version}, ${c.license}$url\n"
    }
    val inside = components.filter(_.embeddedIn.nonEmpty)
    if (inside.nonEmpty) {
      sb ++= "\nComponents that bundled components carry inside them:\n\n"
      inside.foreach { c =>
        val name = if (c.group.isEmpty) c.name else s"${c.coordinate} ${c.version}"
        sb ++= s"  $name, ${c.license}, inside ${c.embeddedIn}\n"
      }
    }
    val byText = components.flatMap(c => c.notices.map(_ -> c)).groupBy(_._1).toSeq
      .map { case (text, cs) => text -> cs.map(_._2.coordinate).distinct.sorted }
      .sortBy { case (_, cs) => cs.head }
    if (byText.nonEmpty) {
      sb ++= "\nNotices of the bundled components, as their NOTICE files state them:\n"
      byText.foreach { case (text, cs) =>
        val who = if (cs.size == 1) cs.head else s"${cs.head} and ${cs.size - 1} other components"
        sb ++= s"\n---- $who ----\n\n$text\n"
      }
    }
    sb.toString
  }

  private val TsvHeader = "# group\tartifact\tversion\tlicense (SPDX)\tlicense name\tlicense url\thomepage" +
    "\tsha256 of the bundled jar\tinside (for a component a bundled jar carries)\n"

  def tsv(components: Seq[Component]): String =
    TsvHeader + components.map(c => Seq(c.group, c.name, c.version, c.license, c.licenseName, c.licenseUrl,
      c.homepage, c.sha256, c.embeddedIn).map(_.replaceAll("[\t\n]", " ")).mkString("\t") + "\n").mkString
}
