package io.sparkkinesis.source

import io.sparkkinesis.compat.CollectionConverters._

import org.apache.spark.sql.util.CaseInsensitiveStringMap

/**
 * A read's options parsed once, when the read is defined (the provider's `inferSchema`), with the text they were
 * parsed from: the scan built from the same options takes them as they are, so options are parsed, checked and
 * warned about once per read.
 */
private[sparkkinesis] final case class ParsedRead(text: Map[String, String], options: SourceOptions) {

  /** These options, if `asked` is the text they were parsed from. */
  def of(asked: CaseInsensitiveStringMap): Option[SourceOptions] =
    if (ParsedRead.textOf(asked) == text) Some(options) else None
}

private[sparkkinesis] object ParsedRead {
  def apply(text: CaseInsensitiveStringMap, options: SourceOptions): ParsedRead = ParsedRead(textOf(text), options)

  private def textOf(m: CaseInsensitiveStringMap): Map[String, String] = m.asCaseSensitiveMap().asScala.toMap
}
