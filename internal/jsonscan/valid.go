package jsonscan

import "math"

// maxNesting is encoding/json's bound on nesting: deeper text is invalid.
const maxNesting = 10000

// Valid reports whether b is one valid JSON value with optional
// surrounding whitespace, exactly as encoding/json.Valid does (fuzzed
// against it: FuzzValid), in about a third of its time: one loop over the
// bytes with an explicit stack instead of a state function per byte.
func Valid(b []byte) bool {
	_, ok := locate(b, -1, nil)
	return ok
}

// A Span locates one value of a JSON text: its bytes and, for an object
// member, its key as written (the string literal, quotes included).
type Span struct {
	Start, End int32
	// KeyStart and KeyEnd delimit a member's key; both are zero for a
	// value that is no member.
	KeyStart, KeyEnd int32
	// Next is the index of the first span after this value's own and its
	// members' or elements'.
	Next int32
}

// Key returns the key literal of a member's span in b.
func (s Span) Key(b []byte) []byte { return b[s.KeyStart:s.KeyEnd] }

// Raw returns the span's value in b.
func (s Span) Raw(b []byte) []byte { return b[s.Start:s.End] }

// Locate is Valid that also locates, in the same single pass, every value
// nested at most depth levels below the top one, so that a caller reads
// members and elements without scanning the text again. The spans are in
// document order, reusing spans' storage: spans[0] is the top value; the
// members or elements of a recorded container i are the spans from i+1,
// each next at the previous one's Next, up to spans[i].Next. On invalid
// JSON ok is false and the spans are meaningless.
func Locate(b []byte, depth int, spans []Span) (_ []Span, ok bool) {
	if len(b) > math.MaxInt32 {
		return spans[:0], false
	}
	return locate(b, max(depth, 0), spans[:0])
}

// locate is Valid, recording spans down to depth when depth >= 0.
func locate(b []byte, depth int, spans []Span) ([]Span, bool) {
	var buf [64]byte
	stack := buf[:0] // the open containers, '{' or '['
	var openBuf [16]int32
	open := openBuf[:0] // with depth >= 0: each open container's span, or -1
	rec := depth >= 0
	var ks, ke int // the key of the value at i, when it is a member
	i := SkipSpace(b, 0)
	for {
		// A value starts at i.
		if i >= len(b) {
			return spans, false
		}
		at := int32(-1)
		if rec && len(stack) <= depth {
			at = int32(len(spans))
			spans = append(spans, Span{Start: int32(i), KeyStart: int32(ks), KeyEnd: int32(ke)})
		}
		switch c := b[i]; {
		case c == '{' || c == '[':
			closing := byte('}')
			if c == '[' {
				closing = ']'
			}
			i = SkipSpace(b, i+1)
			if i < len(b) && b[i] == closing {
				i++
				break
			}
			if len(stack) >= maxNesting {
				return spans, false
			}
			stack = append(stack, c)
			if rec {
				open = append(open, at)
			}
			ks, ke = 0, 0
			if c == '{' {
				var ok bool
				if ks, ke, i, ok = validKey(b, i); !ok {
					return spans, false
				}
			}
			continue
		case c == '"':
			var ok bool
			if i, ok = validString(b, i); !ok {
				return spans, false
			}
		case c == 't':
			if !hasWord(b, i, "true") {
				return spans, false
			}
			i += 4
		case c == 'f':
			if !hasWord(b, i, "false") {
				return spans, false
			}
			i += 5
		case c == 'n':
			if !hasWord(b, i, "null") {
				return spans, false
			}
			i += 4
		case c == '-' || (c >= '0' && c <= '9'):
			var ok bool
			if i, ok = validNumberAt(b, i); !ok {
				return spans, false
			}
		default:
			return spans, false
		}
		if at >= 0 { // a scalar, or an empty container, ended at i
			spans[at].End, spans[at].Next = int32(i), at+1
		}
		// A value ended at i: close containers, or find the next value.
		for {
			i = SkipSpace(b, i)
			if len(stack) == 0 {
				return spans, i == len(b)
			}
			if i >= len(b) {
				return spans, false
			}
			top := stack[len(stack)-1]
			if b[i] == ',' {
				i = SkipSpace(b, i+1)
				if top == '{' {
					var ok bool
					if ks, ke, i, ok = validKey(b, i); !ok {
						return spans, false
					}
				} else {
					ks, ke = 0, 0
				}
				break
			}
			if (top == '{' && b[i] == '}') || (top == '[' && b[i] == ']') {
				stack = stack[:len(stack)-1]
				i++
				if rec {
					if at := open[len(open)-1]; at >= 0 {
						spans[at].End, spans[at].Next = int32(i), int32(len(spans))
					}
					open = open[:len(open)-1]
				}
				continue
			}
			return spans, false
		}
	}
}

// validKey checks `"key" :` at i and returns where the key's literal
// starts and ends and the index of the value after it.
func validKey(b []byte, i int) (ks, ke, next int, ok bool) {
	if i >= len(b) || b[i] != '"' {
		return 0, 0, i, false
	}
	ks = i
	if ke, ok = validString(b, i); !ok {
		return 0, 0, ke, false
	}
	i = SkipSpace(b, ke)
	if i >= len(b) || b[i] != ':' {
		return 0, 0, i, false
	}
	return ks, ke, SkipSpace(b, i+1), true
}

// validString checks the string whose quote is at i and returns the index
// just past it. Control characters must be escaped; other bytes, invalid
// UTF-8 included, are accepted, as encoding/json accepts them.
func validString(b []byte, i int) (int, bool) {
	for i++; i < len(b); i++ {
		if i = plainRun(b, i); i >= len(b) {
			break
		}
		switch c := b[i]; {
		case c == '"':
			return i + 1, true
		case c < 0x20:
			return i, false
		case c == '\\':
			i++
			if i >= len(b) {
				return i, false
			}
			switch b[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if i+4 >= len(b) {
					return i, false
				}
				for _, h := range b[i+1 : i+5] {
					if !isHex(h) {
						return i, false
					}
				}
				i += 4
			default:
				return i, false
			}
		}
	}
	return i, false
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

func hasWord(b []byte, i int, word string) bool {
	return len(b)-i >= len(word) && string(b[i:i+len(word)]) == word
}

// validNumberAt checks the number at i by JSON's grammar and returns the
// index just past it; what follows is the caller's to check.
func validNumberAt(b []byte, i int) (int, bool) {
	digits := func() bool {
		start := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		return i > start
	}
	if b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		digits()
	default:
		return i, false
	}
	if i < len(b) && b[i] == '.' {
		i++
		if !digits() {
			return i, false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if !digits() {
			return i, false
		}
	}
	return i, true
}
