package io.sparkkinesis.errors

/**
 * How errors name a place inside a value, in every payload format: `order.lines[].price`, `[]` for an array's
 * elements and `{}` for a map's values; the empty path is the value itself.
 */
private[sparkkinesis] object FieldPath {
  def field(path: String, name: String): String = if (path.isEmpty) name else s"$path.$name"
  def element(path: String): String = s"$path[]"
  def mapValue(path: String): String = s"$path{}"

  /** Where `path` is, in words. */
  def at(path: String): String = if (path.isEmpty) "the top level" else s"field '$path'"
}
