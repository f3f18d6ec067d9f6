// Package driftd holds the files the binary embeds: the example
// configuration that `driftd demo` runs, and its manifests.
package driftd

import "embed"

// Demo is config.example.yaml and the example files it refers to.
//
//go:embed config.example.yaml examples
var Demo embed.FS
