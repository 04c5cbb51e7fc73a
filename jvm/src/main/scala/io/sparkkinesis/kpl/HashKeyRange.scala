package io.sparkkinesis.kpl

import java.math.BigInteger
import java.nio.charset.StandardCharsets
import java.security.MessageDigest

/**
 * A shard's hash key range, `[start, end]` of the 128-bit unsigned hash keys Kinesis routes records by, held as two
 * longs each (high and low 64 bits) so that [[holds]] costs no allocation beyond the MD5 of the partition key.
 */
private[sparkkinesis] final class HashKeyRange private (startHi: Long, startLo: Long, endHi: Long, endLo: Long)
  extends Serializable {

  /**
   * Whether the record Kinesis would route by `explicitHashKey` (if any), else by the MD5 of `partitionKey` as a
   * 128-bit unsigned number, lies in the range. An explicit hash key that is not a number from 0 to 2^128 - 1 lies
   * nowhere (Kinesis refuses such keys).
   */
  def holds(partitionKey: String, explicitHashKey: Option[String]): Boolean = explicitHashKey match {
    case Some(ehk) =>
      HashKeyRange.parse(ehk).exists(k => holds(HashKeyRange.high(k), HashKeyRange.low(k)))
    case None =>
      val md5 = HashKeyRange.digest(partitionKey)
      holds(HashKeyRange.longAt(md5, 0), HashKeyRange.longAt(md5, 8))
  }

  private def holds(hi: Long, lo: Long): Boolean =
    HashKeyRange.compare(startHi, startLo, hi, lo) <= 0 && HashKeyRange.compare(hi, lo, endHi, endLo) <= 0

  override def toString: String =
    s"[${HashKeyRange.toBigInt(startHi, startLo)}, ${HashKeyRange.toBigInt(endHi, endLo)}]"
}

private[sparkkinesis] object HashKeyRange {
  private val Max = BigInteger.ONE.shiftLeft(128).subtract(BigInteger.ONE)

  def apply(start: BigInt, end: BigInt): HashKeyRange = {
    require(start >= 0 && end <= BigInt(Max) && start <= end, s"not a hash key range: [$start, $end]")
    new HashKeyRange(high(start.bigInteger), low(start.bigInteger), high(end.bigInteger), low(end.bigInteger))
  }

  /** The hash key Kinesis routes a record of `partitionKey` by (with no explicit hash key): its MD5, unsigned. */
  def ofPartitionKey(partitionKey: String): BigInt = BigInt(1, digest(partitionKey))

  // One digest per thread: MessageDigest.getInstance costs more than the digest of a short key.
  private val md5 = ThreadLocal.withInitial[MessageDigest](() => MessageDigest.getInstance("MD5"))

  private def digest(partitionKey: String): Array[Byte] = {
    val d = md5.get()
    d.reset()
    d.digest(partitionKey.getBytes(StandardCharsets.UTF_8))
  }

  private def parse(s: String): Option[BigInteger] =
    try {
      val k = new BigInteger(s)
      if (k.signum() >= 0 && k.compareTo(Max) <= 0) Some(k) else None
    } catch { case _: NumberFormatException => None }

  private def high(k: BigInteger): Long = k.shiftRight(64).longValue()
  private def low(k: BigInteger): Long = k.longValue()

  private def longAt(b: Array[Byte], from: Int): Long = {
    var v = 0L
    var i = from
    while (i < from + 8) { v = (v << 8) | (b(i) & 0xFFL); i += 1 }
    v
  }

  private def compare(aHi: Long, aLo: Long, bHi: Long, bLo: Long): Int = {
    val c = java.lang.Long.compareUnsigned(aHi, bHi)
    if (c != 0) c else java.lang.Long.compareUnsigned(aLo, bLo)
  }

  private def toBigInt(hi: Long, lo: Long): BigInt =
    (BigInt(hi) & ((BigInt(1) << 64) - 1)) << 64 | (BigInt(lo) & ((BigInt(1) << 64) - 1))
}
