// Package io.sparkkinesis.runtime: What the connector's code runs on in a JVM: its named daemon threads. Imports no
// package of the connector.
package io.sparkkinesis.runtime
