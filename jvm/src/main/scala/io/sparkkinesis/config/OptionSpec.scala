package io.sparkkinesis.config

import java.util.Locale

/** Which side of the connector an option configures. */
sealed abstract class Scope(val label: String) extends Serializable {

  /**
   * Whether an option of this scope can be used where `other` is being configured. A catalog and the schema registry
   * functions take the connection's options (those of both sides) besides their own; a read or a write takes none of
   * theirs.
   */
  def overlaps(other: Scope): Boolean =
    this == other || this == Scope.Both || (other == Scope.Both && !Scope.ownSettings(this))
}
private[sparkkinesis] object Scope {
  case object Source extends Scope("source")
  case object Sink extends Scope("sink")
  case object Both extends Scope("source and sink")

  /** A Kinesis catalog's own settings (`spark.sql.catalog.<name>.<option>`), not a read's or a write's. */
  case object Catalog extends Scope("catalog")

  /** The settings of `from_glue_schema_registry` and `to_glue_schema_registry` (their `options` map). */
  case object SchemaRegistry extends Scope("schema registry functions")

  /** Scopes whose options only their own use takes. */
  val ownSettings: Set[Scope] = Set(Catalog, SchemaRegistry)
}

/**
 * One user-facing option: its name as users write it, its type, its default (as shown in the docs), which
 * side it applies to, the version that introduced it, and its documentation. `secret` values are never
 * echoed back in errors or descriptions.
 */
private[sparkkinesis] final case class OptionSpec[T](
    name: String,
    kind: OptionKind[T],
    default: Option[T],
    scope: Scope,
    since: String,
    doc: String,
    group: String,
    secret: Boolean = false,
    defaultDoc: Option[String] = None) {

  val key: String = name.toLowerCase(Locale.ROOT)

  /** The default as the generated documentation shows it. */
  def defaultText: String = defaultDoc.orElse(default.map(kind.render)).getOrElse("(none)")
}
