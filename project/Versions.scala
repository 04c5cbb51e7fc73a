/** Every pinned version of the build, in one place. */
object Versions {
  /**
   * The AWS SDK for Java 2.x release whose BOM (`software.amazon.awssdk:bom`) pins every SDK module the connector
   * bundles. sbt 1.11's resolver cannot import a BOM, so build.sbt takes every SDK module at this version and its
   * `update` fails if any resolved `software.amazon.awssdk` module is at another one, which is what importing the
   * BOM would guarantee.
   */
  val awsSdk = "2.57.8"
  /** networknt's JSON Schema validator: the tests' reference for what the JSON Schema encoder accepts. */
  val jsonSchemaValidator = "3.0.9"
  val scalatest = "3.2.19"
  /** Square's Wire: `com.squareup.wire:wire-schema-jvm` and `wire-runtime-jvm` read `.proto` text. */
  val wire = "6.4.7"
}

/**
 * One artifact of the cross-build: a Spark line and a Scala version. The sources are one tree (`jvm/src`); a line
 * adds its own small folder (`jvm/src/main/spark-<line>/scala`) where Spark's APIs differ, and a Scala binary
 * version its own (`jvm/src/main/scala-<binary>`) where the standard library differs.
 *
 * @param line        the Spark line in the artifact's name (`spark-kinesis-<line>_<scala binary>`)
 * @param spark       the Spark release compiled against (and whose jars the Scala suites run on)
 * @param scala       the Scala release; equals the scala-library that release of Spark ships
 * @param javaRelease the class-file level: the oldest Java the Spark line runs on
 * @param fromPySpark compile against the jars of the PySpark distribution in the project's virtual environment
 *                    (the Spark the Python suites run), instead of Spark's artifacts from Maven Central
 * @param supports    the Spark minor versions this artifact is tested on (the compatibility table)
 * @param crossSuites  the suites with a Spark session or a local server (tagged `io.sparkkinesis.testing.Integration`)
 *                    that `make test` runs for this artifact besides every unit suite: those that reach the code of its
 *                    version folders and read and write through its Spark. None: every suite. `make test-full`
 *                    (SPARK_KINESIS_ALL_SUITES=1) runs every suite on every artifact.
 * @param unitSuites  whether `make test` runs the unit suites (untagged) for this artifact too: not where another
 *                    artifact already runs them on the same code (`make test-full` always does)
 * @param notInMakeTest suites `make test` leaves out for this artifact because another run there does the same
 *                    (`make test-full` runs them): PackagedJarSuite for the jars the Python suites load
 * @param newerFolders folders of code for newer Spark minor versions of the line (`jvm/src/main/<folder>/scala`),
 *                    compiled against `spark` and loaded only where the running Spark has what they need:
 *                    `spark-4.1+` holds real-time mode, which Spark 4.0 lacks
 */
final case class SparkBuild(
    line: String,
    spark: String,
    scala: String,
    javaRelease: Int,
    fromPySpark: Boolean,
    supports: Seq[String],
    crossSuites: Option[Seq[String]] = None,
    unitSuites: Boolean = true,
    notInMakeTest: Seq[String] = Nil,
    newerFolders: Seq[String] = Nil) {
  def scalaBinary: String = scala.split('.').take(2).mkString(".")
  def artifact: String = s"spark-kinesis-${line}_$scalaBinary"
  /** The sbt project's id: `spark4`, `spark35_212`, ... */
  def id: String = s"spark${line.replace(".", "").replace("x", "")}_${scalaBinary.replace(".", "")}"
}

object SparkBuilds {
  /** The default: the newest PySpark on PyPI, which the whole suite runs on; serves Spark 4.0 to 4.3. */
  val spark4 = SparkBuild("4.x", "4.3.0", "2.13.18", 17, fromPySpark = true, Seq("4.0", "4.1", "4.2", "4.3"),
    notInMakeTest = Seq("PackagedJarSuite"), newerFolders = Seq("spark-4.1+"))
  /**
   * What the Spark 3.5/Scala 2.12 artifact runs in `make test` besides the unit suites: a batch and a streaming read
   * and a write through Spark 3.5 (the round trip and the streaming source suite), and the sink's task metrics, set by
   * the 3.5 version folder's `compat/BulkDataWriter`. Everything else is the same code on the same servers as the
   * Spark 4 run, which runs every suite; its jar reads and writes through Spark 3.5 in the compat tests on PySpark
   * 3.5.9; `make test-full` runs every suite here too.
   */
  val spark35CrossSuites = Some(Seq("KinesisRoundTripSuite", "KinesisSinkSparkSuite", "KinesisStreamingSourceSuite",
    "ReadKinesisSuite", "KinesisCatalogSuite"))
  /** Spark 3.5 as PyPI and EMR 7 / Glue 5 ship it. */
  val spark35Scala212 =
    SparkBuild("3.5", "3.5.9", "2.12.18", 11, fromPySpark = false, Seq("3.5"), crossSuites = spark35CrossSuites)
  /**
   * Spark 3.5 built for Scala 2.13 (Spark's own 2.13 distribution, Databricks' 2.13 runtimes). Its code is the Spark 4
   * artifact's Scala 2.13 folder with the 3.5 artifact's version folder, each of them tested there: `make test` runs
   * its jar through its Spark (PackagedJarSuite) and no other suite; `make test-full` runs them all.
   */
  val spark35Scala213 = SparkBuild("3.5", "3.5.9", "2.13.8", 11, fromPySpark = false, Seq("3.5"),
    crossSuites = Some(Seq("PackagedJarSuite")), unitSuites = false)

  val all: Seq[SparkBuild] = Seq(spark4, spark35Scala212, spark35Scala213)
}
