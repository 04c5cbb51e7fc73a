package io.sparkkinesis.aws

import java.nio.charset.StandardCharsets.UTF_8
import java.nio.file.Files

import org.scalatest.funsuite.AnyFunSuite
import software.amazon.awssdk.core.SdkBytes
import software.amazon.awssdk.services.kinesis.model._

import io.sparkkinesis.config.{ParsedOptions, Scope}
import io.sparkkinesis.testing.{Integration, LocalKinesisServers, MotoServer, RequestLog, SharedSparkSession}
import io.sparkkinesis.testing.TestStreams._

/**
 * Issue 40, items 1 and 2, end to end on loopback: STS is moto's, Kinesis is kinesis-mock. Neither
 * checks signatures, so what proves a chain was followed is the access key id that signed each request
 * ([[RequestLog]]) against the keys moto issued for each role; what proves an endpoint variant was used is the host
 * the SDK chose for each request, before [[RequestLog]] sent it to the local server instead. The Spark query through
 * the chain is `FullOnly` (`make test-full`): the clients' test covers the same clients in a few seconds, without a
 * Spark session.
 */
@Integration
class RoleChainSuite extends AnyFunSuite with LocalKinesisServers with SharedSparkSession with MotoServer {

  private val account = "123456789012"
  private def role(name: String) = s"arn:aws:iam::$account:role/$name"

  /** A token file of the pod, and the options of a two-role chain (hub, then stream owner) on its web identity. */
  private def chainOptions(run: Long): (java.nio.file.Path, Map[String, String]) = {
    val tokenFile = Files.createTempFile("web-identity", ".jwt")
    Files.write(tokenFile, "eyJ.web-identity-token-of-the-pod".getBytes(UTF_8))
    val options = connectionOptions(kinesisMock) - "awsAccessKeyId" - "awsSecretKey" ++ Map(
      "webIdentityTokenFile" -> tokenFile.toString,
      "webIdentityRoleArn" -> role("spark-pods"),
      "webIdentityRoleSessionName" -> s"pods-$run",
      "roleArn" -> s"${role("hub")}, ${role("stream-owner")}",
      "roleExternalId" -> "hub-external-id,owner-external-id",
      "roleSessionName" -> s"hub-$run,owner-$run",
      "stsEndpointUrl" -> moto)
    (tokenFile, options)
  }

  /**
   * Checks what moto issued and what signed each logged request: STS's AssumeRoleWithWebIdentity unsigned, the hub
   * role assumed with the pod's credentials and the owner's with the hub's, and every Kinesis call (of `operations`
   * at least) signed with the owner's.
   */
  private def assertChainFollowed(run: Long, operations: Set[String]): Unit = {
    val roles = assumedRoles
    def keys(arn: String, session: String) = roles.collect { case (`arn`, `session`, _, key) => key }.toSet
    val pods = keys(role("spark-pods"), s"pods-$run")
    val hub = keys(role("hub"), s"hub-$run")
    val owner = keys(role("stream-owner"), s"owner-$run")
    assert(pods.nonEmpty && hub.nonEmpty && owner.nonEmpty, roles)
    assert(roles.filter(_._2 == s"hub-$run").forall(_._3.contains("hub-external-id")), roles)
    assert(roles.filter(_._2 == s"owner-$run").forall(_._3.contains("owner-external-id")), roles)

    val requests = RequestLog.requests
    val kinesis = requests.filter(_.service == "Kinesis")
    assert(operations.subsetOf(kinesis.map(_.operation).toSet), kinesis)
    assert(kinesis.forall(_.signingKeyId.exists(owner)), kinesis)
    val sts = requests.filter(_.service == "Sts")
    val web = sts.filter(_.operation == "AssumeRoleWithWebIdentity")
    assert(web.nonEmpty && web.forall(_.signingKeyId.isEmpty), sts)
    val assumeRole = sts.filter(_.operation == "AssumeRole").flatMap(_.signingKeyId).toSet
    assert(assumeRole.exists(pods) && assumeRole.exists(hub) && assumeRole.forall(k => pods(k) || hub(k)), sts)
  }

  test("the sync, async and fan-out clients sign with the last role of a two-role chain on a web identity base") {
    val stream = freshStream(kinesisMock, "chain-clients", 1)
    val run = System.nanoTime()
    val (tokenFile, options) = chainOptions(run)
    val conn = AwsConnection.fromOptions(ParsedOptions(options + ("streamName" -> stream), Scope.Both),
      Seq(StreamRef(stream, None, None)))
    RequestLog.recording(Map.empty) {
      val put = PutRecordsRequest.builder().streamName(stream).records(PutRecordsRequestEntry.builder()
          .partitionKey("k").data(SdkBytes.fromUtf8String("through the chain")).build()).build()
      assert(KinesisClients.async(conn, 2).putRecords(put).join().failedRecordCount() == 0)
      val sync = KinesisClients.sync(conn)
      val shard = sync.listShards(ListShardsRequest.builder().streamName(stream).build()).shards().get(0).shardId()
      val iterator = sync.getShardIterator(GetShardIteratorRequest.builder().streamName(stream).shardId(shard)
          .shardIteratorType(ShardIteratorType.TRIM_HORIZON).build()).shardIterator()
      val records = sync.getRecords(GetRecordsRequest.builder().shardIterator(iterator).build()).records()
      assert(records.size() == 1 && records.get(0).data().asUtf8String() == "through the chain")
      assert(KinesisClients.fanOut(conn).listShards(ListShardsRequest.builder().streamName(stream).build()).join()
        .shards().size() == 1)
    }
    assertChainFollowed(run, Set("PutRecords", "ListShards", "GetShardIterator", "GetRecords"))
    assert(!conn.toString.contains("external-id") && !conn.toString.contains(tokenFile.toString), conn.toString)
    Files.delete(tokenFile)
  }

  test("a query writes and reads through a two-role chain on a web identity base, signed with the last role") {
    val stream = freshStream(kinesisMock, "chain-query", 1)
    val run = System.nanoTime()
    val (tokenFile, chain) = chainOptions(run)
    val options = chain + ("streamName" -> stream)
    val s = spark
    import s.implicits._

    val (read, plan) = RequestLog.recording(Map.empty) {
      (1 to 20).map(i => (s"record-$i", s"k$i")).toDF("data", "partitionKey")
        .write.format("kinesis").options(options).mode("append").save()
      val df = spark.read.format("kinesis").options(options).load()
      (df.selectExpr("CAST(data AS STRING)").as[String].collect().toSet, df.queryExecution.toString)
    }
    assert(read == (1 to 20).map(i => s"record-$i").toSet)
    assertChainFollowed(run, Set("PutRecords", "GetRecords"))
    assert(!plan.contains("external-id") && !plan.contains("web-identity-token"), plan)
    Files.delete(tokenFile)
  }

  test("the sync, async and fan-out clients and STS call the FIPS or dual-stack host the options choose") {
    val stream = freshStream(kinesisMock, "variants", 1)
    def connection(variants: EndpointVariants, run: String) =
      AwsConnection(Region, None,
        CredentialsConfig.AssumeRole(CredentialsConfig.StaticKeys("base-key", "base-secret", None), role("reader"),
          None, s"variants-$run", None), kinesisMock.cborEnabled, variants)
    def callEveryClient(c: AwsConnection): Unit = {
      val request = ListShardsRequest.builder().streamName(stream).build()
      assert(KinesisClients.sync(c).listShards(request).shards().size() == 1)
      assert(KinesisClients.async(c, 2).listShards(request).join().shards().size() == 1)
      assert(KinesisClients.fanOut(c).listShards(request).join().shards().size() == 1)
    }
    val cases = Seq(
      (EndpointVariants(Some(true), None), "kinesis-fips.us-east-1.amazonaws.com", "sts-fips.us-east-1.amazonaws.com"),
      (EndpointVariants(Some(false), Some(true)), "kinesis.us-east-1.api.aws", "sts.us-east-1.api.aws"),
      (EndpointVariants(Some(true), Some(true)), "kinesis-fips.us-east-1.api.aws", "sts-fips.us-east-1.api.aws"))
    cases.zipWithIndex.foreach { case ((variants, kinesisHost, stsHost), i) =>
      RequestLog.recording(Map(kinesisHost -> kinesisMock.endpoint, stsHost -> moto)) {
        callEveryClient(connection(variants, s"$i-${System.nanoTime()}"))
      }
      val requests = RequestLog.requests
      assert(requests.count(r => r.operation == "ListShards" && r.host == kinesisHost) == 3, requests)
      assert(requests.filter(_.service == "Sts").map(_.host).toSet == Set(stsHost), requests)
      assert(requests.forall(r => r.host == kinesisHost || r.host == stsHost), requests)
    }
  }

  test("unset options leave the variant to the SDK's own setting; an explicit endpoint URL wins over it") {
    val stream = freshStream(kinesisMock, "sdk-variants", 1)
    val request = ListShardsRequest.builder().streamName(stream).build()
    val keys = CredentialsConfig.StaticKeys("local-test-key", "local-test-secret", None)
    System.setProperty("aws.useFipsEndpoint", "true")
    try {
      val host = "kinesis-fips.us-east-1.amazonaws.com"
      RequestLog.recording(Map(host -> kinesisMock.endpoint)) {
        val sdk = AwsConnection(Region, None, keys, kinesisMock.cborEnabled, EndpointVariants.Sdk)
        assert(KinesisClients.sync(sdk).listShards(request).shards().size() == 1)
        val explicit = AwsConnection(Region, Some(kinesisMock.endpoint), keys, kinesisMock.cborEnabled,
          EndpointVariants.Sdk)
        assert(KinesisClients.sync(explicit).listShards(request).shards().size() == 1)
      }
      assert(RequestLog.requests.map(_.host) == Seq(host, "127.0.0.1"), RequestLog.requests)
    } finally System.clearProperty("aws.useFipsEndpoint")
  }
}
