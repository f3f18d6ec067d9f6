package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
)

// runLog follows a daemon's JSON log and counts its finished runs per
// target: a far cheaper signal than scraping /metrics of 10,000 targets,
// which would load the daemon being measured. A "run failed" line is a
// harness failure (every probe of the bench server must succeed).
type runLog struct {
	path     string
	offset   int64
	partial  []byte
	finished map[string]int
	total    int
}

func newRunLog(path string) *runLog { return &runLog{path: path, finished: map[string]int{}} }

// update reads what the daemon logged since the last call.
func (l *runLog) update() error {
	f, err := os.Open(l.path)
	if err != nil {
		return err
	}
	defer f.Close()
	if _, err := f.Seek(l.offset, io.SeekStart); err != nil {
		return err
	}
	b, err := io.ReadAll(f)
	if err != nil {
		return err
	}
	l.offset += int64(len(b))
	b = append(l.partial, b...)
	end := bytes.LastIndexByte(b, '\n')
	if end < 0 {
		l.partial = b
		return nil
	}
	l.partial = append([]byte(nil), b[end+1:]...)
	for _, line := range bytes.Split(b[:end], []byte{'\n'}) {
		if err := l.line(line); err != nil {
			return err
		}
	}
	return nil
}

func (l *runLog) line(line []byte) error {
	if !bytes.Contains(line, []byte(`"msg":"run `)) {
		return nil
	}
	var rec struct{ Msg, Target, Reason, Message string }
	if json.Unmarshal(line, &rec) != nil {
		return nil
	}
	switch rec.Msg {
	case "run finished":
		l.finished[rec.Target]++
		l.total++
	case "run failed":
		return fmt.Errorf("driftd probe of %s failed: %s: %s", rec.Target, rec.Reason, strings.TrimSpace(rec.Message))
	}
	return nil
}
