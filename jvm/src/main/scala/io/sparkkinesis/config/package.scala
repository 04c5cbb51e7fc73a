// Package io.sparkkinesis.config: Options: the typed registry (KinesisOptions, which also generates
// docs/options.md), parsing and checks (ParsedOptions), other connectors' names translated (ForeignOptions,
// OptionNormalizer). May import runtime, compat, errors.
package io.sparkkinesis.config
