package io.sparkkinesis.packaging

import java.io.File
import java.lang.management.ManagementFactory
import java.nio.file.Files
import java.util.concurrent.TimeUnit

import scala.io.Source

import org.scalatest.funsuite.AnyFunSuite

import io.sparkkinesis.compat.CollectionConverters._
import io.sparkkinesis.testing.{Integration, LocalKinesisServers}
import io.sparkkinesis.testing.TestStreams._

/**
 * The artifact's shipped jar, not its classes: a JVM whose class path is Spark (the build's, for this artifact's
 * Spark line and Scala version) and the assembly jar runs `PackagedJarMain`, which writes and reads a stream through
 * Spark. It is how the Spark 3.5/Scala 2.13 jar, which no PySpark on PyPI can load, reads and writes through Spark in
 * `make test`; the other two jars do it in the Python suites, so `make test` runs this suite for that jar alone and
 * `make test-full` for all three (project/Versions.scala). The build passes the jar's path and Spark's
 * class path (build.sbt, `Test / javaOptions`); the jar must have been built (`make test` builds it first).
 */
@Integration
class PackagedJarSuite extends AnyFunSuite with LocalKinesisServers {

  private def property(name: String): String =
    Option(System.getProperty(s"spark-kinesis.test.$name")).getOrElse(fail(s"the build did not set $name"))

  test("the assembly jar writes and reads a stream through Spark, alone on a class path with Spark") {
    val jar = new File(property("assemblyJar"))
    assert(jar.isFile, s"$jar is missing: build the jars first (make jar; make test does)")
    val stream = freshStream(kinesalite, "packaged-jar", 2)
    val classpath = (property("sparkClasspath").split(File.pathSeparator).toSeq :+ jar.getPath :+
      property("mainClasses")).mkString(File.pathSeparator)
    val jvmFlags = ManagementFactory.getRuntimeMXBean.getInputArguments.asScala.filter(_.startsWith("--add-"))
    val command = Seq(new File(System.getProperty("java.home"), "bin/java").getPath, "-Xmx1g") ++ jvmFlags ++
      Seq("-cp", classpath, "io.sparkkinesis.packaging.PackagedJarMain", kinesalite.endpoint, stream,
        kinesalite.cborEnabled.toString, "300")
    val log = Files.createTempFile("packaged-jar", ".log").toFile
    val process = new ProcessBuilder(command: _*).redirectErrorStream(true).redirectOutput(log).start()
    val ended = process.waitFor(240, TimeUnit.SECONDS)
    if (!ended) process.destroyForcibly()
    val output = {
      val s = Source.fromFile(log);
      try s.getLines().toList
      finally s.close()
    }
    assert(ended && process.exitValue() == 0,
      s"the packaged-jar application failed:\n${output.takeRight(60).mkString("\n")}")
    val line = output.find(_.startsWith("packaged jar:")).getOrElse(fail(output.takeRight(60).mkString("\n")))
    info(line)
    assert(line.contains(s"provider from ${jar.toURI.toURL}"), line)
    assert(line.contains("written 300, batch read 300 (all: true), streaming read 300 (all: true)"), line)
  }
}
