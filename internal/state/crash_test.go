package state

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/driftd/driftd/internal/catalogue"
)

const crashEnv = "DRIFTD_STATE_CRASH_DIR"

// TestKill9MidWrite kills a process that saves in a loop at arbitrary
// points; whatever survives must load cleanly (DESIGN §16).
func TestKill9MidWrite(t *testing.T) {
	if dir := os.Getenv(crashEnv); dir != "" {
		saveForever(dir)
		return
	}
	if testing.Short() {
		t.Skip("spawns processes")
	}
	dir := t.TempDir()
	for round := range 5 {
		cmd := exec.Command(os.Args[0], "-test.run=^TestKill9MidWrite$", "-test.count=1")
		cmd.Env = append(os.Environ(), crashEnv+"="+dir)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		waitFor(t, filepath.Join(dir, "orders.json"))
		time.Sleep(time.Duration(5+round*7) * time.Millisecond)
		_ = cmd.Process.Kill() // SIGKILL: no deferred cleanup runs
		_ = cmd.Wait()

		s := openStore(t, dir)
		st, err := s.Load("orders")
		if err != nil {
			t.Fatalf("round %d: state after kill -9: %v", round, err)
		}
		if _, err := s.LoadSnapshot("orders"); err != nil {
			var ce *CorruptError
			if errors.As(err, &ce) {
				t.Fatalf("round %d: snapshot after kill -9: %v", round, err)
			}
		}
		if st.ToolHashes.Len() == 0 {
			t.Fatalf("round %d: state lost its hashes", round)
		}
	}
}

func waitFor(t *testing.T, path string) {
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if _, err := os.Stat(path); err == nil {
			return
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatal("the writer never saved")
}

// saveForever alternates between two large served sets and saves each run.
func saveForever(dir string) {
	s, err := Open(dir)
	if err != nil {
		os.Exit(2)
	}
	sets := [2][]Tool{}
	for i := range 400 {
		sets[0] = append(sets[0], mkTool(fmt.Sprintf("tool_%03d", i)))
		sets[1] = append(sets[1], mkTool(fmt.Sprintf("tool_%03d", i), "a"))
	}
	st, _ := s.Load("orders")
	for i := 0; ; i++ {
		f := mkFinding("orders", catalogue.DriftToolMissing, fmt.Sprint(i%3))
		st, _ = apply(testCaches, st, time.Now(), []catalogue.Finding{f}, sets[i%2], true, true, 50, func() ([]Tool, error) { return s.LoadSnapshot("orders") })
		_ = s.Save(st)
	}
}
