-- Records per partition key over everything orders_raw holds, computed again on each run of the pipeline.
CREATE MATERIALIZED VIEW orders_by_key
COMMENT 'Records of the stream orders per partition key, with the first and last arrival'
AS SELECT
  partitionKey,
  COUNT(*) AS records,
  MIN(arrivalTime) AS firstArrival,
  MAX(arrivalTime) AS lastArrival
FROM orders_raw
GROUP BY partitionKey;
