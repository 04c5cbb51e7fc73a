-- Every record of the Kinesis stream `orders`, once, in a streaming table: each run of the pipeline appends the
-- records that arrived since the previous run, from the offsets the pipeline's checkpoint holds. The first run starts
-- where the catalog's initialPosition says (spark-pipeline.yml: the oldest record the stream keeps). The payload is
-- decoded as UTF-8 text.
CREATE STREAMING TABLE orders_raw
COMMENT 'Every record of the Kinesis stream orders, once, with its payload as text'
AS SELECT
  CAST(data AS STRING) AS payload,
  partitionKey,
  shardId,
  sequenceNumber,
  approximateArrivalTimestamp AS arrivalTime
FROM STREAM kinesis.orders;
