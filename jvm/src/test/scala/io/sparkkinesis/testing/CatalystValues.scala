package io.sparkkinesis.testing

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow
import org.apache.spark.sql.catalyst.util.{ArrayBasedMapData, ArrayData, GenericArrayData, MapData}
import org.apache.spark.sql.types.{ArrayType, DataType, MapType, StructType}
import org.apache.spark.unsafe.types.UTF8String

/** Spark's internal values written briefly, for the payload format suites' expectations, and compared by content. */
object CatalystValues {
  def str(s: String): UTF8String = UTF8String.fromString(s)
  def row(values: Any*): InternalRow = new GenericInternalRow(values.toArray)
  def arr(values: Any*): ArrayData = new GenericArrayData(values.toArray)
  def map(entries: (String, Any)*): MapData =
    new ArrayBasedMapData(arr(entries.map(e => str(e._1)): _*), arr(entries.map(_._2): _*))

  /**
   * Catalyst values as plain Scala values that compare by content: rows, arrays and maps (as pairs) as lists;
   * `other` handles the leaves a suite wants compared its own way (bytes, decimals, NaN), else a leaf is itself.
   */
  def norm(v: Any, dt: DataType, other: PartialFunction[(Any, DataType), Any] = PartialFunction.empty): Any =
    (v, dt) match {
      case (null, _) => null
      case (r: InternalRow, st: StructType) =>
        st.fields.indices.map(i => if (r.isNullAt(i)) null else norm(r.get(i, st(i).dataType), st(i).dataType, other))
          .toList
      case (a: ArrayData, ArrayType(et, _)) =>
        (0 until a.numElements()).map(i => if (a.isNullAt(i)) null else norm(a.get(i, et), et, other)).toList
      case (m: MapData, MapType(kt, vt, _)) =>
        norm(m.keyArray(), ArrayType(kt), other).asInstanceOf[List[Any]]
          .zip(norm(m.valueArray(), ArrayType(vt), other).asInstanceOf[List[Any]])
      case leaf if other.isDefinedAt(leaf) => other(leaf)
      case _ => v
    }
}
