package mcp

import (
	"errors"
	"io"
	"strings"
	"testing"
	"time"
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

// TestSSEReaderLineEndings: LF, CRLF and a lone CR each end a line (WHATWG
// SSE), in any mix, and a CR directly followed by an LF is one terminator.
func TestSSEReaderLineEndings(t *testing.T) {
	want := []string{"{\"a\":\n1}", "{\"b\":2}"}
	for name, stream := range map[string]string{
		"LF":    ": c\nid: 0\n\ndata: {\"a\":\ndata: 1}\n\ndata: {\"b\":2}\n\n",
		"CRLF":  ": c\r\nid: 0\r\n\r\ndata: {\"a\":\r\ndata: 1}\r\n\r\ndata: {\"b\":2}\r\n\r\n",
		"CR":    ": c\rid: 0\r\rdata: {\"a\":\rdata: 1}\r\rdata: {\"b\":2}\r\r",
		"mixed": ": c\rid: 0\n\r\ndata: {\"a\":\r\ndata: 1}\r\n\ndata: {\"b\":2}\n\r",
	} {
		got, err := readEvents(newSSEReader(strings.NewReader(stream), 1024))
		if err != io.EOF || strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("%s: events = %q, %v; want %q, EOF", name, got, err, want)
		}
	}
}

// TestSSEReaderCRDoesNotWait: an event ended by CRs is dispatched at once,
// even when the server then sends nothing more.
func TestSSEReaderCRDoesNotWait(t *testing.T) {
	pr, pw := io.Pipe()
	defer pw.Close()
	go func() { _, _ = pw.Write([]byte("data: x\r\r")) }()
	got := make(chan string, 1)
	go func() {
		d, _ := newSSEReader(pr, 1024).Next()
		got <- string(d)
	}()
	select {
	case d := <-got:
		if d != "x" {
			t.Fatalf("event = %q, want x", d)
		}
	case <-time.After(2 * time.Second):
		pr.Close()
		<-got
		t.Fatal("the reader waited for a byte after the CR")
	}
}

// readEvents reads every event until the first error, which it returns.
func readEvents(r *sseReader) ([]string, error) {
	var got []string
	for {
		d, err := r.Next()
		if err != nil {
			return got, err
		}
		got = append(got, string(d))
	}
}

// FuzzSSEReader checks that the reader terminates, bounds every event, and
// reads a stream exactly as it reads the same stream with every line
// ending (CRLF, CR) rewritten to LF.
func FuzzSSEReader(f *testing.F) {
	f.Add("data: {}\n\n")
	f.Add(": c\n\ndata: a\r\ndata: b\r\n\r\n")
	f.Add("data")
	f.Add("data: a\rdata: b\r\r")
	f.Add(": c\rid: 1\r\rdata: {}\r\r")
	f.Add("data: a\r\n\rdata: b\n\r\n")
	f.Add("data: a\r")
	f.Add("data: x\r\r\n\n\r")
	f.Fuzz(func(t *testing.T, s string) {
		got, gotErr := readAll(t, s)
		lf := strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\r", "\n")
		want, wantErr := readAll(t, lf)
		if strings.Join(got, "\x00") != strings.Join(want, "\x00") || errors.Is(gotErr, errEventTooLarge) != errors.Is(wantErr, errEventTooLarge) {
			t.Fatalf("%q: %q, %v; with LF line endings %q, %v", s, got, gotErr, want, wantErr)
		}
	})
}

func readAll(t *testing.T, s string) ([]string, error) {
	r := newSSEReader(strings.NewReader(s), 256)
	var got []string
	for i := 0; i < len(s)+2; i++ {
		d, err := r.Next()
		if err != nil {
			return got, err
		}
		if len(d) > 256 {
			t.Fatalf("event of %d bytes passed a 256-byte limit", len(d))
		}
		got = append(got, string(d))
	}
	t.Fatal("reader did not terminate")
	return nil, nil
}
