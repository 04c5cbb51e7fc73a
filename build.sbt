// spark-kinesis: a Spark DataSource V2 source and sink for Amazon Kinesis Data Streams.
// See docs/design.md ("Build") for why the build looks the way it does.
import sbtassembly.AssemblyPlugin.autoImport._

val shadePrefix = "io.sparkkinesis.shaded"

ThisBuild / version := IO.read(file("VERSION")).trim
ThisBuild / organization := "io.sparkkinesis"
ThisBuild / scalaVersion := Versions.scala
ThisBuild / scalacOptions ++= Seq("-release", "17", "-deprecation", "-feature", "-unchecked", "-Xlint:-unused,_")
ThisBuild / javacOptions ++= Seq("--release", "17")

// Spark is `provided`: its classes come from the PySpark distribution installed by the Makefile
// (SPARK_JARS_DIR=<site-packages>/pyspark/jars), which is the exact Spark we test and ship for.
lazy val sparkJarsDir = settingKey[File]("The jars/ folder of the PySpark distribution the build compiles against")
lazy val sparkJars = taskKey[Seq[File]]("Spark's own jars (provided scope: never assembled)")

lazy val root = (project in file("."))
  .aggregate(connector)
  .settings(
    publish / skip := true,
    assembly / aggregate := false
  )

lazy val connector = (project in file("jvm"))
  .settings(
    name := "spark-kinesis",
    sparkJarsDir := file(sys.env.getOrElse("SPARK_JARS_DIR",
      sys.error("SPARK_JARS_DIR is not set: run the build through `make jar` (it installs PySpark and sets it)"))),
    sparkJars := {
      val dir = sparkJarsDir.value
      val jars = (dir * "*.jar").get
      val expected = s"spark-sql_2.13-${Versions.spark}.jar"
      if (!jars.exists(_.getName == expected))
        sys.error(s"$dir does not hold $expected: install pyspark==${Versions.spark} (make venv)")
      jars
    },
    Compile / unmanagedJars ++= sparkJars.value.map(Attributed.blank),
    libraryDependencies ++= Seq(
      "software.amazon.awssdk" % "kinesis" % Versions.awsSdk,
      "software.amazon.awssdk" % "sts" % Versions.awsSdk,
      "software.amazon.awssdk" % "netty-nio-client" % Versions.awsSdk,
      "software.amazon.awssdk" % "url-connection-client" % Versions.awsSdk,
      "org.scalatest" %% "scalatest" % Versions.scalatest % Test
    ).map(_.excludeAll(
      // Spark provides logging; the SDK only needs the API at compile time.
      ExclusionRule("org.slf4j"),
      // Synchronous calls use the small url-connection client; the Apache client would add httpclient5.
      ExclusionRule("software.amazon.awssdk", "apache-client"),
      ExclusionRule("software.amazon.awssdk", "apache5-client")
    )),
    Compile / resourceGenerators += Def.task {
      val out = (Compile / resourceManaged).value / "spark-kinesis-version.properties"
      IO.write(out, s"version=${version.value}\nsparkVersion=${Versions.spark}\nscalaVersion=${Versions.scala}\n")
      Seq(out)
    }.taskValue,

    Test / fork := true,
    Test / parallelExecution := false,
    Test / baseDirectory := (ThisBuild / baseDirectory).value,
    Test / javaOptions ++= Seq("-Xmx3g", "-XX:+IgnoreUnrecognizedVMOptions") ++ Java17Opens.flags,
    Test / envVars := Map("SPARK_LOCAL_IP" -> "127.0.0.1", "AWS_EC2_METADATA_DISABLED" -> "true"),
    Test / testOptions += Tests.Argument(TestFrameworks.ScalaTest, "-oDFT"),
    // The logging guard's suite changes the JVM's log4j set-up and needs one untouched by Spark sessions and other
    // suites' clients: it runs in a JVM of its own, the other suites share one.
    Test / testGrouping := {
      val fork = ForkOptions()
        .withRunJVMOptions((Test / javaOptions).value.toVector)
        .withEnvVars((Test / envVars).value)
        .withWorkingDirectory((Test / baseDirectory).value)
      val (alone, shared) = (Test / definedTests).value.partition(_.name.endsWith("SignerLogGuardSuite"))
      Seq(Tests.Group("logging", alone, Tests.SubProcess(fork)), Tests.Group("suites", shared, Tests.SubProcess(fork)))
        .filter(_.tests.nonEmpty)
    },

    // ---- assembly: our classes + relocated AWS SDK, Netty, Jackson, reactive-streams ----
    assembly / assemblyJarName := s"spark-kinesis_2.13-${version.value}.jar",
    // Its own folder: `package` writes a thin jar of the same name to target/scala-2.13/.
    assembly / assemblyOutputPath := target.value / "assembly" / (assembly / assemblyJarName).value,
    assemblyPackageScala / assembleArtifact := false,
    assembly / test := {},
    assembly / assemblyExcludedJars := {
      val provided = sparkJars.value.toSet
      (assembly / fullClasspath).value.filter(a => provided.contains(a.data) || a.data.getName.startsWith("scala-"))
    },
    // Everything the assembly bundles besides our own classes. The SDK's Jackson already lives under
    // software.amazon.awssdk.thirdparty, so it moves with the SDK. tests/test_packaging.py checks the result.
    assembly / assemblyShadeRules := Seq(
      "software.amazon.awssdk.**", "software.amazon.eventstream.**", "io.netty.**", "org.reactivestreams.**"
    ).map(p => ShadeRule.rename(p -> s"$shadePrefix.@0").inAll),
    assembly / assemblyMergeStrategy := AssemblyMerge.strategy(shadePrefix)
  )
