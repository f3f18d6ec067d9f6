// Package yamlsyntax places yaml.v3's syntax errors on the line a person
// would look at, for every file driftd reads as YAML (configs, manifests).
package yamlsyntax

import (
	"bytes"
	"errors"
	"io"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"gopkg.in/yaml.v3"
)

var syntaxLine = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?s)^yaml: line (\d+): (.*)$`) })

// Locate returns the line (1-based, 0 when unknown) and the message of
// err, a syntax error yaml.v3 returned for b, the message without yaml's
// "yaml: line N:" prefix. yaml.v3 names the line where the enclosing
// block began, counted from 0, often lines before the mistake; the line
// returned is the first at which the file stops being YAML with the same
// complaint.
func Locate(b []byte, err error) (line int, msg string) {
	msg = err.Error()
	if m := syntaxLine().FindStringSubmatch(msg); m != nil {
		line, _ = strconv.Atoi(m[1])
		msg = "yaml: " + m[2]
	}
	if l := firstBadLine(b, line, msg); l > 0 {
		line = l
	}
	return line, strings.TrimPrefix(msg, "yaml: ")
}

// scanBudget bounds firstBadLine's work, in bytes parsed: it parses a
// prefix per line, so a huge file keeps yaml's line instead.
const scanBudget = 16 << 20

// firstBadLine returns the first line whose prefix of the file fails to
// parse with msg, starting at yaml's line (the mistake cannot be before
// the block it is in), or 0.
func firstBadLine(b []byte, from int, msg string) int {
	lines := bytes.SplitAfter(b, []byte("\n"))
	end, budget := 0, scanBudget
	for i, l := range lines {
		end += len(l)
		if i+1 < from {
			continue
		}
		if budget -= end; budget < 0 {
			return 0
		}
		if prefixError(b[:end]) == msg {
			return i + 1
		}
	}
	return 0
}

// prefixError is the syntax error in b, without its line, or "".
func prefixError(b []byte) string {
	dec := yaml.NewDecoder(bytes.NewReader(b))
	for {
		var n yaml.Node
		switch err := dec.Decode(&n); {
		case err == nil:
		case errors.Is(err, io.EOF):
			return ""
		default:
			return syntaxLine().ReplaceAllString(err.Error(), "yaml: $2")
		}
	}
}
