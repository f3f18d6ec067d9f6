package config

import "github.com/driftd/driftd/internal/yamlsyntax"

// syntaxError is a YAML parse error: the file means nothing, so it is the
// only error reported, on the line yamlsyntax finds.
func syntaxError(file string, b []byte, err error) error {
	line, msg := yamlsyntax.Locate(b, err)
	return &Error{File: file, Line: line, Msg: "yaml: " + msg}
}
