// spark-kinesis: a Spark DataSource V2 source and sink for Amazon Kinesis Data Streams.
// See docs/design.md ("Build") for why the build looks the way it does.
import sbtassembly.AssemblyPlugin.autoImport._

val shadePrefix = "io.sparkkinesis.shaded"

ThisBuild / version := IO.read(file("VERSION")).trim
ThisBuild / organization := "io.sparkkinesis"
ThisBuild / scalaVersion := SparkBuilds.spark4.scala
// The forked test JVMs of every artifact run side by side, up to TestGroups.jvms (sbt's default is one at a time).
Global / concurrentRestrictions := Seq(
  Tags.limitAll(math.max(EvaluateTask.SystemProcessors, TestGroups.jvms)),
  Tags.limit(Tags.ForkedTestGroup, TestGroups.jvms),
  Tags.exclusiveGroup(Tags.Clean))

// Spark comes `provided`. The default artifact compiles against the jars of the PySpark distribution installed by
// the Makefile (SPARK_JARS_DIR=<site-packages>/pyspark/jars), the exact Spark the Python suites run; the Spark 3.5
// artifacts take Spark's own artifacts from Maven Central.
lazy val sparkJarsDir = settingKey[File]("The jars/ folder of the PySpark distribution the build compiles against")
lazy val sparkJars = taskKey[Seq[File]]("Spark's own jars from the PySpark distribution (provided: never assembled)")

lazy val root = (project in file("."))
  .aggregate(connector, connector35_212, connector35_213)
  .settings(
    publish / skip := true,
    assembly / aggregate := false
  )

/** Scala's own jars: the Spark that runs the connector provides them, so no jar bundles them. */
def providedByScala(jar: File): Boolean = jar.getName.startsWith("scala-")

/** The project's LICENSE and NOTICE, for the META-INF of the javadoc jar (the sources jar has the resources). */
def licenseFiles(base: File): Seq[(File, String)] =
  Seq(base / "LICENSE" -> "META-INF/LICENSE", base / "NOTICE" -> "META-INF/NOTICE")

/** The default artifact, Spark 4.x: the one `make jar`, the wheel's default and the whole test suite use. */
lazy val connector = connectorProject(project in file("jvm"), SparkBuilds.spark4)

/** Spark 3.5 artifacts: the same sources (jvm/src), built in folders of their own under jvm/cross/. */
lazy val connector35_212 = connectorProject(project in file("jvm/cross/spark-3.5_2.12"), SparkBuilds.spark35Scala212)
lazy val connector35_213 = connectorProject(project in file("jvm/cross/spark-3.5_2.13"), SparkBuilds.spark35Scala213)

def connectorProject(p: Project, b: SparkBuild): Project = p.settings(
  name := s"spark-kinesis-${b.line}",
  scalaVersion := b.scala,
  scalacOptions ++= Seq("-release", b.javaRelease.toString, "-deprecation", "-feature", "-unchecked", "-Xlint:-unused,_"),
  // The connector's own code compiles without a warning on every artifact, and stays so: a warning fails the build.
  Compile / compile / scalacOptions += "-Xfatal-warnings",
  // Scala 2.13.8 (Spark 3.5's) writes Java 8 class files unless told the target as well. Scala 2.12 cannot write
  // newer ones at all: its class files are Java 8's, limited to Java 11's API by -release (docs/deploying.md).
  scalacOptions ++= (if (b.scala.startsWith("2.13.8")) Seq(s"-target:${b.javaRelease}") else Nil),
  javacOptions ++= Seq("--release", b.javaRelease.toString),
  // One source tree for every artifact, plus the small folders of this Spark line and Scala version.
  sourceDirectory := (ThisBuild / baseDirectory).value / "jvm" / "src",
  Compile / unmanagedSourceDirectories ++= Seq(
    sourceDirectory.value / "main" / s"spark-${b.line}" / "scala",
    sourceDirectory.value / "main" / s"scala-${b.scalaBinary}") ++
    b.newerFolders.map(f => sourceDirectory.value / "main" / f / "scala"),
  Test / unmanagedSourceDirectories ++= Seq(
    sourceDirectory.value / "test" / s"spark-${b.line}" / "scala") ++
    b.newerFolders.map(f => sourceDirectory.value / "test" / f / "scala"),
  sparkJarsDir := file(sys.env.getOrElse("SPARK_JARS_DIR", "")),
  sparkJars := {
    if (!b.fromPySpark) Nil
    else {
      val dir = sparkJarsDir.value
      if (dir.getPath.isEmpty)
        sys.error("SPARK_JARS_DIR is not set: run the build through `make jar` (it installs PySpark and sets it)")
      val jars = (dir * "*.jar").get
      val expected = s"spark-sql_${b.scalaBinary}-${b.spark}.jar"
      if (!jars.exists(_.getName == expected))
        sys.error(s"$dir does not hold $expected: install pyspark==${b.spark} (make venv)")
      jars
    }
  },
  Compile / unmanagedJars ++= sparkJars.value.map(Attributed.blank),
  libraryDependencies ++= (if (b.fromPySpark) Nil else Seq("org.apache.spark" %% "spark-sql" % b.spark % Provided)),
  libraryDependencies ++= Seq(
    "software.amazon.awssdk" % "kinesis" % Versions.awsSdk,
    "software.amazon.awssdk" % "sts" % Versions.awsSdk,
    // PutMetricData of the CloudWatch publisher (metrics/CloudWatchSender); Glue stays a signed POST (aws/SignedPost).
    "software.amazon.awssdk" % "cloudwatch" % Versions.awsSdk,
    // DynamoDbStreamsClient of format("dynamodb-streams") (aws/DynamoDbStreams, fetching/StreamsShardCalls).
    "software.amazon.awssdk" % "dynamodb" % Versions.awsSdk,
    "software.amazon.awssdk" % "netty-nio-client" % Versions.awsSdk,
    "software.amazon.awssdk" % "url-connection-client" % Versions.awsSdk,
    // `.proto` text (payload/protobuf/ProtoFiles): the parser and linker AWS's own Glue Schema Registry serde uses.
    ("com.squareup.wire" % "wire-schema-jvm" % Versions.wire).excludeAll(
      // Only Wire's code-generation profiles and its pruner reference these (jdeps); parsing and linking do not.
      ExclusionRule("com.google.guava"), ExclusionRule("com.palantir.javapoet"), ExclusionRule("com.squareup",
        "kotlinpoet-jvm"), ExclusionRule("org.jetbrains.kotlin", "kotlin-reflect")),
    "com.squareup.wire" % "wire-runtime-jvm" % Versions.wire,
    "org.scalatest" %% "scalatest" % Versions.scalatest % Test
  ).map(_.excludeAll(
    // Spark provides logging; the SDK only needs the API at compile time.
    ExclusionRule("org.slf4j"),
    // Synchronous calls use the small url-connection client; the Apache client would add httpclient5.
    ExclusionRule("software.amazon.awssdk", "apache-client"),
    ExclusionRule("software.amazon.awssdk", "apache5-client")
  )),
  // The reference JSON Schema validator, for the tests only: it needs Jackson 3 and Java 17, which the jars cannot
  // bundle within their budget (docs/schema-registry.md, "Decisions"). Scala 2.13.8 (Spark 3.5's) cannot read its
  // class files, so that artifact leaves out the suite that uses it (JsonSchemaReferenceSuite), which the others run
  // on the same encoder code.
  libraryDependencies ++= (if (b.scala.startsWith("2.13.8")) Nil
                           else Seq(("com.networknt" % "json-schema-validator" % Versions.jsonSchemaValidator % Test)
                             .excludeAll(ExclusionRule("org.slf4j")))),
  Test / unmanagedSources / excludeFilter := {
    val base = (Test / unmanagedSources / excludeFilter).value
    if (b.scala.startsWith("2.13.8")) base || "JsonSchemaReferenceSuite.scala" else base
  },
  // Every AWS SDK module at the one release of its BOM (project/Versions.scala): none pulled in at another version.
  update := {
    val report = update.value
    val other = report.allModules.filter(m => m.organization == "software.amazon.awssdk" && m.revision != Versions.awsSdk)
    if (other.nonEmpty)
      sys.error(s"AWS SDK modules not at the BOM's version ${Versions.awsSdk}: " +
        other.map(m => s"${m.name} ${m.revision}").distinct.mkString(", "))
    report
  },
  Compile / resourceGenerators += Def.task {
    val out = (Compile / resourceManaged).value / "spark-kinesis-version.properties"
    IO.write(out,
      s"""version=${version.value}
         |artifact=${b.artifact}
         |sparkLine=${b.line}
         |sparkVersion=${b.spark}
         |sparkVersions=${b.supports.mkString(",")}
         |scalaVersion=${b.scala}
         |javaRelease=${b.javaRelease}
         |""".stripMargin)
    Seq(out)
  }.taskValue,
  // The license, the notices of the bundled components and their list, in every jar (project/Bundled.scala).
  Compile / resourceGenerators += Def.task {
    val base = (ThisBuild / baseDirectory).value
    val provided = sparkJars.value.toSet
    val bundled = (Runtime / externalDependencyClasspath).value.map(_.data)
      .filter(f => !provided.contains(f) && !providedByScala(f))
    val components = Bundled.components(bundled, update.value)
    val dir = (Compile / resourceManaged).value / "META-INF"
    val files = Seq(
      dir / "LICENSE" -> IO.read(base / "LICENSE"),
      dir / "NOTICE" -> Bundled.notice(components),
      dir / "spark-kinesis" / "bundled-components.tsv" -> Bundled.tsv(components))
    files.foreach { case (f, text) => if (!f.exists || IO.read(f) != text) IO.write(f, text) }
    files.map(_._1)
  }.taskValue,
  // The -sources and -javadoc (Scaladoc) jars Maven Central asks for, next to the assembly (bin/publish-local);
  // the sources jar carries the resources, LICENSE and NOTICE among them.
  Compile / packageSrc / artifactPath := (ThisBuild / baseDirectory).value / "jvm" / "target" / "assembly" /
    s"${b.artifact}-${version.value}-sources.jar",
  Compile / packageDoc / artifactPath := (ThisBuild / baseDirectory).value / "jvm" / "target" / "assembly" /
    s"${b.artifact}-${version.value}-javadoc.jar",
  Compile / packageDoc / mappings ++= licenseFiles((ThisBuild / baseDirectory).value),
  Compile / doc / scalacOptions ++= Seq("-doc-title", s"spark-kinesis ${version.value} (${b.artifact})"),

  Test / fork := true,
  // Test groups (below) run side by side, each in a JVM of its own, up to `Global / concurrentRestrictions`.
  Test / parallelExecution := true,
  Test / baseDirectory := (ThisBuild / baseDirectory).value,
  Test / javaOptions ++= Seq("-Xmx3g", "-XX:+IgnoreUnrecognizedVMOptions") ++ Java17Opens.flags,
  // PackagedJarSuite runs the assembly jar on a class path of Spark alone (the Spark of this artifact: PySpark's jars
  // for 4.x, the `provided` Spark of Maven Central for 3.5, with its Scala) and one class of the tests.
  Test / javaOptions ++= {
    val fromPySpark = sparkJars.value
    val provided = update.value.select(configurationFilter(Provided.name)).distinct
    val spark = if (b.fromPySpark) fromPySpark else provided
    Seq(
      s"-Dspark-kinesis.test.assemblyJar=${(assembly / assemblyOutputPath).value}",
      s"-Dspark-kinesis.test.sparkClasspath=${spark.mkString(java.io.File.pathSeparator)}",
      s"-Dspark-kinesis.test.mainClasses=${(Test / classDirectory).value}")
  },
  Test / envVars := Map("SPARK_LOCAL_IP" -> "127.0.0.1", "AWS_EC2_METADATA_DISABLED" -> "true"),
  Test / testOptions += Tests.Argument(TestFrameworks.ScalaTest, "-oDFT"),
  // Which suites `make test` runs for an artifact (SPARK_KINESIS_ALL_SUITES=1, `make test-full`: every suite): with
  // `crossSuites`, those and, unless `unitSuites` is false, the unit suites; never those in `notInMakeTest`, which
  // another run of `make test` covers. A suite is an integration suite when its source says `@Integration`
  // (docs/testing.md).
  Test / testOptions ++= (if (sys.env.contains("SPARK_KINESIS_ALL_SUITES")) Nil
  else {
    val tests = (sourceDirectory.value / "test") ** "*Suite.scala"
    lazy val integration = tests.get.filter(f => IO.read(f).contains("\n@Integration")).map(_.base).toSet
    Seq(Tests.Filter(name => {
      val simple = name.substring(name.lastIndexOf('.') + 1)
      !b.notInMakeTest.contains(simple) &&
        b.crossSuites.forall(cross => cross.contains(simple) || (b.unitSuites && !integration.contains(simple)))
    }))
  }),
  // A test tagged FullOnly (testing/FullOnly: the 10,000-shard query under the service's limits) runs in
  // `make test-full` (SPARK_KINESIS_ALL_SUITES=1) only.
  Test / testOptions ++= (if (sys.env.contains("SPARK_KINESIS_ALL_SUITES")) Nil
                          else Seq(Tests.Argument(TestFrameworks.ScalaTest, "-l", "io.sparkkinesis.testing.FullOnly"))),
  // Each group of suites shares a forked JVM; the groups run side by side (TestGroups.scala says which and why).
  Test / testGrouping := {
    val fork = ForkOptions()
      .withRunJVMOptions((Test / javaOptions).value.toVector)
      .withEnvVars((Test / envVars).value)
      .withWorkingDirectory((Test / baseDirectory).value)
    TestGroups.of((Test / definedTests).value).map { case (name, tests) =>
      Tests.Group(name, tests, Tests.SubProcess(fork))
    }
  },

  // ---- assembly: our classes + relocated AWS SDK, Netty, Jackson, reactive-streams ----
  assembly / assemblyJarName := s"${b.artifact}-${version.value}.jar",
  // The assembly jars of every artifact sit side by side in jvm/target/assembly/ (the wheel carries them all).
  assembly / assemblyOutputPath :=
    (ThisBuild / baseDirectory).value / "jvm" / "target" / "assembly" / (assembly / assemblyJarName).value,
  assemblyPackageScala / assembleArtifact := false,
  assembly / test := {},
  assembly / assemblyExcludedJars := {
    val provided = sparkJars.value.toSet
    (assembly / fullClasspath).value.filter(a => provided.contains(a.data) || providedByScala(a.data))
  },
  // Everything the assembly bundles besides our own classes. The SDK's Jackson already lives under
  // software.amazon.awssdk.thirdparty, so it moves with the SDK. tests/test_packaging.py checks the result.
  assembly / assemblyShadeRules := Seq(
    "software.amazon.awssdk.**", "software.amazon.eventstream.**", "io.netty.**", "org.reactivestreams.**",
    // Wire (payload/protobuf/ProtoFiles), with the Kotlin standard library and Okio it runs on.
    "com.squareup.**", "kotlin.**", "okio.**", "org.jetbrains.annotations.**", "org.intellij.lang.annotations.**"
  ).map(p => ShadeRule.rename(p -> s"$shadePrefix.@0").inAll),
  assembly / assemblyMergeStrategy := AssemblyMerge.strategy(shadePrefix),
  // Of the SDK's dynamodb module, only what the DynamoDB Streams client and our classes reach (project/
  // DynamoDbStreamsCut.scala): the whole module would take each jar past its 20 MB budget (docs/dynamodb-streams.md).
  assembly := {
    val jar = assembly.value
    val (dropped, before, after) = DynamoDbStreamsCut(jar, shadePrefix)
    streams.value.log.info(s"${jar.getName}: $dropped classes of DynamoDB's own client left out, $before -> $after bytes")
    jar
  }
)
