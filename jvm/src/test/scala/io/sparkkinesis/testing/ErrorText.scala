package io.sparkkinesis.testing

import org.scalatest.Assertions

/** Checks of what an error says: every part is in its message, which the failure shows. */
object ErrorText extends Assertions {
  def assertMentions(error: Throwable, parts: String*): Unit = {
    val message = String.valueOf(error.getMessage)
    assert(parts.forall(message.contains), s"expected ${parts.mkString("'", "', '", "'")} in: $message")
  }
}
