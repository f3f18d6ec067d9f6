package jsonscan

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"
)

// ErrSyntax is returned for malformed input, ErrTooDeep for input nested
// beyond the caller's bound.
var (
	ErrSyntax  = errors.New("malformed JSON")
	ErrTooDeep = errors.New("JSON nested too deeply")
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

// Node is one JSON value of an Index, in document order: a container is
// followed by its members or elements, so the values of a subtree are the
// nodes from the container's index up to its Next.
type Node struct {
	// Start and End delimit the value's bytes in the source.
	Start, End int32
	// Next is the index of the first node after this value's subtree.
	Next int32
	// Len is the number of members of an object (duplicates included) or
	// elements of an array.
	Len int32
	// KeyStart and KeyEnd delimit a member's decoded key in Index.Text.
	// Both are zero for a value that is no member, and KeyEnd is never
	// zero for a member.
	KeyStart, KeyEnd int32
	// TextStart and TextEnd delimit a string's decoded text in Index.Text.
	TextStart, TextEnd int32
	Kind               Kind
}

// Index is a JSON document as encoding/json's Decoder reads it, token by
// token: every value's kind and source bytes (the decoder's InputOffset
// before and after it), every member's key and every string's text as the
// decoder decoded them. Nothing here reads JSON: encoding/json validates
// and decodes every token, and the Index only records where each was. It
// lets the SARIF output map a pointer to a line, and the poison scan walk
// a definition's texts with their pointers. It reads every scalar as a
// value of its own, several times slower than decoding the document
// whole (Decode): where positions are not needed, decode.
type Index struct {
	Src   []byte
	Nodes []Node
	// Text holds the decoded keys and strings; its first byte is padding,
	// so a member's KeyEnd is never zero.
	Text []byte
}

// Reset makes ix an index of b, reusing ix's storage. On error ix holds
// no nodes. b must be exactly one JSON value, with white space around it
// at most; a value nested more than maxDepth levels below the top is
// ErrTooDeep, anything else encoding/json rejects is ErrSyntax.
func (ix *Index) Reset(b []byte, maxDepth int) error {
	ix.Src, ix.Nodes, ix.Text = b, ix.Nodes[:0], append(ix.Text[:0], 0)
	err := ix.walk(b, maxDepth)
	if err != nil {
		ix.Nodes, ix.Text = ix.Nodes[:0], ix.Text[:1]
	}
	return err
}

func (ix *Index) walk(b []byte, maxDepth int) error {
	if len(b) > math.MaxInt32 {
		return ErrSyntax
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var open []int32 // the containers the next token is inside
	var key [2]int32
	for {
		before := dec.InputOffset()
		tok, err := dec.Token()
		if err == io.EOF && len(ix.Nodes) > 0 && len(open) == 0 {
			return nil
		}
		if err != nil {
			return ErrSyntax
		}
		if len(ix.Nodes) > 0 && len(open) == 0 {
			return ErrSyntax // a second value after the first
		}
		end := int32(dec.InputOffset())
		var top *Node
		if len(open) > 0 {
			top = &ix.Nodes[open[len(open)-1]]
		}
		if d, ok := tok.(json.Delim); ok && (d == '}' || d == ']') {
			top.End, top.Next = end, int32(len(ix.Nodes))
			open = open[:len(open)-1]
			continue
		}
		if top != nil && top.Kind == Object && key[1] == 0 {
			key = ix.text(tok.(string)) // the decoder returns keys as strings
			continue
		}
		if len(open) > maxDepth {
			return ErrTooDeep
		}
		n := Node{Start: int32(skipSeparators(b, before)), End: end, KeyStart: key[0], KeyEnd: key[1]}
		key = [2]int32{}
		if top != nil {
			top.Len++
		}
		switch v := tok.(type) {
		case json.Delim:
			n.Kind = Object
			if v == '[' {
				n.Kind = Array
			}
			open = append(open, int32(len(ix.Nodes)))
		case string:
			n.Kind = String
			t := ix.text(v)
			n.TextStart, n.TextEnd = t[0], t[1]
		case json.Number:
			n.Kind = Number
		case bool:
			n.Kind = False
			if v {
				n.Kind = True
			}
		case nil:
			n.Kind = Null
		}
		n.Next = int32(len(ix.Nodes)) + 1
		ix.Nodes = append(ix.Nodes, n)
	}
}

// text appends s to ix.Text and returns where it is.
func (ix *Index) text(s string) [2]int32 {
	start := len(ix.Text)
	ix.Text = append(ix.Text, s...)
	return [2]int32{int32(start), int32(len(ix.Text))}
}

// skipSeparators steps over what lies between the decoder's offset after
// one token and the start of the next: white space, and the ',' and ':'
// the decoder has already checked.
func skipSeparators(b []byte, off int64) int {
	i := int(off)
	for i < len(b) {
		switch b[i] {
		case ' ', '\t', '\n', '\r', ',', ':':
			i++
			continue
		}
		break
	}
	return i
}

// String returns the text of string node i, as encoding/json decodes it.
func (ix *Index) String(i int) []byte {
	n := &ix.Nodes[i]
	return ix.Text[n.TextStart:n.TextEnd]
}

// Key returns the key of member node i, as encoding/json decodes it.
func (ix *Index) Key(i int) []byte {
	n := &ix.Nodes[i]
	return ix.Text[n.KeyStart:n.KeyEnd]
}

// Raw returns the source bytes of node i.
func (ix *Index) Raw(i int) []byte {
	n := &ix.Nodes[i]
	return ix.Src[n.Start:n.End]
}
