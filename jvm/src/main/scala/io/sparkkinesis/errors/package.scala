// Package io.sparkkinesis.errors: Every user-facing error, built in one place (KinesisErrors) as Spark error
// conditions, and the two exception classes users catch. Imports no package of the connector (compat and runtime are
// its peers).
package io.sparkkinesis.errors
