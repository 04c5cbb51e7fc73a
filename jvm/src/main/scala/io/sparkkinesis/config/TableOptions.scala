package io.sparkkinesis.config

/**
 * A read's or a write's options as Spark hands them over. From the DataFrame API, and from `CREATE TEMPORARY VIEW
 * ... USING kinesis OPTIONS (...)`, they are the options as given. From a table of the session catalog (`CREATE
 * TABLE ... USING kinesis OPTIONS (...)`), they are the table's properties: each option under the prefix `option.`,
 * beside the catalog's own (`provider`, `owner`, `location`, ...; [[KinesisOptions.catalogOwnedKeys]]) and the
 * table's `TBLPROPERTIES`, which are not options.
 */
private[sparkkinesis] object TableOptions {
  val Prefix = "option."

  /** What a secret option's value is shown as. */
  val Redacted = "*********(redacted)"

  /** The options in `options`: the prefixed ones without their prefix when there are any, else all of them. */
  def unwrap(options: Map[String, String]): Map[String, String] = {
    val prefixed = options.collect {
      case (k, v) if k.regionMatches(true, 0, Prefix, 0, Prefix.length) => k.substring(Prefix.length) -> v
    }
    if (prefixed.isEmpty) options else prefixed
  }

  /**
   * The options of a table that configure `scope` (its reads, or its writes) in `dialect`: a table's options serve
   * both, so those of the other side are left out (a read's or a write's own options are checked strictly). Names
   * neither this connector nor the dialect's other programs have stay, to fail as unknown.
   */
  def forScope(table: Map[String, String], scope: Scope, dialect: Dialect): Map[String, String] =
    table.filter { case (name, _) => scopeOf(name, dialect).forall(_.overlaps(scope)) }

  /** The table's options as `DESCRIBE TABLE` shows them: secret values (credentials) redacted. */
  def shown(table: Map[String, String], dialect: Dialect): Map[String, String] =
    table.map { case (name, value) => name -> (if (isSecret(name, dialect)) Redacted else value) }

  private def keyOf(name: String): String = name.toLowerCase(java.util.Locale.ROOT)

  /** The registry's option `name` stands for: its own, or the one a foreign name is an alias of. */
  private def specOf(name: String, dialect: Dialect): Option[OptionSpec[_]] = {
    val aliased: Option[OptionSpec[_]] = ForeignOptions.find(dialect, keyOf(name)).map(_.handling).collect {
      case ForeignOption.Alias(target, _, _) => target
    }
    aliased.orElse(KinesisOptions.all.find(_.key == keyOf(name)))
  }

  /** The side a name configures: a foreign name's own scope (it may be ignored or refused), else its option's. */
  private def scopeOf(name: String, dialect: Dialect): Option[Scope] =
    ForeignOptions.find(dialect, keyOf(name)).map(_.scope).orElse(
      KinesisOptions.all.find(_.key == keyOf(name)).map(_.scope))

  /** Whether `name` is an option of the registry (or an alias of one) that is secret. */
  def isKnownSecret(name: String, dialect: Dialect): Boolean = specOf(name, dialect).exists(_.secret)

  /** Whether an option's value is a secret: one of the registry's, or an unknown option's (shown neither). */
  def isSecret(name: String, dialect: Dialect): Boolean = specOf(name, dialect) match {
    case Some(spec) => spec.secret
    case None => true
  }

  /**
   * A table's options with those of one read or write laid over them (`SELECT ... WITH (...)`, `.option(...)` on
   * `readStream.table`, a write's options), keys compared without case as Spark compares them.
   */
  def overlay(table: Map[String, String], query: Map[String, String]): Map[String, String] = {
    val asked = query.keySet.map(keyOf)
    table.filterNot { case (k, _) => asked.contains(keyOf(k)) } ++ query
  }
}
