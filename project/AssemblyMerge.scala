import sbtassembly.{CustomMergeStrategy, MergeStrategy, PathList}

/** How files that several jars share are merged into the assembly. */
object AssemblyMerge {
  def strategy(shadePrefix: String): String => MergeStrategy = {
    // Netty's BlockHound hook names a class of an optional tool no Spark deployment loads.
    case PathList("META-INF", "services", "reactor.blockhound.integration.BlockHoundIntegration") => MergeStrategy.discard
    // Service registrations (ours: DataSourceRegister; the SDK's: HTTP client SPIs) are kept and merged.
    case PathList("META-INF", "services", _*) => MergeStrategy.filterDistinctLines
    // Netty looks up its native libraries by a name derived from its (relocated) package.
    case PathList("META-INF", "native", lib) if lib.startsWith("libnetty") || lib.startsWith("netty") =>
      val mangled = shadePrefix.replace('.', '_') + "_"
      CustomMergeStrategy.rename(_ => s"META-INF/native/lib$mangled${lib.stripPrefix("lib")}")
    case PathList("META-INF", "io.netty.versions.properties") => MergeStrategy.concat
    case PathList("META-INF", "native-image", _*) => MergeStrategy.discard
    case "module-info.class" => MergeStrategy.discard
    case PathList("META-INF", "versions", _, "module-info.class") => MergeStrategy.discard
    case PathList("META-INF", f) if f.endsWith(".SF") || f.endsWith(".DSA") || f.endsWith(".RSA") => MergeStrategy.discard
    case PathList("META-INF", "MANIFEST.MF") | PathList("META-INF", "INDEX.LIST") => MergeStrategy.discard
    case PathList("META-INF", f) if f.toUpperCase.startsWith("LICENSE") || f.toUpperCase.startsWith("NOTICE") =>
      MergeStrategy.concat
    case PathList("codegen-resources", _*) => MergeStrategy.discard
    case _ => MergeStrategy.deduplicate
  }
}
