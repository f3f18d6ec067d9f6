package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/driftd/driftd/internal/benchgen"
)

// A fleet target serves its manifest's tools, the first one changed when
// it drifts, and a target without a manifest is refused.
func TestFleetTools(t *testing.T) {
	dir := t.TempDir()
	drifting, steady := -1, -1
	for i := 0; drifting < 0 || steady < 0; i++ {
		if benchgen.Fleet(i).Drifting {
			drifting = max(drifting, i)
		} else {
			steady = max(steady, i)
		}
	}
	for _, i := range []int{drifting, steady} {
		if err := os.WriteFile(filepath.Join(dir, strconv.Itoa(i)+".json"), benchgen.FleetManifest(i), 0o644); err != nil {
			t.Fatal(err)
		}
		tools, err := fleetTools(dir, i)
		if err != nil {
			t.Fatal(err)
		}
		if len(tools) != benchgen.Fleet(i).Tools {
			t.Fatalf("target %d serves %d tools, want %d", i, len(tools), benchgen.Fleet(i).Tools)
		}
		want := benchgen.FleetTool(i, 0, i == drifting)
		if !bytes.Equal(tools[0], want) {
			t.Errorf("target %d (drifting %v) serves the wrong first tool", i, i == drifting)
		}
		if !bytes.Equal(tools[len(tools)-1], benchgen.FleetTool(i, len(tools)-1, false)) {
			t.Errorf("target %d: last tool is not as declared", i)
		}
	}
	if _, err := fleetTools(dir, drifting+steady+1); err == nil {
		t.Error("a target without a manifest was served")
	}
}
