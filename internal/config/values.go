package config

import (
	"fmt"
	"regexp"
	"strconv"

	"github.com/alecthomas/units"
	"gopkg.in/yaml.v3"
)

// Regexp is a regular expression compiled while decoding. It is not
// anchored for you: '(^|\.)corp\.example\.com$' means what it says.
type Regexp struct {
	*regexp.Regexp
}

// UnmarshalYAML compiles the pattern; a compile error is a config error
// with its line.
func (r *Regexp) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return nodeError(n, "want a regular expression string")
	}
	re, err := regexp.Compile(n.Value)
	if err != nil {
		return nodeError(n, "%q: %v", n.Value, err)
	}
	r.Regexp = re
	return nil
}

// MarshalYAML prints the pattern as written.
func (r Regexp) MarshalYAML() (any, error) {
	if r.Regexp == nil {
		return nil, nil
	}
	return r.String(), nil
}

// ByteSize is a size in bytes written with a base-2 unit ("16MiB", "512KiB";
// KB means KiB, as in alecthomas/units) or as a bare number of bytes. It
// prints back as written.
type ByteSize struct {
	n   int64
	src string
}

// ParseByteSize parses s.
func ParseByteSize(s string) (ByteSize, error) {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return ByteSize{n, s}, nil
	}
	b, err := units.ParseBase2Bytes(s)
	if err != nil {
		return ByteSize{}, fmt.Errorf("want a size such as 16MiB: %w", err)
	}
	return ByteSize{int64(b), s}, nil
}

// NewByteSize returns a size of n bytes, printed in canonical units.
func NewByteSize(n int64) ByteSize { return ByteSize{n: n} }

// Bytes returns the size in bytes.
func (b ByteSize) Bytes() int64 { return b.n }

// String returns the size as written, or in canonical units if it was not
// parsed from text.
func (b ByteSize) String() string {
	if b.src != "" {
		return b.src
	}
	return units.Base2Bytes(b.n).String()
}

// IsZero reports whether the size is unset.
func (b ByteSize) IsZero() bool { return b.n == 0 && b.src == "" }

// UnmarshalYAML parses the size while decoding.
func (b *ByteSize) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return nodeError(n, "want a size such as 16MiB")
	}
	if n.Value == "" {
		*b = ByteSize{}
		return nil
	}
	p, err := ParseByteSize(n.Value)
	if err != nil {
		return nodeError(n, "%q: %v", n.Value, err)
	}
	*b = p
	return nil
}

// MarshalYAML prints the size as written.
func (b ByteSize) MarshalYAML() (any, error) { return b.String(), nil }

// nodeError is a decoding error at n. It is a *yaml.TypeError so that
// decoding goes on and every problem is reported; the column lets Parse
// find the field it belongs to (see positions).
func nodeError(n *yaml.Node, format string, args ...any) *yaml.TypeError {
	return &yaml.TypeError{Errors: []string{fmt.Sprintf("line %d: column %d: %s", n.Line, n.Column, fmt.Sprintf(format, args...))}}
}
