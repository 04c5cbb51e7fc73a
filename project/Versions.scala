/** Every pinned version of the build, in one place. */
object Versions {
  /** Spark the connector is built and tested for: the newest PySpark on PyPI. */
  val spark = "4.3.0"
  /** Must equal the scala-library jar shipped inside that PySpark distribution. */
  val scala = "2.13.18"
  val awsSdk = "2.52.0"
  val scalatest = "3.2.19"
}
