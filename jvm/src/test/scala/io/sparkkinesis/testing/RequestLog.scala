package io.sparkkinesis.testing

import java.net.URI
import java.util.concurrent.ConcurrentLinkedQueue

import io.sparkkinesis.compat.CollectionConverters._

import software.amazon.awssdk.core.interceptor.{
  Context,
  ExecutionAttributes,
  ExecutionInterceptor,
  SdkExecutionAttribute
}
import software.amazon.awssdk.http.SdkHttpRequest

/** One request an SDK client sent: its service, operation, the host the SDK chose, and the key id that signed it. */
final case class LoggedRequest(service: String, operation: String, host: String, signingKeyId: Option[String])

/**
 * An SDK interceptor every client of the test JVM loads (the SDK's global interceptor list,
 * `software/amazon/awssdk/global/handlers/execution.interceptors` among the test resources), inert until a test
 * calls [[RequestLog.recording]]. While recording, it logs each request after the SDK resolved its endpoint and
 * signed it (which host, which access key id: how a test proves which credentials and which endpoint variant a
 * client used, since the local servers check neither), and sends requests for the hosts of `routes` to a local
 * server instead: the host name stays what the SDK chose, only the connection goes elsewhere.
 */
final class RequestLog extends ExecutionInterceptor {
  override def modifyHttpRequest(context: Context.ModifyHttpRequest, attributes: ExecutionAttributes): SdkHttpRequest =
    RequestLog.route(context.httpRequest(), attributes)

  override def beforeTransmission(context: Context.BeforeTransmission, attributes: ExecutionAttributes): Unit =
    RequestLog.log(context.httpRequest(), attributes)
}

object RequestLog {
  private val OriginalHost = new software.amazon.awssdk.core.interceptor.ExecutionAttribute[String]("RequestLog.host")
  private val SignedBy = "Credential=([^/,\\s]+)/".r.unanchored

  @volatile private var routes: Map[String, URI] = Map.empty
  @volatile private var active = false
  private val logged = new ConcurrentLinkedQueue[LoggedRequest]()

  /** Runs `body` with requests for the hosts of `routes` sent to their local URLs; returns what it returned. */
  def recording[T](routes: Map[String, String])(body: => T): T = synchronized {
    logged.clear()
    this.routes = routes.map { case (host, url) => host -> URI.create(url) }
    active = true
    try body
    finally {
      active = false
      this.routes = Map.empty
    }
  }

  /** The requests logged since [[recording]] began. */
  def requests: Seq[LoggedRequest] = logged.iterator().asScala.toList

  private def route(request: SdkHttpRequest, attributes: ExecutionAttributes): SdkHttpRequest =
    if (!active) request
    else {
      attributes.putAttribute(OriginalHost, request.host())
      routes.get(request.host()) match {
        case Some(to) => request.toBuilder.protocol(to.getScheme).host(to.getHost).port(to.getPort).build()
        case None => request
      }
    }

  private def log(request: SdkHttpRequest, attributes: ExecutionAttributes): Unit =
    if (active) {
      val host = Option(attributes.getAttribute(OriginalHost)).getOrElse(request.host())
      val key = Option(request.firstMatchingHeader("Authorization").orElse(null)).collect { case SignedBy(k) => k }
      logged.add(LoggedRequest(attributes.getAttribute(SdkExecutionAttribute.SERVICE_NAME),
          attributes.getAttribute(SdkExecutionAttribute.OPERATION_NAME), host, key))
    }
}
