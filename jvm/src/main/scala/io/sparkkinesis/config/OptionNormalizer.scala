package io.sparkkinesis.config

import java.util.Locale

import io.sparkkinesis.config.ForeignOption.{Alias, Ignored, Refused}
import io.sparkkinesis.errors.KinesisErrors

/**
 * A query's options with other connectors' names ([[ForeignOptions]]) turned into this connector's: `options` by
 * lower-cased key, `givenAs` the name the user wrote for each (for errors), `warnings` for the foreign options that
 * have no effect here. Keys it does not know are passed on as given, for [[ParsedOptions]] to judge.
 */
private[sparkkinesis] final case class NormalizedOptions(
    options: Map[String, String],
    givenAs: Map[String, String],
    warnings: Seq[String])

private[sparkkinesis] object OptionNormalizer {

  def apply(written: Map[String, String], scope: Scope, dialect: Dialect): NormalizedOptions = {
    var options = Map.empty[String, String]
    var givenAs = Map.empty[String, String]
    val warnings = Seq.newBuilder[String]
    def put(key: String, value: String, name: String, option: String): Unit = {
      givenAs.get(key).foreach(first => throw KinesisErrors.optionGivenTwice(first, name, option))
      options = options.updated(key, value)
      givenAs = givenAs.updated(key, name)
    }
    written.toSeq.sortBy(_._1).foreach { case (name, value) =>
      val key = name.toLowerCase(Locale.ROOT)
      ForeignOptions.find(dialect, key) match {
        case Some(foreign) =>
          if (!foreign.scope.overlaps(scope))
            throw KinesisErrors.optionNotForScope(name, foreign.scope.label, scope.label)
          foreign.handling match {
            case Refused(instead) => throw KinesisErrors.unsupportedOption(name, foreign.origin, instead)
            case Ignored(why) =>
              warnings += s"Option '$name' of the ${foreign.origin} connector has no effect here: $why."
            case Alias(target, _, translate) =>
              translate.fold(Seq[(OptionSpec[_], String)](target -> value))(_(name, value)).foreach {
                case (spec, text) => put(spec.key, text, name, spec.name)
              }
          }
        case None =>
          ForeignOptions.ignoredPrefixes.find { case (d, prefix, _) => d == dialect && key.startsWith(prefix) } match {
            case Some((_, _, why)) => warnings += s"Option '$name' has no effect here: $why."
            case None => put(key, value, name, name)
          }
      }
    }
    NormalizedOptions(options, givenAs, warnings.result())
  }
}
