package io.sparkkinesis.config

/**
 * An option name of another Kinesis connector, accepted under `dialect`'s format, and what this connector does with
 * it (see [[ForeignOptions]] for the list and `docs/migrating.md` for the guides).
 *
 * @param origin the program whose name it is, as the docs name it ("Databricks", "awslabs", "qubole kinesis-sql")
 */
private[sparkkinesis] final case class ForeignOption(
    name: String,
    origin: String,
    dialect: Dialect,
    scope: Scope,
    handling: ForeignOption.Handling) {
  val key: String = name.toLowerCase(java.util.Locale.ROOT)
}

private[sparkkinesis] object ForeignOption {

  /** What happens to a foreign option. */
  sealed trait Handling extends Serializable

  /**
   * The same meaning as `target`. `translate` turns the given text into options of this connector (by default the
   * text itself, for `target`); it fails with [KINESIS_INVALID_OPTION_VALUE] naming the option as given. When the
   * name is this connector's own (`name` equals `target`'s), only the value's other form is translated: Databricks'
   * JSON form of `initialPosition`, for example.
   */
  final case class Alias(
      target: OptionSpec[_],
      note: String = "",
      translate: Option[ForeignValues.Translation] = None) extends Handling

  /** Accepted with a warning in the driver's log: it tunes something this connector does otherwise (`why`). */
  final case class Ignored(why: String) extends Handling

  /** Refused with [KINESIS_UNSUPPORTED_OPTION]: it asks for what this connector cannot do; `instead` says what to use. */
  final case class Refused(instead: String) extends Handling
}
