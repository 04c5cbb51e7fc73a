package io.sparkkinesis.testing

import java.io.File
import java.util.concurrent.ConcurrentLinkedQueue
import java.util.concurrent.atomic.AtomicBoolean

import scala.collection.mutable.ListBuffer
import scala.sys.process.{Process, ProcessLogger}
import scala.util.control.NonFatal

import org.scalatest.{BeforeAndAfterAll, Suite}

/** A local Kinesis server (kinesis-mock or kinesalite) started for tests by the Python harness
  * `tests/harness/local_kinesis.py`, which is the one place that knows how to run them.
  *
  * @param kind        "kinesis-mock" or "kinesalite"
  * @param endpoint    "http://127.0.0.1:PORT": the endpoint URL for Kinesis clients
  * @param pid         the server's process id (the server runs in its own session)
  * @param cborEnabled false for kinesalite: AWS SDK clients must turn CBOR off against it, as it
  *                    corrupts record data sent over CBOR
  */
final case class LocalKinesisServer(kind: String, endpoint: String, pid: Long, cborEnabled: Boolean) {
  private val stopped = new AtomicBoolean(false)

  /** The port of [[endpoint]]. */
  def port: Int = endpoint.substring(endpoint.lastIndexOf(':') + 1).toInt

  /** Stops the server (SIGTERM, then SIGKILL after 10 s). Safe to call more than once. */
  def stop(): Unit =
    if (stopped.compareAndSet(false, true)) {
      LocalKinesisServer.forgetAtShutdown(this)
      LocalKinesisServer.stopPid(pid)
    }
}

object LocalKinesisServer {
  val KinesisMock: String = "kinesis-mock"
  val Kinesalite: String = "kinesalite"
  val Kinds: Seq[String] = Seq(KinesisMock, Kinesalite)

  /** The harness script, relative to the repository root (the working directory of the tests). */
  val HarnessScript: String = "tests/harness/local_kinesis.py"

  // Bounds on the harness CLI: `start` may first run `npm ci` (up to 10 min) and then waits up to
  // 60 s for the server; `stop` waits up to 10 s for SIGTERM and 5 s more after SIGKILL.
  private val StartTimeoutMillis = 15L * 60 * 1000
  private val StopTimeoutMillis = 60L * 1000

  private val shutdownHooks = new java.util.concurrent.ConcurrentHashMap[Long, Thread]()

  /** Starts a server of the given kind on free ports of 127.0.0.1 and waits until it answers. */
  def start(kind: String): LocalKinesisServer = {
    require(Kinds.contains(kind), s"unknown local Kinesis server '$kind': expected one of ${Kinds.mkString(", ")}")
    val workdir = new File(s"target/local-kinesis/$kind-${ProcessHandle.current().pid()}-${System.nanoTime()}")
    val (exitCode, out, err) =
      runHarness(Seq("start", kind, "--workdir", workdir.getPath), StartTimeoutMillis)
    if (exitCode != 0)
      throw new IllegalStateException(
        s"could not start $kind (exit code $exitCode of python $HarnessScript):\n${err.mkString("\n")}")
    val line = out.reverseIterator.map(_.trim).find(_.startsWith("{")).getOrElse(
      throw new IllegalStateException(
        s"$HarnessScript start $kind printed no JSON line; stdout:\n${out.mkString("\n")}\nstderr:\n${err.mkString("\n")}"))
    val server = parse(line)
    stopAtShutdown(server)
    server
  }

  /** Parses the harness's one-line JSON description of a started server. */
  def parse(json: String): LocalKinesisServer = {
    def field(name: String): String =
      JsonFields.get(json, name).getOrElse(throw new IllegalArgumentException(s"no '$name' in $json"))
    LocalKinesisServer(
      kind = field("kind"),
      endpoint = field("endpoint"),
      pid = field("pid").toLong,
      cborEnabled = field("cborEnabled").toBoolean)
  }

  /** Stops a server started by the harness, by its process id. */
  def stopPid(pid: Long): Unit = {
    val (exitCode, _, err) = runHarness(Seq("stop", pid.toString), StopTimeoutMillis)
    if (exitCode != 0)
      throw new IllegalStateException(
        s"could not stop the local Kinesis server with PID $pid (exit code $exitCode):\n${err.mkString("\n")}")
  }

  /** The Python interpreter: $SPARK_KINESIS_PYTHON, else the repository's .venv, else python3. */
  def pythonExecutable: String =
    sys.env.get("SPARK_KINESIS_PYTHON").filter(_.nonEmpty).getOrElse {
      val venvPython = new File(".venv/bin/python")
      if (venvPython.isFile) venvPython.getPath else "python3"
    }

  /** Runs the harness CLI; returns its exit code, stdout lines and stderr lines. stderr is also
    * echoed to this JVM's stderr, so that install and start-up messages show in test output.
    */
  private def runHarness(args: Seq[String], timeoutMillis: Long): (Int, List[String], List[String]) = {
    val script = new File(HarnessScript)
    if (!script.isFile)
      throw new IllegalStateException(
        s"$HarnessScript not found under ${new File(".").getAbsoluteFile.getParent}: " +
          "tests must run with the repository root as working directory")
    val out = ListBuffer.empty[String]
    val err = ListBuffer.empty[String]
    val logger = ProcessLogger(
      (line: String) => { out.synchronized { out += line }; () },
      (line: String) => { err.synchronized { err += line }; System.err.println(line) })
    val command = pythonExecutable +: script.getPath +: args
    val process = Process(command, None, "PYTHONUNBUFFERED" -> "1").run(logger)
    val deadline = System.nanoTime() + timeoutMillis * 1000000L
    while (process.isAlive() && System.nanoTime() < deadline) Thread.sleep(50)
    if (process.isAlive()) {
      process.destroy()
      throw new IllegalStateException(
        s"`${command.mkString(" ")}` did not finish within ${timeoutMillis / 1000} s:\n${err.mkString("\n")}")
    }
    val exitCode = process.exitValue()
    (exitCode, out.synchronized(out.toList), err.synchronized(err.toList))
  }

  // A server whose suite never reaches afterAll (an aborted run) is still stopped when the JVM exits.
  private def stopAtShutdown(server: LocalKinesisServer): Unit = {
    val stopper = new Runnable {
      override def run(): Unit =
        try server.stop()
        catch { case NonFatal(_) => () }
    }
    val hook = new Thread(stopper, s"stop-local-kinesis-${server.pid}")
    shutdownHooks.put(server.pid, hook)
    Runtime.getRuntime.addShutdownHook(hook)
  }

  private[testing] def forgetAtShutdown(server: LocalKinesisServer): Unit = {
    val hook = shutdownHooks.remove(server.pid)
    if (hook != null && hook != Thread.currentThread()) {
      try Runtime.getRuntime.removeShutdownHook(hook)
      catch { case _: IllegalStateException => () } // the JVM is already shutting down
    }
  }

  /** Just enough JSON to read the flat object the harness prints: string, number and boolean values. */
  private object JsonFields {
    def get(json: String, name: String): Option[String] = {
      val key = "\"" + java.util.regex.Pattern.quote(name) + "\"\\s*:\\s*"
      val stringValue = (key + "\"((?:[^\"\\\\]|\\\\.)*)\"").r
      val bareValue = (key + "([^\\s,}\"]+)").r
      stringValue.findFirstMatchIn(json).map(m => unescape(m.group(1)))
        .orElse(bareValue.findFirstMatchIn(json).map(_.group(1)))
    }

    private def unescape(s: String): String = {
      val sb = new StringBuilder(s.length)
      var i = 0
      while (i < s.length) {
        val c = s.charAt(i)
        if (c == '\\' && i + 1 < s.length) {
          s.charAt(i + 1) match {
            case 'n' => sb += '\n'
            case 't' => sb += '\t'
            case 'r' => sb += '\r'
            case 'b' => sb += '\b'
            case 'f' => sb += '\f'
            case 'u' if i + 5 < s.length =>
              sb += Integer.parseInt(s.substring(i + 2, i + 6), 16).toChar
              i += 4
            case other => sb += other // \" \\ \/
          }
          i += 2
        } else {
          sb += c
          i += 1
        }
      }
      sb.toString
    }
  }
}

/** Mix into a suite to get local Kinesis servers, each started on first use and stopped after all
  * tests of the suite.
  *
  * {{{
  * class MySuite extends AnyFunSuite with LocalKinesisServers {
  *   test("reads") { val endpoint = kinesisMock.endpoint; ... }
  * }
  * }}}
  */
trait LocalKinesisServers extends BeforeAndAfterAll { this: Suite =>
  private val startedLocalKinesisServers = new ConcurrentLinkedQueue[LocalKinesisServer]()

  private def started(server: LocalKinesisServer): LocalKinesisServer = {
    startedLocalKinesisServers.add(server)
    server
  }

  /** kinesis-mock: the default test backend (resharding, EFO, StreamARN, ...). */
  lazy val kinesisMock: LocalKinesisServer = started(LocalKinesisServer.start(LocalKinesisServer.KinesisMock))

  /** kinesalite: the cross-check backend. Turn CBOR off in clients (see `cborEnabled`). */
  lazy val kinesalite: LocalKinesisServer = started(LocalKinesisServer.start(LocalKinesisServer.Kinesalite))

  /** The server of the given kind ("kinesis-mock" or "kinesalite"). */
  def localKinesis(kind: String): LocalKinesisServer = kind match {
    case LocalKinesisServer.KinesisMock => kinesisMock
    case LocalKinesisServer.Kinesalite => kinesalite
    case other => throw new IllegalArgumentException(s"unknown local Kinesis server '$other'")
  }

  override protected def afterAll(): Unit =
    try super.afterAll()
    finally stopLocalKinesisServers()

  private def stopLocalKinesisServers(): Unit = {
    var failure: Throwable = null
    var server = startedLocalKinesisServers.poll()
    while (server != null) {
      try server.stop()
      catch { case NonFatal(e) => if (failure == null) failure = e else failure.addSuppressed(e) }
      server = startedLocalKinesisServers.poll()
    }
    if (failure != null) throw failure
  }
}
