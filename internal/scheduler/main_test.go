package scheduler

import (
	"context"
	"math/rand/v2"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// every is "@every d" without robfig's rounding to whole seconds.
type every time.Duration

func (d every) Next(t time.Time) time.Time { return t.Add(time.Duration(d)) }

// waitFor polls cond. The deadline is generous on purpose: these tests run
// under -race on loaded CI machines and must never flake on timing.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// newScheduler returns a scheduler that is stopped, its runs cancelled, when
// the test ends.
func newScheduler(t *testing.T, opts Options) *Scheduler {
	t.Helper()
	if opts.Rand == nil {
		opts.Rand = seeded()
	}
	s := New(opts)
	t.Cleanup(func() {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_ = s.Stop(ctx)
	})
	return s
}

// seeded is a fixed offset source: a test whose hourly job must not fire
// on its own then never meets an unlucky offset near zero.
func seeded() *rand.Rand { return rand.New(rand.NewPCG(7, 11)) }

// raise stores n in max if it is larger.
func raise(max *atomic.Int32, n int32) {
	for {
		old := max.Load()
		if n <= old || max.CompareAndSwap(old, n) {
			return
		}
	}
}

// receive waits for a value on ch, failing the test if none comes.
func receive[T any](t *testing.T, what string, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(15 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
		panic("unreachable")
	}
}
