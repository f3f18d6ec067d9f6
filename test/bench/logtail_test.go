package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRunLog(t *testing.T) {
	path := filepath.Join(t.TempDir(), "driftd.log")
	write := func(s string) {
		f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := f.WriteString(s); err != nil {
			t.Fatal(err)
		}
	}
	l := newRunLog(path)
	write(`{"level":"INFO","msg":"listening","address":"127.0.0.1:1"}` + "\n" +
		`{"level":"INFO","msg":"run finished","target":"t00001","success":true}` + "\n" +
		`{"level":"INFO","msg":"run fin`) // a line still being written
	if err := l.update(); err != nil {
		t.Fatal(err)
	}
	if l.total != 1 {
		t.Fatalf("total %d, want 1", l.total)
	}
	write(`ished","target":"t00001"}` + "\n")
	if err := l.update(); err != nil {
		t.Fatal(err)
	}
	if l.total != 2 || l.finished["t00001"] != 2 {
		t.Fatalf("total %d, t00001 %d; want 2, 2", l.total, l.finished["t00001"])
	}
	write(`{"level":"WARN","msg":"run failed","target":"t00002","reason":"timeout","message":"slow"}` + "\n")
	if err := l.update(); err == nil || !strings.Contains(err.Error(), "t00002") {
		t.Fatalf("a failed run was not an error: %v", err)
	}
}
