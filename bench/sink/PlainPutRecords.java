// The baseline of the sink benchmark: a plain AWS SDK 2.x PutRecords loop, no Spark.
//
// Sends `records` records of `size` bytes (keys "k<i % 1024>") to `stream` in calls of `batch` entries with at
// most `inFlight` calls outstanding, retrying failed entries, and prints one JSON line with the rate. Run it
// with the connector's assembly jar on the class path (the SDK is relocated there under io.sparkkinesis.shaded):
//   java -cp spark-kinesis_2.13-<version>.jar:slf4j-api-<version>.jar bench/sink/PlainPutRecords.java ENDPOINT STREAM RECORDS SIZE BATCH IN_FLIGHT
// bench/sink/run.py does this for you.

import io.sparkkinesis.shaded.software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import io.sparkkinesis.shaded.software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import io.sparkkinesis.shaded.software.amazon.awssdk.core.SdkBytes;
import io.sparkkinesis.shaded.software.amazon.awssdk.http.Protocol;
import io.sparkkinesis.shaded.software.amazon.awssdk.http.nio.netty.NettyNioAsyncHttpClient;
import io.sparkkinesis.shaded.software.amazon.awssdk.regions.Region;
import io.sparkkinesis.shaded.software.amazon.awssdk.services.kinesis.KinesisAsyncClient;
import io.sparkkinesis.shaded.software.amazon.awssdk.services.kinesis.model.PutRecordsRequest;
import io.sparkkinesis.shaded.software.amazon.awssdk.services.kinesis.model.PutRecordsRequestEntry;
import io.sparkkinesis.shaded.software.amazon.awssdk.services.kinesis.model.PutRecordsResponse;

import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

public final class PlainPutRecords {
  private static final int MAX_ATTEMPTS = 20;

  public static void main(String[] args) throws Exception {
    String endpoint = args[0];
    String stream = args[1];
    int records = Integer.parseInt(args[2]);
    int size = Integer.parseInt(args[3]);
    int batch = Integer.parseInt(args[4]);
    int inFlight = Integer.parseInt(args[5]);
    System.setProperty("aws.cborEnabled", "false"); // kinesalite corrupts CBOR payloads

    try (KinesisAsyncClient client = KinesisAsyncClient.builder()
        .region(Region.US_EAST_1)
        .endpointOverride(URI.create(endpoint))
        .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create("bench", "bench")))
        .httpClientBuilder(NettyNioAsyncHttpClient.builder().protocol(Protocol.HTTP1_1).maxConcurrency(inFlight * 2))
        .build()) {
      byte[] payload = new byte[size];
      java.util.Arrays.fill(payload, (byte) 'x');
      Semaphore permits = new Semaphore(inFlight);
      AtomicLong written = new AtomicLong();
      AtomicReference<Throwable> failure = new AtomicReference<>();
      long start = System.nanoTime();
      for (int from = 0; from < records && failure.get() == null; from += batch) {
        List<PutRecordsRequestEntry> entries = new ArrayList<>(batch);
        for (int i = from; i < Math.min(records, from + batch); i++) {
          entries.add(PutRecordsRequestEntry.builder().partitionKey("k" + (i % 1024))
              .data(SdkBytes.fromByteArrayUnsafe(payload)).build());
        }
        permits.acquire();
        send(client, stream, entries, 1).whenComplete((n, error) -> {
          if (error != null) failure.compareAndSet(null, error);
          else written.addAndGet(n);
          permits.release();
        });
      }
      permits.acquire(inFlight);
      double seconds = (System.nanoTime() - start) / 1e9;
      if (failure.get() != null) throw new RuntimeException(failure.get());
      System.out.printf("{\"records\": %d, \"seconds\": %.3f, \"recordsPerSecond\": %.0f}%n",
          written.get(), seconds, written.get() / seconds);
    }
  }

  /** Sends the entries; sends the failed ones again until all are written. Completes with the count written. */
  private static CompletableFuture<Integer> send(KinesisAsyncClient client, String stream,
                                                 List<PutRecordsRequestEntry> entries, int attempt) {
    return client.putRecords(PutRecordsRequest.builder().streamName(stream).records(entries).build())
        .thenCompose((PutRecordsResponse response) -> {
          List<PutRecordsRequestEntry> failed = new ArrayList<>();
          for (int i = 0; i < entries.size(); i++) {
            if (response.records().get(i).errorCode() != null) failed.add(entries.get(i));
          }
          if (failed.isEmpty()) return CompletableFuture.completedFuture(entries.size());
          if (attempt >= MAX_ATTEMPTS) throw new IllegalStateException(failed.size() + " entries kept failing");
          int landed = entries.size() - failed.size();
          return send(client, stream, failed, attempt + 1).thenApply(n -> n + landed);
        });
  }
}
