package config

import (
	"bytes"
	"errors"
	"io"
	"regexp"
	"strconv"

	"gopkg.in/yaml.v3"
)

var syntaxLine = regexp.MustCompile(`(?s)^yaml: line (\d+): (.*)$`)

// syntaxError is a YAML parse error: the file means nothing, so it is the
// only error reported. yaml.v3 names the line where the enclosing block
// began, counted from 0, often lines before the mistake; the line reported
// is the first at which the file stops being YAML with the same complaint.
func syntaxError(file string, b []byte, err error) error {
	e := &Error{File: file, Msg: err.Error()}
	if m := syntaxLine.FindStringSubmatch(e.Msg); m != nil {
		e.Line, _ = strconv.Atoi(m[1])
		e.Msg = "yaml: " + m[2]
	}
	if l := firstBadLine(b, e.Line, e.Msg); l > 0 {
		e.Line = l
	}
	return e
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
			return syntaxLine.ReplaceAllString(err.Error(), "yaml: $2")
		}
	}
}
