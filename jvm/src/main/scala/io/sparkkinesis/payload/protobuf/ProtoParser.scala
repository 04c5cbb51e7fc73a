package io.sparkkinesis.payload.protobuf

import scala.collection.mutable

import ProtoSchema._

/**
 * Reads `.proto` text into a [[ProtoSchema]]: a tokenizer (identifiers, numbers, strings, symbols; `//` and
 * `/* */` comments dropped) and a recursive descent over the statements the schemas of the Glue Schema Registry
 * use. Field types are resolved once the whole file is read, as protoc resolves them: a relative name is looked
 * up from the innermost scope outwards (by its first component, which must then lead to the rest), `.a.b.C` is
 * fully qualified. One parser per text; [[parse]] once.
 */
private[protobuf] final class ProtoParser(text: String) {
  import ProtoLexer._

  private val tokens: IndexedSeq[Token] = tokenize(text)
  private var pos = 0
  private var syntax = "proto2"
  private var pkg = ""
  private val messages = mutable.ArrayBuffer.empty[RawMessage]
  private val enums = mutable.ArrayBuffer.empty[Enum]

  /** The schema of the text; throws [[ProtobufConversionException]] naming the line on what it cannot read. */
  def parse(): ProtoSchema = {
    while (pos < tokens.length) {
      val t = next()
      t.text match {
        case "syntax" =>
          expect("="); syntax = stringLiteral(); expect(";")
          if (syntax != "proto2" && syntax != "proto3") fail(t, s"syntax '$syntax' is not supported (proto2, proto3)")
        case "edition" => fail(t, "Protobuf editions are not supported (proto2, proto3)")
        case "package" => pkg = identifier("a package name"); expect(";")
        case "import" =>
          fail(t,
            "'import' is not supported: the Glue Schema Registry's Protobuf schemas are one self-contained " +
              ".proto file")
        case "option" => skipStatement()
        case "message" => message(pkg)
        case "enum" => enumeration(pkg)
        case "service" => identifier("a service name"); skipBlock()
        case "extend" => fail(t, "'extend' (extensions) is not supported")
        case ";" =>
        case other => fail(t, s"unexpected '$other' at the top level of the file")
      }
    }
    val names = new Names(pkg, messages.map(_.fullName).toSet, enums.map(_.fullName).toSet)
    val resolved = messages.map { m =>
      Message(m.fullName, m.fields.map(f => f.copy(fieldType = names.resolve(f, m.fullName))).toIndexedSeq,
        m.mapEntry)
    }
    ProtoSchema(syntax, pkg, resolved.sortBy(_.fullName).toIndexedSeq, enums.toIndexedSeq)
  }

  private def message(scope: String): Unit = {
    val start = tokens(pos - 1)
    val m = RawMessage(qualify(scope, identifier("a message name")), mutable.ArrayBuffer.empty, mapEntry = false)
    declare(m.fullName, start)
    messages += m
    expect("{")
    while (!sees("}")) memberOf(m, oneof = null)
    expect("}")
    // Each field's name and number once (oneof members are fields of the message).
    m.fields.groupBy(_.number).collectFirst {
      case (n, fs) if fs.size > 1 =>
        fail(fs(1).line, s"field number $n is used twice in message ${m.fullName} (${fs.map(_.name).mkString(", ")})")
    }
    m.fields.groupBy(_.name).collectFirst {
      case (n, fs) if fs.size > 1 =>
        fail(fs(1).line, s"field '$n' is declared twice in message ${m.fullName}")
    }
  }

  /** One statement of a message's body (or of a oneof's, when `oneof` is its name). */
  private def memberOf(m: RawMessage, oneof: String): Unit = {
    val t = next()
    t.text match {
      case "message" if oneof == null => message(m.fullName)
      case "enum" if oneof == null => enumeration(m.fullName)
      case "oneof" if oneof == null =>
        val name = identifier("a oneof name")
        expect("{")
        while (!sees("}")) memberOf(m, name)
        expect("}")
      case "option" | "reserved" | "extensions" => skipStatement()
      case "extend" => fail(t, s"'extend' (extensions) in message ${m.fullName} is not supported")
      case ";" =>
      case "map" if sees("<") => mapField(m, oneof, t)
      case "optional" | "required" | "repeated" if oneof == null =>
        if (t.text == "required" && syntax == "proto3") fail(t, s"'required' in a proto3 message ${m.fullName}")
        val label = t.text match { case "optional" => Optional; case "required" => Required; case _ => Repeated }
        if (tokens.lift(pos).exists(_.text == "map")) mapField(m, oneof, next())
        else field(m, label, oneof, identifier("a field type"))
      case name if isIdentifier(t) =>
        if (oneof == null && syntax == "proto2")
          fail(t,
            s"field of type '$name' in message ${m.fullName} has no label (proto2 fields are optional, " +
              "required or repeated)")
        field(m, if (oneof == null) Implicit else Optional, oneof, name)
      case other => fail(t, s"unexpected '$other' in message ${m.fullName}")
    }
  }

  private def field(m: RawMessage, label: Label, oneof: String, typeName: String): Unit = {
    val nameToken = tokens.lift(pos)
    if (typeName == "group") fail(tokens(pos - 1), s"groups (in message ${m.fullName}) are not supported")
    val name = identifier(s"the name of a field of type $typeName in message ${m.fullName}")
    expect("=")
    val number = fieldNumber(s"field '$name' of message ${m.fullName}")
    val packed = options(s"field '$name' of message ${m.fullName}")
    expect(";")
    m.fields += Field(name, number, label, Unresolved(typeName), oneof, packed, nameToken.get.line)
  }

  /** `map<K, V> name = n;` and the entry message protoc makes of it, `<Name>Entry`, nested in `m`. */
  private def mapField(m: RawMessage, oneof: String, at: Token): Unit = {
    if (oneof != null) fail(at, s"a map field in oneof $oneof of message ${m.fullName}")
    expect("<")
    val key = identifier("a map key type")
    if (!ScalarTypes(key) || Set("double", "float", "bytes")(key))
      fail(at, s"'$key' cannot be a map key (in message ${m.fullName})")
    expect(",")
    val value = identifier("a map value type")
    expect(">")
    val name = identifier(s"the name of a map field in message ${m.fullName}")
    expect("=")
    val number = fieldNumber(s"field '$name' of message ${m.fullName}")
    options(s"field '$name' of message ${m.fullName}")
    expect(";")
    val entry = qualify(m.fullName, entryName(name))
    declare(entry, at)
    messages += RawMessage(entry,
      mutable.ArrayBuffer(Field("key", 1, Optional, Scalar(key), null, None, at.line),
        Field("value", 2, Optional, Unresolved(value), null, None, at.line)), mapEntry = true)
    m.fields += Field(name, number, Repeated, MapOf(Scalar(key), Unresolved(value), entry), null, None, at.line)
  }

  private def enumeration(scope: String): Unit = {
    val start = tokens(pos - 1)
    val fullName = qualify(scope, identifier("an enum name"))
    declare(fullName, start)
    val values = mutable.ArrayBuffer.empty[(String, Int)]
    expect("{")
    while (!sees("}")) {
      val t = next()
      t.text match {
        case "option" | "reserved" => skipStatement()
        case ";" =>
        case name if isIdentifier(t) =>
          expect("=")
          val negative = accept("-").isDefined
          val n = number(s"value $name of enum $fullName")
          options(s"value $name of enum $fullName")
          expect(";")
          values += name -> (if (negative) -n.toInt else n.toInt)
        case other => fail(t, s"unexpected '$other' in enum $fullName")
      }
    }
    expect("}")
    if (values.isEmpty) fail(start, s"enum $fullName has no value")
    enums += Enum(fullName, values.toIndexedSeq)
  }

  /** `[name = value, ...]` if there: the value of `packed`, if set; other options are read past. */
  private def options(what: String): Option[Boolean] = {
    var packed: Option[Boolean] = None
    if (accept("[").isDefined) {
      do {
        val name = until(Set("=")).map(_.text).mkString
        expect("=")
        val value = until(Set(",", "]"))
        if (name == "packed") value.map(_.text) match {
          case Seq("true") => packed = Some(true)
          case Seq("false") => packed = Some(false)
          case other => fail(value.headOption.getOrElse(tokens(pos)), s"packed = ${other.mkString} on $what")
        }
      } while (accept(",").isDefined)
      expect("]")
    }
    packed
  }

  private def declare(fullName: String, at: Token): Unit =
    if (messages.exists(_.fullName == fullName) || enums.exists(_.fullName == fullName))
      fail(at, s"$fullName is declared twice")

  private def next(): Token = {
    if (pos >= tokens.length) fail(tokens.lastOption.map(_.line).getOrElse(1), "unexpected end of the file")
    pos += 1
    tokens(pos - 1)
  }

  /** Whether the next token is `text` (not consumed). */
  private def sees(text: String): Boolean = pos < tokens.length && tokens(pos).text == text && !tokens(pos).string

  /** The next token if it is `text` (then consumed). */
  private def accept(text: String): Option[Token] =
    if (pos < tokens.length && tokens(pos).text == text) { pos += 1; Some(tokens(pos - 1)) }
    else None

  private def expect(text: String): Unit = {
    val t = next()
    if (t.text != text) fail(t, s"expected '$text', found '${t.text}'")
  }

  private def identifier(what: String): String = {
    val t = next()
    if (!isIdentifier(t)) fail(t, s"expected $what, found '${t.text}'")
    t.text
  }

  private def stringLiteral(): String = {
    val t = next()
    if (!t.string) fail(t, s"expected a string, found '${t.text}'")
    t.text
  }

  private def number(what: String): Long = {
    val t = next()
    val n =
      try {
        if (t.text.startsWith("0x") || t.text.startsWith("0X")) java.lang.Long.parseLong(t.text.substring(2), 16)
        else if (t.text.length > 1 && t.text.startsWith("0")) java.lang.Long.parseLong(t.text.substring(1), 8)
        else java.lang.Long.parseLong(t.text)
      } catch { case _: NumberFormatException => fail(t, s"expected the number of $what, found '${t.text}'") }
    if (t.string || n > Int.MaxValue) fail(t, s"the number of $what is not an int32: ${t.text}")
    n
  }

  private def fieldNumber(what: String): Int = {
    val n = number(what)
    if (n < 1 || n > MaxFieldNumber || (n >= 19000 && n <= 19999))
      fail(tokens(pos - 1), s"$n is not a valid number for $what")
    n.toInt
  }

  /** The tokens up to (not including) one of `ends` outside brackets. */
  private def until(ends: Set[String]): Seq[Token] = {
    val taken = mutable.ArrayBuffer.empty[Token]
    var depth = 0
    while (pos < tokens.length && !(depth == 0 && !tokens(pos).string && ends(tokens(pos).text))) {
      val t = next()
      if (!t.string && Set("{", "(", "[")(t.text)) depth += 1
      if (!t.string && Set("}", ")", "]")(t.text)) depth -= 1
      taken += t
    }
    taken.toSeq
  }

  private def skipStatement(): Unit = { until(Set(";")); expect(";") }

  private def skipBlock(): Unit = { until(Set("{")); expect("{"); until(Set("}")); expect("}") }
}
