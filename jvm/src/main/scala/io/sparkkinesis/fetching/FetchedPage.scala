package io.sparkkinesis.fetching

import software.amazon.awssdk.services.kinesis.model.Record

/** One answer of a shard fetcher: the records, how far behind the tip the shard is, and whether it has ended. */
private[sparkkinesis] final case class FetchedPage(records: Seq[Record], millisBehindLatest: Long, shardEnded: Boolean)
