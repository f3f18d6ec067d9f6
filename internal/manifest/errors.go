package manifest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Error is a manifest that does not parse, printed FILE:LINE:COLUMN:
// message (the line and column when known), as compilers print errors.
type Error struct {
	Path   string
	Line   int // 1-based; 0 when the problem has no one place
	Column int // 1-based, in characters; 0 when unknown
	Msg    string
}

// Error implements error.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.Path)
	if b.Len() == 0 {
		b.WriteString("<manifest>")
	}
	if e.Line > 0 {
		b.WriteString(":" + strconv.Itoa(e.Line))
		if e.Column > 0 {
			b.WriteString(":" + strconv.Itoa(e.Column))
		}
	}
	b.WriteString(": " + e.Msg)
	return b.String()
}

// expectations turn encoding/json's scanner contexts into what the file
// should have had there; the first that the message contains applies.
var expectations = []struct{ context, want string }{
	{"looking for beginning of value", "a value"},
	{"looking for beginning of object key string", `a "key" in double quotes`},
	{"after object key:value pair", "',' or '}'"},
	{"after object key", "':' after the key"},
	{"after array element", "',' or ']'"},
	{"after top-level value", "the end of the file after the value"},
	{"in string literal", `a character allowed in a string (control characters are escaped, as \n)`},
	{"in string escape code", `an escape: \" \\ \/ \b \f \n \r \t or \uXXXX`},
	{`in \u hexadecimal character escape`, `four hex digits after \u`},
	{"numeric literal", "a digit"},
	{"in literal", "a value"},
}

// jsonError says where b stops being JSON and what was expected there.
func jsonError(b []byte, se *json.SyntaxError) *Error {
	if len(bytes.TrimSpace(b)) == 0 {
		return &Error{Msg: "not valid JSON: the file is empty"}
	}
	at := int(se.Offset) - 1 // Offset counts the bytes read, the offending one included
	if at < 0 || at >= len(b) || se.Error() == "unexpected end of JSON input" {
		line, col := position(b, len(b))
		return &Error{Line: line, Column: col, Msg: "not valid JSON: " + unclosed(b)}
	}
	want := ""
	for _, e := range expectations {
		if strings.Contains(se.Error(), e.context) {
			want = e.want
			break
		}
	}
	if want == "" {
		line, col := position(b, at)
		return &Error{Line: line, Column: col, Msg: "not valid JSON: " + se.Error()}
	}
	start := at
	if want == "a value" {
		// A bare word (hello, or tru meant as true): report it whole.
		for start > 0 && isWordByte(b[start-1]) {
			start--
		}
	}
	end := start
	for end < len(b) && isWordByte(b[end]) {
		end++
	}
	found, hint := "", ""
	if want == "a value" && end-start > 1 {
		found, hint = string(b[start:end]), `: a string needs "double quotes"`
	} else {
		r, _ := utf8.DecodeRune(b[start:])
		found = strconv.QuoteRune(r)
		if (r == '}' || r == ']') && previousByte(b, start) == ',' {
			hint = ": a trailing comma is not allowed"
		}
	}
	line, col := position(b, start)
	return &Error{Line: line, Column: col, Msg: fmt.Sprintf("not valid JSON: expected %s, found %s%s", want, found, hint)}
}

func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.'
}

// previousByte is the last non-space byte before i, or 0.
func previousByte(b []byte, i int) byte {
	if t := bytes.TrimRight(b[:i], " \t\r\n"); len(t) > 0 {
		return t[len(t)-1]
	}
	return 0
}

// unclosed says what is still open at the end of b: the innermost string,
// object or array, and where it began.
func unclosed(b []byte) string {
	var open []int // offsets of the { and [ not yet closed
	str := -1      // offset of the string being read, or -1
	for i := 0; i < len(b); i++ {
		switch c := b[i]; {
		case str >= 0 && c == '\\':
			i++
		case str >= 0 && c == '"':
			str = -1
		case str >= 0:
		case c == '"':
			str = i
		case c == '{' || c == '[':
			open = append(open, i)
		case (c == '}' || c == ']') && len(open) > 0:
			open = open[:len(open)-1]
		}
	}
	switch {
	case str >= 0:
		line, col := position(b, str)
		return fmt.Sprintf("the file ends inside the string begun at %d:%d; expected its closing '\"'", line, col)
	case len(open) > 0:
		i := open[len(open)-1]
		closing := map[byte]string{'{': "'}'", '[': "']'"}[b[i]]
		line, col := position(b, i)
		return fmt.Sprintf("the file ends before the '%c' at %d:%d is closed; expected a value or %s", b[i], line, col, closing)
	}
	return "the file ends in the middle of a value"
}

// position is the 1-based line and column (in characters) of offset in b.
func position(b []byte, offset int) (line, col int) {
	line, col = 1, 1
	for _, c := range b[:max(0, min(offset, len(b)))] {
		switch {
		case c == '\n':
			line, col = line+1, 1
		case c&0xC0 != 0x80: // not a UTF-8 continuation byte
			col++
		}
	}
	return line, col
}
