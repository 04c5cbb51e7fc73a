package io.sparkkinesis.sink

import io.sparkkinesis.kpl.Kpl

/**
 * What to send after a KPL record landed in a shard other than the one it was packed for:
 *  - `first`: its user records that the landing shard's hash range does not hold, packed again, to go before
 *    anything else of the record's unit of order (the KCL drops the misplaced copies; these are the ones it keeps);
 *  - `more`: aggregates completed by packing again the records in progress for shards that closed;
 *  - `resentRecords`: how many user records `first` carries.
 */
private[sink] final case class Relocation(first: Seq[PutEntry], more: Seq[PutEntry], resentRecords: Int)

private[sink] object Relocation {
  val Nothing: Relocation = Relocation(Nil, Nil, 0)
}

/**
 * With `aggregation=kpl`, PutRecords names the shard each record landed in. One other than the shard it was packed
 * for means the writer's shard map was made before a reshard: a record of one key routes by that key and is always
 * right, but an aggregate routes by its first record's key, and after a split its other records may belong to the
 * other child. Then the map is listed again (unless the map now in use already routes elsewhere: the record was
 * packed before the last listing), and the aggregate's records outside the landing shard's range are sent again.
 * After a merge the merged shard holds every key of its parents' aggregates: nothing goes again.
 */
private[sink] final class MisplacedRecords(maps: KplShardMaps, packer: KplRecordPacker) {

  def landed(entry: PutEntry, shardId: String): Relocation = {
    val known = maps(entry.stream)
    val stale = known.isOpen(entry.packedFor) || !known.lists(shardId)
    val map = if (stale) maps.refresh(entry.stream) else known
    val more = if (stale) packer.repackStale(entry.stream) else Nil
    if (entry.userRecords <= 1) Relocation(Nil, more, 0)
    else {
      val records = Kpl.deaggregate(entry.data, entry.partitionKey).getOrElse(
        throw new IllegalStateException(s"${entry.position} is not a KPL aggregate"))
      // A shard the listing does not have (listed before it was made): every record goes again.
      val outside = records.filterNot(r =>
        map.holds(shardId, ShardMap.hashKey(r.partitionKey, r.explicitHashKey.orNull)).getOrElse(false))
      if (outside.isEmpty) Relocation(Nil, more, 0)
      else Relocation(packer.packAlone(entry.stream, outside, s"${entry.position} (sent again: it landed in $shardId)"),
        more, outside.size)
    }
  }
}
