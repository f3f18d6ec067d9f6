package jsonscan

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"math"
	"math/bits"
	"slices"
	"unicode/utf8"
)

// Kind is the kind of a JSON value in an Index.
type Kind uint8

// The kinds of JSON values.
const (
	Null Kind = iota
	False
	True
	Number
	String
	Array
	Object
)

// Flags of an index node.
const (
	// TextDecoded marks a string whose text differs from its source bytes
	// (escapes, or invalid UTF-8 replaced as encoding/json replaces it):
	// its text is in Index.Text.
	TextDecoded uint8 = 1 << iota
	// KeyDecoded marks a member whose key's text is in Index.Text.
	KeyDecoded
)

// Node is one JSON value of an Index, in document order: a container is
// followed by its members or elements, so the values of a subtree are the
// nodes from the container's index up to its Next.
type Node struct {
	// Start and End delimit the value's bytes in the source.
	Start, End int32
	// Next is the index of the first node after this value's subtree.
	Next int32
	// Len is the number of members of an object (duplicates included) or
	// elements of an array; for a TextDecoded string, the index of its
	// text's span in Spans.
	Len int32
	// KeyStart and KeyEnd delimit a member's key text, without quotes: in
	// the source, or in Text when KeyDecoded is set. Both are zero for a
	// value that is no member, and KeyEnd is never zero for a member.
	KeyStart, KeyEnd int32
	Kind             Kind
	Flags            uint8
}

// Index is a JSON document located in one pass: every value's kind and
// bytes, every member's key, nothing decoded that did not need decoding.
// It accepts and rejects exactly what Parse does, with the same errors,
// and holds the same values; it exists so the schema diff can compare
// subtrees by their bytes and decode only what differs, without building a
// map per object.
type Index struct {
	Src   []byte
	Nodes []Node
	// Text holds the decoded texts of strings and keys that needed
	// decoding (TextDecoded, KeyDecoded); Spans holds where each decoded
	// string's text starts and ends in Text.
	Text  []byte
	Spans [][2]int32

	maxDepth int
}

// Reset makes ix an index of b, reusing ix's storage. On error ix holds
// no nodes. A value nested more than maxDepth levels below the top is
// ErrTooDeep, as in Parse.
func (ix *Index) Reset(b []byte, maxDepth int) error { return ix.reset(b, maxDepth, nil) }

// ResetLike is Reset for a document that is probably much like one
// already indexed, as a served schema is like the declared one: an object
// or array whose bytes equal those of its counterpart in like is copied
// from like instead of scanned. Counterparts are found from the top down,
// array elements by position and object members by key (looking a few
// members ahead), so they sit at the same depth and the copy holds exactly
// what a scan would find. The result is the index Reset builds; like only
// saves work.
func (ix *Index) ResetLike(b []byte, maxDepth int, like *Index) error {
	if like == nil || like.maxDepth != maxDepth || len(like.Nodes) == 0 {
		like = nil
	}
	return ix.reset(b, maxDepth, like)
}

func (ix *Index) reset(b []byte, maxDepth int, like *Index) error {
	ix.Src, ix.Nodes, ix.Text, ix.Spans, ix.maxDepth = b, ix.Nodes[:0], ix.Text[:0], ix.Spans[:0], maxDepth
	if len(b) > math.MaxInt32 {
		return ErrSyntax
	}
	s := indexer{ix: ix, nodes: ix.Nodes, b: b, maxDepth: maxDepth, like: like}
	pair := int32(-1)
	if like != nil {
		pair = 0
	}
	err := s.value(0, pair)
	if err == nil {
		s.space()
		if s.i != len(b) {
			err = ErrSyntax
		}
	}
	ix.Nodes = s.nodes
	if err != nil {
		ix.Nodes, ix.Text, ix.Spans = ix.Nodes[:0], ix.Text[:0], ix.Spans[:0]
	}
	return err
}

// String returns the text of string node i (what Parse decodes it to).
func (ix *Index) String(i int) []byte {
	n := &ix.Nodes[i]
	if n.Flags&TextDecoded != 0 {
		sp := ix.Spans[n.Len]
		return ix.Text[sp[0]:sp[1]]
	}
	return ix.Src[n.Start+1 : n.End-1]
}

// Key returns the key text of member node i.
func (ix *Index) Key(i int) []byte {
	n := &ix.Nodes[i]
	if n.Flags&KeyDecoded != 0 {
		return ix.Text[n.KeyStart:n.KeyEnd]
	}
	return ix.Src[n.KeyStart:n.KeyEnd]
}

// Raw returns the source bytes of node i.
func (ix *Index) Raw(i int) []byte {
	n := &ix.Nodes[i]
	return ix.Src[n.Start:n.End]
}

type indexer struct {
	ix       *Index
	like     *Index
	nodes    []Node
	b        []byte
	i        int
	maxDepth int
}

func (s *indexer) space() {
	for s.i < len(s.b) && s.b[s.i] <= ' ' && isSpace(s.b[s.i]) {
		s.i++
	}
}

// value indexes the value at s.i; pair is its counterpart in s.like, or
// -1.
func (s *indexer) value(depth int, pair int32) error {
	if depth > s.maxDepth {
		return ErrTooDeep
	}
	s.space()
	if s.i >= len(s.b) {
		return ErrSyntax
	}
	c := s.b[s.i]
	if pair >= 0 {
		switch k := s.like.Nodes[pair].Kind; {
		case k == Object && c == '{', k == Array && c == '[':
			if raw := s.like.Raw(int(pair)); bytes.HasPrefix(s.b[s.i:], raw) {
				s.copyLike(pair)
				return nil
			}
		default:
			pair = -1
		}
	}
	at := len(s.nodes)
	s.nodes = append(s.nodes, Node{Start: int32(s.i)})
	var err error
	switch {
	case c == '{':
		s.nodes[at].Kind = Object
		err = s.object(at, depth, pair)
	case c == '[':
		s.nodes[at].Kind = Array
		err = s.array(at, depth, pair)
	case c == '"':
		s.nodes[at].Kind = String
		var start, end int32
		var decoded bool
		if start, end, decoded, err = s.string(); decoded {
			s.nodes[at].Flags |= TextDecoded
			s.nodes[at].Len = int32(len(s.ix.Spans))
			s.ix.Spans = append(s.ix.Spans, [2]int32{start, end})
		}
	case c == 't':
		s.nodes[at].Kind = True
		err = s.literal("true")
	case c == 'f':
		s.nodes[at].Kind = False
		err = s.literal("false")
	case c == 'n':
		s.nodes[at].Kind = Null
		err = s.literal("null")
	case c == '-' || (c >= '0' && c <= '9'):
		s.nodes[at].Kind = Number
		err = s.number()
	default:
		err = ErrSyntax
	}
	if err != nil {
		return err
	}
	n := &s.nodes[at]
	n.End, n.Next = int32(s.i), int32(len(s.nodes))
	return nil
}

func (s *indexer) literal(word string) error {
	if len(s.b)-s.i < len(word) || string(s.b[s.i:s.i+len(word)]) != word {
		return ErrSyntax
	}
	s.i += len(word)
	return nil
}

// copyLike appends like's subtree at pair, found at s.i, as a scan would
// have indexed it: moved to s.i, its decoded texts appended to Text. The
// caller sets the key of its top node.
func (s *indexer) copyLike(pair int32) {
	like, top := s.like, s.like.Nodes[pair]
	src := like.Nodes[pair:top.Next]
	delta, moved := int32(s.i)-top.Start, int32(len(s.nodes))-pair
	at := len(s.nodes)
	s.nodes = slices.Grow(s.nodes, len(src))[:at+len(src)]
	dst := s.nodes[at:]
	copy(dst, src)
	dst[0].KeyStart, dst[0].KeyEnd, dst[0].Flags = 0, 0, dst[0].Flags&^KeyDecoded // the caller's key, not like's
	for k := range dst {
		n := &dst[k]
		n.Start, n.End, n.Next = n.Start+delta, n.End+delta, n.Next+moved
		switch {
		case n.Flags&(KeyDecoded|TextDecoded) != 0:
			s.decodedLike(n, delta)
		case n.KeyEnd != 0: // a member; its key is in the source
			n.KeyStart, n.KeyEnd = n.KeyStart+delta, n.KeyEnd+delta
		}
	}
	s.i += int(top.End - top.Start)
}

// decodedLike appends the decoded key and text of a node copied from
// like to Text, in the order a scan appends them.
func (s *indexer) decodedLike(n *Node, delta int32) {
	switch {
	case n.Flags&KeyDecoded != 0:
		n.KeyStart, n.KeyEnd = appendText(s, s.like.Text[n.KeyStart:n.KeyEnd])
	case n.KeyEnd != 0:
		n.KeyStart, n.KeyEnd = n.KeyStart+delta, n.KeyEnd+delta
	}
	if n.Flags&TextDecoded != 0 {
		sp := s.like.Spans[n.Len]
		start, end := appendText(s, s.like.Text[sp[0]:sp[1]])
		n.Len = int32(len(s.ix.Spans))
		s.ix.Spans = append(s.ix.Spans, [2]int32{start, end})
	}
}

// lookAhead is how many of a counterpart object's members are tried for
// the next member's key.
const lookAhead = 4

func (s *indexer) object(at, depth int, pair int32) error {
	s.i++ // {
	s.space()
	if s.i < len(s.b) && s.b[s.i] == '}' {
		s.i++
		return nil
	}
	members := int32(0)
	cursor, end := pair+1, int32(-1) // the counterpart's next member
	if pair >= 0 {
		end = s.like.Nodes[pair].Next
	}
	for {
		s.space()
		if s.i >= len(s.b) || s.b[s.i] != '"' {
			return ErrSyntax
		}
		ks, ke, kDecoded, err := s.string()
		if err != nil {
			return err
		}
		s.space()
		if s.i >= len(s.b) || s.b[s.i] != ':' {
			return ErrSyntax
		}
		s.i++
		counterpart := int32(-1)
		if pair >= 0 {
			key := s.ix.Text // a decoded key's offsets are into Text, and may lie past Src's end
			if !kDecoded {
				key = s.ix.Src
			}
			key = key[ks:ke]
			for j, tries := cursor, 0; j < end && tries < lookAhead; j, tries = s.like.Nodes[j].Next, tries+1 {
				if bytes.Equal(s.like.Key(int(j)), key) {
					counterpart, cursor = j, s.like.Nodes[j].Next
					break
				}
			}
		}
		member := len(s.nodes)
		if err := s.value(depth+1, counterpart); err != nil {
			return err
		}
		n := &s.nodes[member]
		n.KeyStart, n.KeyEnd = ks, ke
		if kDecoded {
			n.Flags |= KeyDecoded
		}
		members++
		if done, err := s.next('}'); err != nil {
			return err
		} else if done {
			s.nodes[at].Len = members
			return nil
		}
	}
}

func (s *indexer) array(at, depth int, pair int32) error {
	s.i++ // [
	s.space()
	if s.i < len(s.b) && s.b[s.i] == ']' {
		s.i++
		return nil
	}
	elements := int32(0)
	counterpart, end := pair+1, int32(-1)
	if pair >= 0 {
		end = s.like.Nodes[pair].Next
	}
	for {
		if counterpart >= end {
			counterpart = -1
		}
		if err := s.value(depth+1, counterpart); err != nil {
			return err
		}
		if counterpart >= 0 {
			counterpart = s.like.Nodes[counterpart].Next
		}
		elements++
		if done, err := s.next(']'); err != nil {
			return err
		} else if done {
			s.nodes[at].Len = elements
			return nil
		}
	}
}

func (s *indexer) next(closing byte) (done bool, err error) {
	s.space()
	if s.i >= len(s.b) {
		return false, ErrSyntax
	}
	switch s.b[s.i] {
	case ',':
		s.i++
		return false, nil
	case closing:
		s.i++
		return true, nil
	}
	return false, ErrSyntax
}

// string reads the string at s.i and returns where its text is: in the
// source, or (decoded) appended to the index's Text.
func (s *indexer) string() (start, end int32, decoded bool, err error) {
	open := s.i
	s.i++
	escaped, high := false, false
	for s.i < len(s.b) {
		s.skipPlain()
		if s.i >= len(s.b) {
			break
		}
		c := s.b[s.i]
		switch {
		case c == '"':
			s.i++
			raw := s.b[open:s.i]
			switch {
			case !escaped && (!high || utf8.Valid(raw)):
				return int32(open + 1), int32(s.i - 1), false, nil
			case !escaped:
				start, end = appendText(s, string([]rune(string(raw[1:len(raw)-1]))))
				return start, end, true, nil
			}
			var str string
			if err := json.Unmarshal(raw, &str); err != nil {
				return 0, 0, false, ErrSyntax
			}
			start, end = appendText(s, str)
			return start, end, true, nil
		case c == '\\':
			escaped = true
			s.i += 2
		case c < 0x20:
			return 0, 0, false, ErrSyntax
		default:
			high = high || c >= utf8.RuneSelf
			s.i++
		}
	}
	return 0, 0, false, ErrSyntax
}

// skipPlain advances to the next byte a string scan must look at
// (plainRun).
func (s *indexer) skipPlain() { s.i = plainRun(s.b, s.i) }

// plainRun returns the index of the first byte at or after i that a string
// scan must look at: the closing quote, an escape, a control character or
// a non-ASCII byte (len(b) if none). It reads eight bytes at a time: the
// lowest byte stopMask flags is always a true stop, since a borrow only
// runs towards higher bytes.
func plainRun(b []byte, i int) int {
	for ; i+8 <= len(b); i += 8 {
		if m := stopMask(binary.LittleEndian.Uint64(b[i:])); m != 0 {
			return i + bits.TrailingZeros64(m)>>3
		}
	}
	for i < len(b) && !stringStop[b[i]] {
		i++
	}
	return i
}

// stopMask sets the high bit of each byte of x that is '"', '\\', below
// 0x20 or above 0x7f (and possibly of bytes above such a byte).
func stopMask(x uint64) uint64 {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	zero := func(v uint64) uint64 { return (v - ones) & ^v }
	return (zero(x^(ones*'"')) | zero(x^(ones*'\\')) | (x-ones*0x20)&^x | x) & highs
}

// stringStop marks the bytes a string scan must look at: the closing
// quote, an escape, control characters and non-ASCII bytes.
var stringStop = func() (t [256]bool) {
	for c := range t {
		t[c] = c == '"' || c == '\\' || c < 0x20 || c >= utf8.RuneSelf
	}
	return t
}()

// appendText appends a decoded text to the index's Text and returns where
// it is.
func appendText[T string | []byte](s *indexer, text T) (start, end int32) {
	start = int32(len(s.ix.Text))
	s.ix.Text = append(s.ix.Text, text...)
	return start, int32(len(s.ix.Text))
}

// number reads a number; the JSON grammar (validNumber) is what Parse
// checks, since every number it accepts also parses as a float64 or is out
// of its range, which Parse accepts too.
func (s *indexer) number() error {
	start := s.i
	for s.i < len(s.b) {
		switch c := s.b[s.i]; {
		case c >= '0' && c <= '9', c == '-', c == '+', c == '.', c == 'e', c == 'E':
			s.i++
			continue
		}
		break
	}
	if !validNumber(string(s.b[start:s.i])) {
		return ErrSyntax
	}
	return nil
}
