package scheduler

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestStopWaitsForRuns(t *testing.T) {
	var removed, waitingRan atomic.Int32
	var cancelled atomic.Bool
	started := make(chan struct{}, 1)
	release := make(chan struct{})
	s := New(Options{Concurrency: 1, Rand: seeded(), OnRemoved: func(string) { removed.Add(1) }})
	s.Reconcile([]Job{
		{Name: "busy", Schedule: every(time.Hour), Run: func(ctx context.Context) {
			started <- struct{}{}
			select {
			case <-release:
			case <-ctx.Done():
				cancelled.Store(true)
			}
		}},
		{Name: "waiting", Schedule: every(time.Hour), Run: func(context.Context) { waitingRan.Add(1) }},
	})
	if err := s.Trigger("busy"); err != nil {
		t.Fatal(err)
	}
	receive(t, "the run", started)
	if err := s.Trigger("waiting"); err != nil { // queued behind busy for the one slot
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	stopped := make(chan error, 1)
	go func() { stopped <- s.Stop(ctx) }()
	receive(t, "Stop to close dispatching", s.quit)
	select {
	case err := <-stopped:
		t.Fatalf("Stop returned %v while a run was in flight", err)
	case <-time.After(100 * time.Millisecond):
	}
	close(release)
	if err := receive(t, "Stop", stopped); err != nil {
		t.Errorf("Stop = %v, want nil", err)
	}
	if cancelled.Load() {
		t.Error("Stop cancelled a run although its ctx allowed it to finish")
	}
	if waitingRan.Load() != 0 {
		t.Error("a run still waiting for a slot started after Stop")
	}
	if n := removed.Load(); n != 0 {
		t.Errorf("Stop called OnRemoved %d times; process exit is not removal", n)
	}
	if err := s.Stop(ctx); err != nil {
		t.Errorf("second Stop = %v, want nil", err)
	}
	if err := s.Trigger("busy"); !errors.Is(err, ErrStopped) {
		t.Errorf("Trigger after Stop = %v, want ErrStopped", err)
	}
	s.Reconcile(nil) // a no-op after Stop
	if n := removed.Load(); n != 0 {
		t.Errorf("Reconcile after Stop called OnRemoved %d times", n)
	}
	goleak.VerifyNone(t)
}

func TestStopCancelsOnExpiry(t *testing.T) {
	var removed atomic.Int32
	started := make(chan struct{}, 1)
	cancelled := make(chan struct{}, 1)
	s := New(Options{Rand: seeded(), OnRemoved: func(string) { removed.Add(1) }})
	s.Reconcile([]Job{{Name: "stuck", Schedule: every(time.Hour), Run: func(ctx context.Context) {
		started <- struct{}{}
		<-ctx.Done()
		cancelled <- struct{}{}
	}}})
	if err := s.Trigger("stuck"); err != nil {
		t.Fatal(err)
	}
	receive(t, "the run", started)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if err := s.Stop(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Stop = %v, want context.DeadlineExceeded", err)
	}
	select {
	case <-cancelled:
	default:
		t.Error("Stop returned before the cancelled run did")
	}
	if s.Running("stuck") {
		t.Error("Running = true after Stop")
	}
	if n := removed.Load(); n != 0 {
		t.Errorf("Stop called OnRemoved %d times; process exit is not removal", n)
	}
	goleak.VerifyNone(t)
}
