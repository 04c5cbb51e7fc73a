package io.sparkkinesis.config

import java.util.Locale

import io.sparkkinesis.errors.KinesisErrors

/**
 * The options of one query, checked against the registry: every key must be known and meant for `scope`.
 * Typed values are read with [[get]] / [[required]], which fail with errors naming the option.
 */
private[sparkkinesis] final class ParsedOptions private (raw: Map[String, String], val scope: Scope)
  extends Serializable {

  def contains(spec: OptionSpec[_]): Boolean = raw.contains(spec.key)

  def get[T](spec: OptionSpec[T]): Option[T] = raw.get(spec.key).map(OptionKind.parseOrFail(spec, _))

  def getOrDefault[T](spec: OptionSpec[T]): T =
    get(spec).orElse(spec.default).getOrElse(throw new IllegalStateException(s"option ${spec.name} has no default"))

  def required[T](spec: OptionSpec[T], example: String): T =
    get(spec).getOrElse(throw KinesisErrors.missingOption(spec.name, example))
}

private[sparkkinesis] object ParsedOptions {

  def apply(options: java.util.Map[String, String], scope: Scope): ParsedOptions = {
    import io.sparkkinesis.compat.CollectionConverters._
    // Keep the user's own spelling of each key for error messages.
    val asGiven = options match {
      case m: org.apache.spark.sql.util.CaseInsensitiveStringMap => m.asCaseSensitiveMap()
      case m => m
    }
    apply(asGiven.asScala.toMap, scope)
  }

  def apply(options: Map[String, String], scope: Scope): ParsedOptions = {
    val lowered = options.map { case (k, v) => k.toLowerCase(Locale.ROOT) -> v }
    val byKey: Map[String, OptionSpec[_]] = KinesisOptions.all.map(s => s.key -> s).toMap
    // Report the unknown keys in the user's own spelling, in a stable order.
    options.keys.toSeq.sorted.foreach { name =>
      val key = name.toLowerCase(Locale.ROOT)
      byKey.get(key) match {
        case None if !KinesisOptions.sparkOwnedKeys.contains(key) =>
          throw KinesisErrors.unknownOption(name, suggestions(key, scope), scope.label)
        case Some(spec) if !spec.scope.overlaps(scope) =>
          throw KinesisErrors.optionNotForScope(spec.name, spec.scope.label, scope.label)
        case _ =>
      }
    }
    new ParsedOptions(lowered, scope)
  }

  /** Registry names close to `key` (edit distance at most 3, or one contains the other). */
  private[config] def suggestions(key: String, scope: Scope): Seq[String] = {
    val candidates = KinesisOptions.all.filter(_.scope.overlaps(scope))
    candidates
      .map(s => s.name -> editDistance(key, s.key))
      .filter { case (name, d) =>
        d <= math.max(2, key.length / 4) || (key.length >= 4 && name.toLowerCase(Locale.ROOT).contains(key))
      }
      .sortBy { case (name, d) => (d, name) }
      .take(3)
      .map(_._1)
  }

  private def editDistance(a: String, b: String): Int = {
    val prev = Array.tabulate(b.length + 1)(identity)
    for (i <- 1 to a.length) {
      var diag = prev(0)
      prev(0) = i
      for (j <- 1 to b.length) {
        val up = prev(j)
        prev(j) = math.min(math.min(prev(j) + 1, prev(j - 1) + 1), diag + (if (a(i - 1) == b(j - 1)) 0 else 1))
        diag = up
      }
    }
    prev(b.length)
  }
}
