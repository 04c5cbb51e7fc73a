// The ceiling for the source benchmark: a plain AWS SDK 2.x GetRecords loop, one thread per shard, no Spark.
// Run with the connector's assembly jar on the class path (the SDK is relocated there under io.sparkkinesis.shaded):
//   java -Daws.cborEnabled=false -cp <jar>:<slf4j-api> PlainGetRecords.java <endpoint> <stream> <expectedRecords>
// Prints one JSON line: records read, seconds, records per second.
import io.sparkkinesis.shaded.software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import io.sparkkinesis.shaded.software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import io.sparkkinesis.shaded.software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import io.sparkkinesis.shaded.software.amazon.awssdk.regions.Region;
import io.sparkkinesis.shaded.software.amazon.awssdk.services.kinesis.KinesisClient;
import io.sparkkinesis.shaded.software.amazon.awssdk.services.kinesis.model.GetRecordsRequest;
import io.sparkkinesis.shaded.software.amazon.awssdk.services.kinesis.model.GetRecordsResponse;
import io.sparkkinesis.shaded.software.amazon.awssdk.services.kinesis.model.GetShardIteratorRequest;
import io.sparkkinesis.shaded.software.amazon.awssdk.services.kinesis.model.ListShardsRequest;
import io.sparkkinesis.shaded.software.amazon.awssdk.services.kinesis.model.Shard;
import io.sparkkinesis.shaded.software.amazon.awssdk.services.kinesis.model.ShardIteratorType;
import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

public final class PlainGetRecords {
    public static void main(String[] args) throws Exception {
        String endpoint = args[0];
        String stream = args[1];
        long expected = Long.parseLong(args[2]);
        KinesisClient client = KinesisClient.builder()
            .endpointOverride(URI.create(endpoint))
            .region(Region.US_EAST_1)
            .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create("bench", "bench")))
            .httpClientBuilder(UrlConnectionHttpClient.builder())
            .build();
        List<Shard> shards = client.listShards(ListShardsRequest.builder().streamName(stream).build()).shards();
        AtomicLong total = new AtomicLong();
        long start = System.nanoTime();
        List<Thread> threads = new ArrayList<>();
        for (Shard shard : shards) {
            Thread t = new Thread(() -> {
                String it = client.getShardIterator(GetShardIteratorRequest.builder().streamName(stream)
                    .shardId(shard.shardId()).shardIteratorType(ShardIteratorType.TRIM_HORIZON).build()).shardIterator();
                long deadline = System.nanoTime() + 600_000_000_000L;
                while (it != null && System.nanoTime() < deadline) {
                    GetRecordsResponse r = client.getRecords(GetRecordsRequest.builder().shardIterator(it).limit(10000).build());
                    total.addAndGet(r.records().size());
                    it = r.nextShardIterator();
                    if (r.records().isEmpty()) break;   // drained: the data was written before the loop started
                }
            });
            t.start();
            threads.add(t);
        }
        for (Thread t : threads) t.join();
        double seconds = (System.nanoTime() - start) / 1e9;
        client.close();
        if (total.get() != expected) throw new IllegalStateException("read " + total.get() + " of " + expected);
        System.out.printf("{\"records\": %d, \"seconds\": %.3f, \"recordsPerSecond\": %.0f}%n",
            total.get(), seconds, total.get() / seconds);
    }
}
