package io.sparkkinesis.reader

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.connector.read.PartitionReader

import io.sparkkinesis.fetching.{BufferedRecord, ShardFetcher, ShardFetchers}

/**
 * Executor side of a batch read: reads the partition's shards one after another, splitting KPL aggregates into
 * their user records. A shard is done when it has ended, when a record arrived after the query's planning time,
 * or when a call returns nothing while the shard is at its tip (MillisBehindLatest 0). Its rows have the read's
 * `columns`.
 */
private[sparkkinesis] final class KinesisBatchPartitionReader(
    partition: KinesisBatchInputPartition,
    columns: KinesisSchema)
  extends PartitionReader[InternalRow] {
  private val shards = partition.shards.iterator
  private var fetcher: ShardFetcher = _
  private var converter: RecordConverter = _
  private var buffered: Iterator[BufferedRecord] = Iterator.empty
  private var shardDone = true
  private var current: InternalRow = _

  override def next(): Boolean = {
    while (true) {
      if (buffered.hasNext) {
        val r = buffered.next()
        if (r.arrivalMillis > partition.asOfMillis) {
          shardDone = true
          buffered = Iterator.empty
        } else {
          current = converter.toRow(r)
          return true
        }
      } else if (!shardDone) {
        val fetched = fetcher.fetch()
        val kept = fetcher.subRecords
        buffered = fetched.records.iterator.flatMap(BufferedRecord.fromKinesis(_, kept))
        shardDone = fetched.shardEnded || (fetched.records.isEmpty && fetched.millisBehindLatest == 0)
      } else if (shards.hasNext) {
        val s = shards.next()
        fetcher = ShardFetchers.open(partition.connection, s.stream, s.shardId, s.start, partition.fetch)
        converter = new RecordConverter(columns, s.stream.name, s.shardId)
        shardDone = false
      } else {
        return false
      }
    }
    false
  }

  override def get(): InternalRow = current

  override def close(): Unit = ()
}
