package io.sparkkinesis.kpl

import java.util.Arrays

/** One user record: what a producer handed to the KPL, and what a consumer gets back after de-aggregation.
  *
  * `data` is an array, so equality and hashing are defined here by content (partition key, explicit hash
  * key and the bytes of `data`), not by array reference as a plain case class would do.
  */
private[sparkkinesis] final case class UserRecord(
    partitionKey: String,
    explicitHashKey: Option[String],
    data: Array[Byte]) {
  override def equals(other: Any): Boolean = other match {
    case o: UserRecord =>
      partitionKey == o.partitionKey && explicitHashKey == o.explicitHashKey && Arrays.equals(data, o.data)
    case _ => false
  }
  override def hashCode: Int = (partitionKey, explicitHashKey, Arrays.hashCode(data)).##
  override def toString: String = s"UserRecord($partitionKey, $explicitHashKey, ${data.length} bytes)"
}
