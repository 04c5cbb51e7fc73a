// Package io.sparkkinesis.compat: Differences between Spark lines and Scala versions (the version folders hold the
// rest of this package) and the few Spark-internal calls, isolated here. Imports no package of the connector (errors
// and runtime are its peers).
package io.sparkkinesis.compat
