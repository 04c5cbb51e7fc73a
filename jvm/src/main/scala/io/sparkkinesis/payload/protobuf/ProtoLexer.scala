package io.sparkkinesis.payload.protobuf

import scala.collection.mutable

import ProtoSchema._

/** The tokens of `.proto` text, the resolution of type names and the small helpers of [[ProtoParser]]. */
private[protobuf] object ProtoLexer {

  /** A token: its text (a string literal's without the quotes, `string` then set) and its line, from 1. */
  final case class Token(text: String, line: Int, string: Boolean = false)

  /** A message as the parser collects it, field types not yet resolved. */
  final case class RawMessage(fullName: String, fields: mutable.ArrayBuffer[Field], mapEntry: Boolean)

  /** The largest field number protobuf allows, 2^29 - 1. */
  val MaxFieldNumber: Int = (1 << 29) - 1

  def isIdentifier(t: Token): Boolean =
    !t.string && t.text.nonEmpty && (Character.isLetter(t.text.head) || t.text.head == '_' ||
      (t.text.head == '.' && t.text.length > 1))

  /** `name` in `scope` (a package or message full name, or "" for the root). */
  def qualify(scope: String, name: String): String = if (scope.isEmpty) name else s"$scope.$name"

  /** `scope` and the scopes around it, innermost first, down to the root (""). */
  def scopes(scope: String): Seq[String] =
    if (scope.isEmpty) Seq("") else scope.split('.').inits.map(_.mkString(".")).toSeq

  /** The name protoc gives the entry message of map field `field`: `string_attrs` -> `StringAttrsEntry`. */
  def entryName(field: String): String = {
    val b = new StringBuilder
    var upper = true
    field.foreach { c =>
      if (c == '_') upper = true
      else { b.append(if (upper) Character.toUpperCase(c) else c); upper = false }
    }
    b.append("Entry").toString
  }

  def fail(at: Token, message: String): Nothing = fail(at.line, message)

  def fail(line: Int, message: String): Nothing =
    throw new ProtobufConversionException(s"Protobuf schema, line $line: $message")

  /** The tokens of `text`, comments dropped; an unterminated string or comment throws. */
  def tokenize(text: String): IndexedSeq[Token] = {
    val out = mutable.ArrayBuffer.empty[Token]
    var i = 0
    var line = 1
    val n = text.length
    def isWord(c: Char) = Character.isLetterOrDigit(c) || c == '_' || c == '.'
    while (i < n) {
      val c = text.charAt(i)
      if (c == '\n') { line += 1; i += 1 }
      else if (Character.isWhitespace(c) || c == '\uFEFF') i += 1 // a byte order mark too
      else if (text.startsWith("//", i)) { while (i < n && text.charAt(i) != '\n') i += 1 }
      else if (text.startsWith("/*", i)) {
        val end = text.indexOf("*/", i + 2)
        if (end < 0) fail(line, "a /* comment is not closed")
        line += text.substring(i, end).count(_ == '\n')
        i = end + 2
      } else if (c == '"' || c == '\'') {
        val b = new StringBuilder
        var j = i + 1
        while (j < n && text.charAt(j) != c) {
          if (text.charAt(j) == '\n') fail(line, "a string is not closed on its line")
          if (text.charAt(j) == '\\' && j + 1 < n) j += 1
          b.append(text.charAt(j))
          j += 1
        }
        if (j >= n) fail(line, "a string is not closed")
        out += Token(b.toString, line, string = true)
        i = j + 1
      } else if (isWord(c) && (c != '.' || (i + 1 < n && Character.isLetter(text.charAt(i + 1))))) {
        var j = i + 1
        while (j < n && isWord(text.charAt(j))) j += 1
        out += Token(text.substring(i, j), line)
        i = j
      } else { out += Token(c.toString, line); i += 1 }
    }
    out.toIndexedSeq
  }

  /** The type names of a file (package `pkg`), which resolve a field's type as protoc does. */
  final class Names(pkg: String, messages: Set[String], enums: Set[String]) {
    private val packages = pkg.split('.').inits.map(_.mkString(".")).toSet

    /** The type of field `f` of message `scope`, its names resolved (a map's value type too). */
    def resolve(f: Field, scope: String): FieldType = f.fieldType match {
      case Unresolved(name) => lookUp(name, scope, f)
      case MapOf(key, Unresolved(value), entry) => MapOf(key, lookUp(value, scope, f), entry)
      case other => other
    }

    // A relative name's first component is looked for from the innermost scope outwards; where it is found (a
    // type or a package), the whole name must be.
    private def lookUp(name: String, scope: String, f: Field): FieldType = {
      def found(full: String): FieldType =
        if (enums(full)) EnumRef(full)
        else if (messages(full)) MessageRef(full)
        else fail(f.line, s"unknown type '$name' of field '${f.name}' (in scope $scope, found no $full)")
      def known(full: String) = messages(full) || enums(full) || packages(full)
      if (ScalarTypes(name)) Scalar(name)
      else if (name.startsWith(".")) found(name.substring(1))
      else {
        val first = name.takeWhile(_ != '.')
        scopes(scope).find(s => known(qualify(s, first))) match {
          case Some(s) => found(qualify(s, name))
          case None => fail(f.line, s"unknown type '$name' of field '${f.name}' in message $scope")
        }
      }
    }
  }
}
