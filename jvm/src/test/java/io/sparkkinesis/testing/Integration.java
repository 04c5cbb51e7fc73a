package io.sparkkinesis.testing;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

import org.scalatest.TagAnnotation;

/**
 * Marks a suite that starts a Spark session or a local Kinesis server. The default artifact and the Spark 3.5 /
 * Scala 2.12 one run every suite; the Spark 3.5 / Scala 2.13 artifact, which differs from the 2.12 one only in the
 * Scala library, runs the unit suites alone (build.sbt excludes this tag there), to keep CI short.
 */
@TagAnnotation
@Retention(RetentionPolicy.RUNTIME)
@Target({ElementType.METHOD, ElementType.TYPE})
public @interface Integration {}
