package main

import (
	"os"
	"testing"
	"time"
)

func TestParseStatCPU(t *testing.T) {
	// A command name with a space and a parenthesis; utime 150, stime 25.
	stat := "1234 (my (odd) cmd) S 1 1234 1234 0 -1 4194560 100 0 0 0 150 25 0 0 20 0 4 0 100 1000 200"
	got, err := parseStatCPU(stat)
	if err != nil {
		t.Fatal(err)
	}
	if want := 175 * clockTick; got != want {
		t.Fatalf("got %v, want %v", got, want)
	}
	if _, err := parseStatCPU("1234 (x) S 1"); err == nil {
		t.Fatal("short stat accepted")
	}
}

func TestProcSelf(t *testing.T) {
	if _, err := procCPU(os.Getpid()); err != nil {
		t.Fatal(err)
	}
	if rss, err := procRSS(os.Getpid()); err != nil || rss <= 0 {
		t.Fatalf("rss %d, %v", rss, err)
	}
}

func TestMedian(t *testing.T) {
	if got := median([]time.Duration{3, 1, 2}); got != 2 {
		t.Errorf("odd: %v", got)
	}
	if got := median([]float64{4, 1, 2, 3}); got != 2.5 {
		t.Errorf("even: %v", got)
	}
	if got := median([]int{}); got != 0 {
		t.Errorf("empty: %v", got)
	}
}
