import sbt._

/**
 * How `test` spreads an artifact's suites over forked JVMs. Each group's suites run one after another in one JVM;
 * the groups (of every artifact `test` runs at once) run side by side, up to `jvms` JVMs. Most integration suites
 * spend their time waiting on the local servers (kinesis-mock delivers a fan-out event a second or two after the put,
 * resharding waits on the server's state changes), so on 2 cores three JVMs finish far sooner than one.
 *  - "logging": the signer log guard's suite changes the JVM's log4j set-up and needs a JVM untouched by Spark
 *    sessions and other suites' clients;
 *  - "reshards": the resharding matrix, real-time mode and fan-out suites, the longest and mostly waiting;
 *  - "suites": the others.
 * Suites never share state across JVMs: each starts its own local servers on free ports and uses its own streams.
 */
object TestGroups {
  private val alone = Set("SignerLogGuardSuite")
  private val waiting = Set("ReshardMatrixSuite", "RealTimeModeSuite", "RealTimeSlotsSuite", "FanOutSourceSuite")

  /** How many forked test JVMs run at once: SPARK_KINESIS_TEST_JVMS, 3 unless set. */
  val jvms: Int = sys.env.get("SPARK_KINESIS_TEST_JVMS").map(_.trim.toInt).getOrElse(3)

  def of(tests: Seq[TestDefinition]): Seq[(String, Seq[TestDefinition])] = {
    def simple(t: TestDefinition) = t.name.substring(t.name.lastIndexOf('.') + 1)
    val (logging, rest) = tests.partition(t => alone(simple(t)))
    val (reshards, suites) = rest.partition(t => waiting(simple(t)))
    Seq("logging" -> logging, "reshards" -> reshards, "suites" -> suites).filter(_._2.nonEmpty)
  }
}
