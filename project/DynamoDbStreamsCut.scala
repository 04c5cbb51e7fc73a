import java.io.{ByteArrayOutputStream, File, FileOutputStream}
import java.nio.charset.StandardCharsets.{ISO_8859_1, UTF_8}
import java.nio.file.{Files, StandardCopyOption}
import java.util.zip.{ZipEntry, ZipFile, ZipOutputStream}

import scala.collection.JavaConverters._
import scala.collection.mutable

/**
 * The AWS SDK's `dynamodb` module holds two clients: DynamoDB's (about 1,300 model classes) and DynamoDB Streams'
 * (`services/dynamodb/streams/`, which shares DynamoDB's `model/` package). `format("dynamodb-streams")` needs only
 * the second, and the whole module would take every assembly past the project's 20 MB budget. So after
 * sbt-assembly has built a jar, this keeps, of the relocated `services/dynamodb/` classes, only those reachable from
 * the Streams client and from the connector's own classes, following the class names each class file mentions
 * (its constant pool, descriptors and signatures, as slash or dot names), and drops the rest, with the lines of
 * `META-INF/services` files that name a dropped class. Entries keep their order, times and compression, so the
 * build stays reproducible. `DynamoDbStreamsSuite` reads through the assembled jar's client (PackagedJarSuite-style).
 */
object DynamoDbStreamsCut {

  /** Rewrites `jar` in place; answers (entries dropped, bytes before, bytes after). */
  def apply(jar: File, shadePrefix: String): (Int, Long, Long) = {
    val prefix = shadePrefix.replace('.', '/') + "/"
    val base = prefix + "software/amazon/awssdk/services/dynamodb/"
    val names = (base.replace("/", "[/.]") + "[A-Za-z0-9_$/.]+").r
    val zip = new ZipFile(jar)
    val before = jar.length()
    val (dropped, tmp) =
      try {
        val entries = zip.entries().asScala.toVector
        val classes = entries.filter(e => e.getName.endsWith(".class")).map(e => e.getName -> e).toMap
        def bytes(e: ZipEntry): Array[Byte] = {
          val in = zip.getInputStream(e)
          try in.readAllBytes()
          finally in.close()
        }
        def mentioned(name: String): Iterator[String] =
          names.findAllIn(new String(bytes(classes(name)), ISO_8859_1)).flatMap { m =>
            // A name may run on into a member's name (dot form): try it and its shorter dotted prefixes.
            val slashed = m.replace('.', '/')
            Iterator.iterate(slashed)(s => s.substring(0, math.max(s.lastIndexOf('/'), 0)))
              .takeWhile(_.length > base.length).map(_ + ".class").find(classes.contains)
          }
        val roots = classes.keys.filter(n => n.startsWith(base + "streams/") || !n.startsWith(base))
        val reached = mutable.Set[String]()
        val queue = mutable.Queue[String]()
        roots.foreach { r =>
          if (r.startsWith(base)) reached += r
          queue += r
        }
        while (queue.nonEmpty) {
          mentioned(queue.dequeue()).foreach { n =>
            if (!reached.contains(n)) { reached += n; queue += n }
          }
        }
        val drop = classes.keySet.filter(n => n.startsWith(base) && !reached.contains(n))
        val droppedNames = drop.map(n => n.stripSuffix(".class").replace('/', '.'))
        val out = File.createTempFile("dynamodb-cut", ".jar", jar.getParentFile)
        val zos = new ZipOutputStream(new FileOutputStream(out))
        try entries.filterNot(e => drop.contains(e.getName)).foreach { e =>
            val data =
              if (e.getName.startsWith("META-INF/services/") && !e.isDirectory)
                new String(bytes(e), UTF_8).split("\n").filterNot(l => droppedNames.contains(l.trim))
                  .mkString("", "\n", "\n").getBytes(UTF_8)
              else bytes(e)
            val copy = new ZipEntry(e.getName)
            copy.setTime(e.getTime)
            copy.setMethod(e.getMethod)
            if (e.getMethod == ZipEntry.STORED) {
              val crc = new java.util.zip.CRC32()
              crc.update(data)
              copy.setSize(data.length.toLong)
              copy.setCompressedSize(data.length.toLong)
              copy.setCrc(crc.getValue)
            }
            zos.putNextEntry(copy)
            zos.write(data)
            zos.closeEntry()
          }
        finally zos.close()
        (drop.size, out)
      } finally zip.close()
    Files.move(tmp.toPath, jar.toPath, StandardCopyOption.REPLACE_EXISTING)
    (dropped, before, jar.length())
  }
}
