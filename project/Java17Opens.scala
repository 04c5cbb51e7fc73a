/** The --add-opens flags Spark needs on Java 17 (the same list spark-submit passes). */
object Java17Opens {
  val flags: Seq[String] = Seq(
    "java.base/java.lang", "java.base/java.lang.invoke", "java.base/java.lang.reflect", "java.base/java.io",
    "java.base/java.net", "java.base/java.nio", "java.base/java.util", "java.base/java.util.concurrent",
    "java.base/java.util.concurrent.atomic", "java.base/jdk.internal.ref", "java.base/sun.nio.ch",
    "java.base/sun.nio.cs", "java.base/sun.security.action", "java.base/sun.util.calendar"
  ).map(p => s"--add-opens=$p=ALL-UNNAMED") :+ "-Djdk.reflect.useDirectMethodHandle=false" :+
    "-Dio.netty.tryReflectionSetAccessible=true"
}
