package mcp

import (
	"bufio"
	"bytes"
	"errors"
	"io"
)

// errEventTooLarge is returned when one SSE event outgrows its limit.
var errEventTooLarge = errors.New("SSE event exceeds the size limit")

// sseReader yields the data of each event of a text/event-stream body. It
// ignores comment lines, the id, event and retry fields, and events without
// data (priming events), and bounds the size of one event.
type sseReader struct {
	r       *bufio.Reader
	maxData int
	data    bytes.Buffer
	line    []byte
	afterCR bool // the last line ended in CR: an LF next is part of its terminator
}

func newSSEReader(r io.Reader, maxEvent int) *sseReader {
	return &sseReader{r: bufio.NewReaderSize(r, 4096), maxData: maxEvent}
}

// Next returns the data of the next event that has any. At the end of the
// stream it returns io.EOF; an unterminated last event is discarded, as the
// SSE processing model says.
func (s *sseReader) Next() ([]byte, error) {
	s.data.Reset()
	hasData := false
	for {
		line, err := s.readLine()
		if err != nil {
			return nil, err
		}
		if len(line) == 0 {
			// An event whose data buffer is empty is not dispatched
			// (WHATWG SSE processing model): priming events end here.
			if hasData && s.data.Len() > 0 {
				return s.data.Bytes(), nil
			}
			s.data.Reset()
			hasData = false
			continue
		}
		if line[0] == ':' {
			continue
		}
		field, value, _ := bytes.Cut(line, []byte(":"))
		if string(field) != "data" {
			continue
		}
		value = bytes.TrimPrefix(value, []byte(" "))
		if hasData {
			s.data.WriteByte('\n')
		}
		if s.data.Len()+len(value) > s.maxData {
			return nil, errEventTooLarge
		}
		s.data.Write(value)
		hasData = true
	}
}

// readLine returns one line without its terminator, refusing lines longer
// than the event limit. A line ends at LF, CRLF or a lone CR (WHATWG SSE
// "end-of-line"). A CR ends its line at once, without waiting to see
// whether an LF follows: a server may send "data: …\r\r" and then nothing,
// and the event is complete. An LF right after a CR is dropped on the next
// read instead. The returned slice is valid until the next call.
func (s *sseReader) readLine() ([]byte, error) {
	s.line = s.line[:0]
	for {
		if s.r.Buffered() == 0 {
			if _, err := s.r.Peek(1); err != nil {
				if err == io.EOF && len(s.line) > 0 {
					// A last line with no terminator ends no event.
					return nil, io.ErrUnexpectedEOF
				}
				return nil, err
			}
		}
		buf, _ := s.r.Peek(s.r.Buffered())
		if s.afterCR {
			s.afterCR = false
			if buf[0] == '\n' {
				_, _ = s.r.Discard(1)
				continue
			}
		}
		i := bytes.IndexAny(buf, "\r\n")
		n := i
		if i < 0 {
			n = len(buf)
		}
		if len(s.line)+n > s.maxData+len("data: ") {
			return nil, errEventTooLarge
		}
		s.line = append(s.line, buf[:n]...)
		if i < 0 {
			_, _ = s.r.Discard(n)
			continue
		}
		s.afterCR = buf[i] == '\r'
		_, _ = s.r.Discard(i + 1)
		return s.line, nil
	}
}

// limitedReader fails with errResponseTooLarge once more than n bytes have
// been read, instead of silently truncating, and with errRunBudget or
// errDaemonBudget once the run's shared budget or the daemon's pool is
// spent (Budget.take).
type limitedReader struct {
	r      io.Reader
	n      int64
	budget *Budget
}

func (l *limitedReader) Read(p []byte) (int, error) {
	if l.n < 0 {
		return 0, errResponseTooLarge
	}
	if int64(len(p)) > l.n+1 {
		p = p[:l.n+1]
	}
	n, err := l.r.Read(p)
	l.n -= int64(n)
	if l.n < 0 {
		return n, errResponseTooLarge
	}
	if berr := l.budget.take(n); berr != nil {
		return n, berr
	}
	return n, err
}
