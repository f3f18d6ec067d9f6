//go:build unix

package scheduler

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestScaleLateness is the scheduler's share of DESIGN §14's scale budget
// (10,000 targets, p99 start lateness < 1 s): 10,000 jobs at @every 2s for
// about 6 s with a trivial Run, so every job runs about three times. It
// reports figures and asserts nothing about time; run it with
//
//	DRIFTD_BENCH=1 go test ./internal/scheduler/ -run TestScaleLateness -v
func TestScaleLateness(t *testing.T) {
	if os.Getenv("DRIFTD_BENCH") != "1" {
		t.Skip("set DRIFTD_BENCH=1 to run the scale test")
	}
	const jobs, period, span = 10_000, 2 * time.Second, 6 * time.Second
	var mu sync.Mutex
	lateness := make([]time.Duration, 0, jobs*int(span/period+1))
	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)

	s := New(Options{Concurrency: 64, OnLate: func(_ string, late time.Duration) {
		mu.Lock()
		lateness = append(lateness, late)
		mu.Unlock()
	}})
	list := make([]Job, jobs)
	for i := range list {
		list[i] = Job{Name: fmt.Sprintf("target-%05d", i), Schedule: every(period), Run: func(context.Context) {}}
	}
	cpu0, wall0 := cpuTime(t), time.Now()
	s.Reconcile(list)
	list = nil
	time.Sleep(span)
	cpu, wall := cpuTime(t)-cpu0, time.Since(wall0)
	var after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&after)
	if err := s.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}

	mu.Lock()
	defer mu.Unlock()
	slices.Sort(lateness)
	q := func(p float64) time.Duration { return lateness[int(p*float64(len(lateness)-1))] }
	report := fmt.Sprintf("scale: %d jobs @every %v for %v: %d runs, start lateness p50 %v p99 %v max %v; "+
		"CPU %.1f%% of %d cores; heap %.0f B/job",
		jobs, period, span.Round(time.Second), len(lateness), q(0.5), q(0.99), q(1),
		100*cpu.Seconds()/wall.Seconds()/float64(runtime.NumCPU()), runtime.NumCPU(),
		float64(int64(after.HeapAlloc)-int64(before.HeapAlloc))/jobs)
	t.Log(report)
	fmt.Println(report)
}

// cpuTime is the process's user plus system CPU time so far.
func cpuTime(t *testing.T) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
