package io.sparkkinesis.config

import java.util.Locale
import java.util.concurrent.ConcurrentHashMap

import org.apache.spark.internal.Logging

import io.sparkkinesis.errors.KinesisErrors

/**
 * The options of one query, checked against the registry: every key must be known and meant for `scope`; other
 * connectors' names accepted under `dialect` are read as this connector's ([[OptionNormalizer]]). Typed values are
 * read with [[get]] / [[required]], which fail with errors naming the option as the user wrote it.
 */
private[sparkkinesis] final class ParsedOptions private (
    raw: Map[String, String],
    val scope: Scope,
    val dialect: Dialect,
    givenAs: Map[String, String],
    val warnings: Seq[String]) extends Serializable {

  def contains(spec: OptionSpec[_]): Boolean = raw.contains(spec.key)

  def get[T](spec: OptionSpec[T]): Option[T] =
    raw.get(spec.key).map(OptionKind.parseOrFail(spec, _, givenAs.getOrElse(spec.key, spec.name)))

  /** The value, else the default of this dialect ([[KinesisOptions.dialectDefaults]]), else the registry's. */
  def getOrDefault[T](spec: OptionSpec[T]): T =
    get(spec)
      .orElse(KinesisOptions.dialectDefaults.get(dialect).flatMap(_.get(spec.key)).map(OptionKind.parseOrFail(spec, _)))
      .orElse(spec.default).getOrElse(throw new IllegalStateException(s"option ${spec.name} has no default"))

  def required[T](spec: OptionSpec[T], example: String): T =
    get(spec).getOrElse(throw KinesisErrors.missingOption(spec.name, example))
}

private[sparkkinesis] object ParsedOptions extends Logging {

  def apply(options: java.util.Map[String, String], scope: Scope): ParsedOptions =
    apply(options, scope, Dialect.Kinesis)

  def apply(options: java.util.Map[String, String], scope: Scope, dialect: Dialect): ParsedOptions = {
    import io.sparkkinesis.compat.CollectionConverters._
    // Keep the user's own spelling of each key for error messages.
    val asGiven = options match {
      case m: org.apache.spark.sql.util.CaseInsensitiveStringMap => m.asCaseSensitiveMap()
      case m => m
    }
    apply(asGiven.asScala.toMap, scope, dialect)
  }

  def apply(options: Map[String, String], scope: Scope): ParsedOptions = apply(options, scope, Dialect.Kinesis)

  def apply(options: Map[String, String], scope: Scope, dialect: Dialect): ParsedOptions = {
    val normalized = OptionNormalizer(TableOptions.unwrap(options), scope, dialect)
    val byKey: Map[String, OptionSpec[_]] = KinesisOptions.all.map(s => s.key -> s).toMap
    // Report the unknown keys in the user's own spelling, in a stable order.
    normalized.options.keys.toSeq.sorted.foreach { key =>
      val name = normalized.givenAs.getOrElse(key, key)
      byKey.get(key) match {
        case None if !KinesisOptions.sparkOwnedKeys.contains(key) && !KinesisOptions.catalogOwnedKeys.contains(key) =>
          ForeignOptions.elsewhere(dialect, key).foreach { f =>
            throw KinesisErrors.optionOfOtherFormat(name, f.origin, f.dialect.format, dialect.format)
          }
          throw KinesisErrors.unknownOption(name, suggestions(key, scope), scope.label)
        case Some(spec) if !spec.scope.overlaps(scope) =>
          throw KinesisErrors.optionNotForScope(name, spec.scope.label, scope.label)
        case _ =>
      }
    }
    normalized.warnings.foreach(warnOnce)
    new ParsedOptions(normalized.options, scope, dialect, normalized.givenAs, normalized.warnings)
  }

  private val warned = ConcurrentHashMap.newKeySet[String]()

  /** Logs a warning about an option the first time this JVM sees it (options are parsed several times a query). */
  private def warnOnce(message: String): Unit = if (warned.add(message)) logWarning(message)

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
