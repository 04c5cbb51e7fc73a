package io.sparkkinesis.aws

import java.nio.charset.StandardCharsets.UTF_8
import java.nio.file.{Files, Paths}

import scala.util.control.NonFatal

import software.amazon.awssdk.core.exception.SdkClientException

import io.sparkkinesis.config.OptionSpec

/**
 * The one reading of a token file the credential options name (`webIdentityTokenFile`,
 * `containerAuthorizationTokenFile`): read whole at every use, since Kubernetes and EKS Pod Identity rotate them,
 * and trimmed. A failure names the option and the kind of error, never the file's content.
 */
private[aws] object TokenFile {

  /** The token in `file`, the value of `option`; `what` names the token in errors ("web identity token"). */
  def read(file: String, what: String, option: OptionSpec[String]): String =
    try new String(Files.readAllBytes(Paths.get(file)), UTF_8).trim
    catch {
      case NonFatal(e) =>
        throw SdkClientException.create(
          s"Cannot read the $what file (option '${option.name}'): ${e.getClass.getSimpleName}")
    }
}
