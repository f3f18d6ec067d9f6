package mcp

import (
	"errors"
	"io"
	"strings"
	"testing"
)

func TestSSEReader(t *testing.T) {
	stream := ": a comment\n" +
		"id: 0\n\n" + // priming event: no data
		"data:\n\n" + // empty data event
		"event: message\r\ndata: {\"a\":\r\ndata: 1}\r\n\r\n" +
		"retry: 10\ndata:{\"b\":2}\n\n" +
		"data: tail-without-blank-line\n"
	r := newSSEReader(strings.NewReader(stream), 1024)
	var got []string
	for {
		d, err := r.Next()
		if err != nil {
			if !errors.Is(err, io.ErrUnexpectedEOF) && err != io.EOF {
				t.Fatalf("Next: %v", err)
			}
			break
		}
		got = append(got, string(d))
	}
	want := []string{"{\"a\":\n1}", "{\"b\":2}"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("events = %q, want %q", got, want)
	}
}

func TestSSEReaderEventLimit(t *testing.T) {
	big := "data: " + strings.Repeat("x", 5000) + "\n\n"
	r := newSSEReader(strings.NewReader(big), 1024)
	if _, err := r.Next(); !errors.Is(err, errEventTooLarge) {
		t.Fatalf("err = %v, want errEventTooLarge", err)
	}
	many := strings.Repeat("data: 0123456789\n", 200) + "\n"
	r = newSSEReader(strings.NewReader(many), 1024)
	if _, err := r.Next(); !errors.Is(err, errEventTooLarge) {
		t.Fatalf("many lines: err = %v, want errEventTooLarge", err)
	}
}

func FuzzSSEReader(f *testing.F) {
	f.Add("data: {}\n\n")
	f.Add(": c\n\ndata: a\r\ndata: b\r\n\r\n")
	f.Add("data")
	f.Fuzz(func(t *testing.T, s string) {
		r := newSSEReader(strings.NewReader(s), 256)
		for i := 0; i < len(s)+2; i++ {
			d, err := r.Next()
			if err != nil {
				return
			}
			if len(d) > 256 {
				t.Fatalf("event of %d bytes passed a 256-byte limit", len(d))
			}
		}
		t.Fatal("reader did not terminate")
	})
}
